import type { AuditStore } from './audit-store.js'
import type { Dataset } from './dataset.js'
import type { IdempotencyStore } from './idempotency-store.js'
import type { InvalidationFeed } from './invalidation-feed.js'
import type { KeyStore } from './key-store.js'
import type { ModuleRegistry, ModuleSwitchboard } from './module-registry.js'
import type { Storage } from './storage.js'
import type { UsageStore } from './usage-store.js'
import type { WebhookStore } from './webhook-store.js'
import type { WriteStorage } from './write-storage.js'

export type { ModuleSwitchboard } from './module-registry.js'

/** The ports the plugin reads and writes through: what an adapter hands to `app.register(workforceApi, …)`. */
export interface WorkforcePorts {
  storage: Storage
  keyStore: KeyStore
  modules: ModuleRegistry
  /** Write access; without it the API is read-only. Requires `idempotency`. */
  writes?: WriteStorage
  /** Required with `writes`. */
  idempotency?: IdempotencyStore
  /** Tells this instance of key and module changes made anywhere (else the cache TTLs bound staleness). */
  invalidations?: InvalidationFeed
  /**
   * Webhook endpoints, the event outbox and deliveries. With it (and `webhookOptions.secretKey`)
   * the plugin delivers events; without it, events are recorded by `writes` and never sent.
   */
  webhooks?: WebhookStore
  /** The admin API's audit trail (read side; the key and webhook stores write it). Needed by `workforceAdmin`. */
  audit?: AuditStore
  /** Requests per key per hour, counted by the public API and shown by the admin API. */
  usage?: UsageStore
}

/**
 * What every reference adapter (memory, SQLite, Postgres) returns: every port, plus the
 * fixture and lifecycle hooks that tests, the CLI and the conformance suite use.
 * One type, so the three adapters cannot drift apart.
 */
export interface ReferenceAdapterPorts extends Required<Omit<WorkforcePorts, 'invalidations'>>, Pick<WorkforcePorts, 'invalidations'> {
  modules: ModuleSwitchboard
  /** Fixture hook: stores `dataset` with its ids unchanged. */
  loadDataset(dataset: Dataset): Promise<void>
  /** Releases what the adapter opened; what the host handed in stays open. */
  close(): Promise<void>
}

/**
 * The plugin's ports out of an adapter that carries more (fixture hooks, `close`, its driver),
 * so a host can hand an adapter over whole.
 *
 * @example
 * const adapter = await openSqliteAdapter({ filename: 'workforce.db' })
 * await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter) })
 */
export function portsOf(adapter: WorkforcePorts): WorkforcePorts {
  const { storage, keyStore, modules, writes, idempotency, invalidations, webhooks, audit, usage } = adapter
  return {
    storage,
    keyStore,
    modules,
    writes,
    idempotency,
    ...(invalidations === undefined ? {} : { invalidations }),
    ...(webhooks === undefined ? {} : { webhooks }),
    ...(audit === undefined ? {} : { audit }),
    ...(usage === undefined ? {} : { usage }),
  }
}
