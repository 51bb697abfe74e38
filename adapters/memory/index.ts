import { emptyDataset, type Dataset } from '../../src/ports/dataset.js'
import type { ReferenceAdapterPorts } from '../../src/ports/index.js'
import type { ChangeEvent } from '../../src/ports/write-storage.js'
import { MemoryAuditStore } from './memory-audit-store.js'
import { MemoryIdempotencyStore } from './memory-idempotency-store.js'
import { MemoryKeyStore } from './memory-key-store.js'
import { MemoryModuleRegistry } from './memory-module-registry.js'
import { MemoryStorage } from './memory-storage.js'
import { MemoryUsageStore } from './memory-usage-store.js'
import { MemoryWebhookStore } from './memory-webhook-store.js'
import { MemoryWriteStorage } from './memory-write-storage.js'

/**
 * The ports over in-process memory, plus the fixture-loading hook (`loadDataset` replaces the
 * stored data with a deep copy). The ports keep their concrete classes so tests can reach in.
 */
export interface MemoryAdapter extends ReferenceAdapterPorts {
  storage: MemoryStorage
  keyStore: MemoryKeyStore
  modules: MemoryModuleRegistry
  writes: MemoryWriteStorage
  idempotency: MemoryIdempotencyStore
  webhooks: MemoryWebhookStore
  /** The audit trail the key store and the webhook store both append to. */
  audit: MemoryAuditStore
  usage: MemoryUsageStore
  /** Change events recorded by writes, in order. */
  events: ChangeEvent[]
}

/**
 * Opens the in-memory reference adapter — for tests, demos and as the model of the contract.
 *
 * @example
 * const { storage, keyStore, modules, loadDataset } = createMemoryAdapter()
 * await loadDataset(generateDataset())
 */
export function createMemoryAdapter(dataset: Dataset = emptyDataset()): MemoryAdapter {
  const storage = new MemoryStorage(structuredClone(dataset))
  const modules = new MemoryModuleRegistry(storage.data.modules)
  const idempotency = new MemoryIdempotencyStore(new Map(), storage.gate)
  // One trail for both stores, so an entry and the change it describes are written together.
  const audit = new MemoryAuditStore()
  const webhooks = new MemoryWebhookStore(storage.gate, audit)
  const writes = new MemoryWriteStorage(storage, idempotency, webhooks)
  return {
    storage,
    keyStore: new MemoryKeyStore(new Map(), audit),
    modules,
    writes,
    idempotency,
    webhooks,
    audit,
    usage: new MemoryUsageStore(),
    events: writes.events,
    async loadDataset(next) {
      const copy = structuredClone(next)
      // The registry and the storage share one array of module rows.
      modules.rows.splice(0, modules.rows.length, ...copy.modules)
      Object.assign(storage.data, copy, { modules: modules.rows })
    },
    async close() {},
  }
}

export { MemoryKeyStore } from './memory-key-store.js'
export { MemoryModuleRegistry } from './memory-module-registry.js'
export { MemoryStorage } from './memory-storage.js'
export { MemoryIdempotencyStore } from './memory-idempotency-store.js'
export { MemoryWriteStorage } from './memory-write-storage.js'
export { MemoryWebhookStore } from './memory-webhook-store.js'
export { MemoryAuditStore } from './memory-audit-store.js'
export { MemoryUsageStore } from './memory-usage-store.js'
