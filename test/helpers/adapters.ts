import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import type { ReferenceAdapterPorts } from '../../src/ports/index.js'

/** What every adapter returns, as far as the read-API tests need it. */
export type ReadAdapter = Pick<ReferenceAdapterPorts, 'storage' | 'keyStore' | 'modules' | 'loadDataset' | 'close'>

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
