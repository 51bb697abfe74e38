import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import type { KeyStore } from '../../src/ports/key-store.js'
import type { ModuleRegistry, PlatformModule } from '../../src/ports/module-registry.js'
import type { Storage } from '../../src/ports/storage.js'
import type { Dataset } from '../../src/seed/dataset.js'

/** What every adapter returns, as far as the read-API tests need it. */
export interface ReadAdapter {
  storage: Storage
  keyStore: KeyStore
  modules: ModuleRegistry & { setActive(companyId: number, module: PlatformModule, active: boolean): Promise<void> }
  loadDataset(dataset: Dataset): Promise<void>
  close(): Promise<void>
}

/** Opens a fresh, empty adapter; every call gives an independent store. */
export interface ReadAdapterFactory {
  name: string
  open(): Promise<ReadAdapter>
}

/**
 * The adapters the HTTP suites run against (`describe.each(READ_ADAPTERS)`).
 * Append an entry to run every HTTP test on another backend too.
 */
export const READ_ADAPTERS: ReadAdapterFactory[] = [
  { name: 'memory', open: async () => createMemoryAdapter() },
  { name: 'sqlite', open: () => openSqliteAdapter({ filename: ':memory:' }) },
]
