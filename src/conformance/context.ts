import type { AuditStore } from '../ports/audit-store.js'
import type { IdempotencyStore } from '../ports/idempotency-store.js'
import type { KeyStore } from '../ports/key-store.js'
import type { ModuleRegistry } from '../ports/module-registry.js'
import type { Storage } from '../ports/storage.js'
import type { UsageStore } from '../ports/usage-store.js'
import type { WebhookStore } from '../ports/webhook-store.js'
import type { ChangeEvent, WriteStorage } from '../ports/write-storage.js'
import type { Dataset } from '../ports/dataset.js'
import { createExpectedAnswers, type ExpectedAnswers } from './expected.js'
import type { EdgeIds } from './fixture.js'
import type { ConformanceSubject, ConformanceSupports } from './subject.js'

/**
 * What every group gets: the fixture, the expected answers derived from it, the declared
 * capabilities, and the subject of the running test (a new one per test).
 */
export interface ConformanceContext {
  /** The adapter's name, for messages. */
  readonly name: string
  /** The dataset loaded into every subject before each test. Read it; never mutate it. */
  readonly fixture: Dataset
  /** Ids of the fixture's hand-made edge rows. */
  readonly edges: EdgeIds
  readonly expected: ExpectedAnswers
  readonly supports: Required<ConformanceSupports>
  /** The subject of the running test. Only valid inside `it` (and hooks). */
  subject(): ConformanceSubject
  storage(): Storage
  /** The subject's key store; fails with an explanation if `supports.keyStore` lies. */
  keyStore(): KeyStore
  /** The subject's module registry; fails with an explanation if `supports.modules` lies. */
  modules(): ModuleRegistry
  /** The subject's write storage; fails with an explanation if `supports.writes` lies. */
  writes(): WriteStorage
  /** The subject's idempotency store; fails with an explanation if `supports.idempotency` lies. */
  idempotency(): IdempotencyStore
  /** The committed change events, through the subject's `readEvents` hook; fails if `supports.events` lies. */
  readEvents(): Promise<ChangeEvent[]>
  /** The subject's webhook store; fails with an explanation if `supports.webhooks` lies. */
  webhooks(): WebhookStore
  /** The subject's audit store; fails with an explanation if `supports.audit` lies. */
  audit(): AuditStore
  /** The subject's usage store; fails with an explanation if `supports.usage` lies. */
  usage(): UsageStore
  /**
   * Runs `work` in a host transaction (the subject's `hostTransaction`, else `writes.transaction`
   * with the `WriteTransaction` as the handle): commits if it resolves, rolls back if it throws.
   */
  hostTransaction<T>(work: (handle: unknown) => Promise<T>): Promise<T>
}

export function createContext(options: {
  name: string
  fixture: Dataset
  edges: EdgeIds
  supports: Required<ConformanceSupports>
  current: () => ConformanceSubject | undefined
}): ConformanceContext {
  const { name, fixture, edges, supports, current } = options
  const subject = () => {
    const value = current()
    if (value === undefined) throw new Error('conformance suite: no subject outside a test (create() failed or was not awaited)')
    return value
  }
  return {
    name,
    fixture,
    edges,
    expected: createExpectedAnswers(fixture),
    supports,
    subject,
    storage: () => subject().storage,
    keyStore() {
      const { keyStore } = subject()
      if (keyStore === undefined) {
        throw new Error(`${name}: supports.keyStore is true (the default) but create() returned no keyStore; provide one or declare supports: { keyStore: false }`)
      }
      return keyStore
    },
    modules() {
      const { modules } = subject()
      if (modules === undefined) {
        throw new Error(`${name}: supports.modules is true (the default) but create() returned no modules; provide one or declare supports: { modules: false }`)
      }
      return modules
    },
    writes() {
      const { writes } = subject()
      if (writes === undefined) {
        throw new Error(`${name}: supports.writes is true (the default) but create() returned no writes; provide one or declare supports: { writes: false }`)
      }
      return writes
    },
    idempotency() {
      const { idempotency } = subject()
      if (idempotency === undefined) {
        throw new Error(`${name}: supports.idempotency is true (the default) but create() returned no idempotency; provide one or declare supports: { idempotency: false }`)
      }
      return idempotency
    },
    async readEvents() {
      const current = subject()
      if (current.readEvents === undefined) {
        throw new Error(
          `${name}: supports.events is true (the default when writes are supported) but create() returned no readEvents; provide readEvents() or declare supports: { events: false }`,
        )
      }
      return current.readEvents()
    },
    webhooks() {
      const { webhooks } = subject()
      if (webhooks === undefined) {
        throw new Error(
          `${name}: supports.webhooks is true (the default when writes are supported) but create() returned no webhooks; provide a WebhookStore or declare supports: { webhooks: false }`,
        )
      }
      return webhooks
    },
    audit() {
      const { audit } = subject()
      if (audit === undefined) {
        throw new Error(
          `${name}: supports.audit is true (the default when a key store is supported) but create() returned no audit; provide an AuditStore or declare supports: { audit: false }`,
        )
      }
      return audit
    },
    usage() {
      const { usage } = subject()
      if (usage === undefined) {
        throw new Error(`${name}: supports.usage is true (the default) but create() returned no usage; provide a UsageStore or declare supports: { usage: false }`)
      }
      return usage
    },
    hostTransaction(work) {
      const current = subject()
      if (current.hostTransaction !== undefined) return current.hostTransaction(work)
      if (current.writes === undefined) {
        throw new Error(`${name}: the webhook groups need writes or a hostTransaction hook to publish events in a transaction`)
      }
      return current.writes.transaction((tx) => work(tx))
    },
  }
}
