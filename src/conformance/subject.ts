import type { Dataset } from '../ports/dataset.js'
import type { WorkforcePorts } from '../ports/index.js'
import type { ChangeEvent } from '../ports/write-storage.js'

/**
 * One fresh adapter instance under test. `create()` returns a new one before every test,
 * and the suite closes it after the test, so no test sees another test's data.
 *
 * Only `storage` is always required; every other port is required unless its `supports` flag
 * is `false`, so an adapter with fewer ports can still be tested.
 */
export interface ConformanceSubject extends Pick<WorkforcePorts, 'storage'>, Partial<Omit<WorkforcePorts, 'storage'>> {
  /**
   * Test hook, required unless `supports.events` is `false`: every change event committed so
   * far, in the order recorded. The `WriteTransaction` port only writes events (the webhook
   * outbox will read them), so the suite needs this to see what `recordEvent` stored.
   * Return fresh copies, with the port's types (`Date`s, `number`s).
   */
  readEvents?(): Promise<ChangeEvent[]>
  /**
   * Test hook, optional: runs `work` in a transaction of the host's own and commits it if
   * `work` resolves, rolls it back if it throws; `handle` is what the adapter's
   * `WebhookStore.publish` takes (for the SQL adapters a Kysely transaction). The webhook
   * groups publish through it to check that events commit and roll back with the host's change.
   * Without it they publish inside `writes.transaction`, passing the `WriteTransaction` as the
   * handle (what the memory adapter's `publish` takes).
   *
   * @example
   * hostTransaction: (work) => adapter.db.transaction().execute(work)
   */
  hostTransaction?<T>(work: (handle: unknown) => Promise<T>): Promise<T>
  /**
   * Fixture-loading hook: stores `dataset` (companies, people, memberships, every resource
   * with its private columns, to-do lists, module rows) with its ids unchanged. Called once per
   * test on a freshly created, empty subject, with a copy the subject may keep or mutate.
   */
  loadDataset(dataset: Dataset): Promise<void>
  /** Releases what `create()` opened (connections, files). */
  close(): Promise<void>
}

/**
 * Optional capabilities, declared up front like `abstract-level`'s `supports` manifest.
 * A group whose capability is declared `false` is not registered at all (never skipped by
 * name); a capability declared `true` that the subject does not provide fails loudly.
 */
export interface ConformanceSupports {
  /** The subject provides a `KeyStore`. Default `true`. */
  keyStore?: boolean
  /** The key store implements the optional `touchLastUsed`. Default: the value of `keyStore`. */
  touchLastUsed?: boolean
  /** The subject provides a `ModuleRegistry`. Default `true`. */
  modules?: boolean
  /** The subject provides a `WriteStorage`. Default `true`. */
  writes?: boolean
  /** The subject provides an `IdempotencyStore`. Default `true`. */
  idempotency?: boolean
  /** The subject provides `readEvents()`. Default: the value of `writes` (events are recorded by writes). */
  events?: boolean
  /**
   * The subject provides a `WebhookStore` (`webhooks`) whose outbox `writes` feed. Default: the
   * value of `writes` (deliveries are fanned out from recorded events).
   */
  webhooks?: boolean
  /**
   * The subject provides an `AuditStore` (`audit`) that reads back the entries its key store
   * (and webhook store, when `webhooks`) are handed. Default: the value of `keyStore`.
   */
  audit?: boolean
  /** The subject provides a `UsageStore` (`usage`). Default `true`. */
  usage?: boolean
}

export interface ConformanceOptions {
  /** Names the adapter in test titles, e.g. `'sqlite'` or `'my-app (own schema)'`. */
  name: string
  /** Opens a new, empty subject. Called before every test. */
  create: () => Promise<ConformanceSubject>
  supports?: ConformanceSupports
}

export type Capability = keyof ConformanceSupports

/** `supports` with every default applied. */
export function resolveSupports(supports: ConformanceSupports = {}): Required<ConformanceSupports> {
  const keyStore = supports.keyStore ?? true
  const writes = supports.writes ?? true
  return {
    keyStore,
    touchLastUsed: keyStore && (supports.touchLastUsed ?? true),
    modules: supports.modules ?? true,
    writes,
    idempotency: supports.idempotency ?? true,
    events: writes && (supports.events ?? true),
    webhooks: writes && (supports.webhooks ?? true),
    audit: keyStore && (supports.audit ?? true),
    usage: supports.usage ?? true,
  }
}

/**
 * Flags that only make sense with another one: `touchLastUsed` is a key-store method, events
 * are recorded by writes, and so are the events that webhooks deliver; the audit trail is
 * written by the key store (and the webhook store).
 */
const DEPENDS_ON: Partial<Record<Capability, Capability>> = { touchLastUsed: 'keyStore', events: 'writes', webhooks: 'writes', audit: 'keyStore' }

/** Fails at suite definition, naming the option, instead of in every test. */
export function checkConformanceOptions(options: ConformanceOptions): void {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('describeStorageConformance: options must be an object { name, create, supports? }')
  }
  if (typeof options.name !== 'string' || options.name === '') {
    throw new TypeError('describeStorageConformance: option "name" must be a non-empty string')
  }
  if (typeof options.create !== 'function') {
    throw new TypeError('describeStorageConformance: option "create" must be a function returning a new subject')
  }
  const known: readonly string[] = ['keyStore', 'touchLastUsed', 'modules', 'writes', 'idempotency', 'events', 'webhooks', 'audit', 'usage']
  const supports: Record<string, unknown> = { ...options.supports }
  for (const [flag, value] of Object.entries(supports)) {
    if (!known.includes(flag)) {
      throw new TypeError(`describeStorageConformance: unknown supports flag "${flag}"; known flags: ${known.join(', ')}`)
    }
    if (typeof value !== 'boolean') throw new TypeError(`describeStorageConformance: supports.${flag} must be a boolean`)
  }
  for (const [flag, needed] of Object.entries(DEPENDS_ON)) {
    if (supports[flag] === true && supports[needed] === false) {
      throw new TypeError(`describeStorageConformance: supports.${flag} is true but supports.${needed} is false; ${flag} needs ${needed}`)
    }
  }
}
