import { randomUUID } from 'node:crypto'
import type { AuditEntry } from '../../src/ports/audit-store.js'
import type {
  DeliveryBacklog,
  AttemptFinish,
  AttemptOutcome,
  ClaimedDelivery,
  ClaimPolicy,
  FeedPage,
  FeedQuery,
  FinishedAttempt,
  DeliveryPage,
  DeliveryQuery,
  ReplayPeriod,
  ReplayResult,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookDisabledReason,
  WebhookEndpointChanges,
  WebhookEndpointRecord,
  WebhookStore,
} from '../../src/ports/webhook-store.js'
import type { ChangeEvent, WriteTransaction } from '../../src/ports/write-storage.js'
import { HEALTHY, nextEndpointHealth } from '../../src/webhooks/breaker.js'
import type { TransactionGate } from '../transaction-gate.js'
import { MemoryAuditStore } from './memory-audit-store.js'

/** A company's events feed: positions are given as events are recorded, and transactions here run one at a time, so recording order is commit order. */
interface MemoryFeed {
  head: number
  /** Events at or below this position may have been purged. */
  horizon: number
  /** In position order. */
  entries: Array<{ id: string; position: number; type: string; payload: string }>
}

interface DeliveryRow extends WebhookDeliveryRecord {
  lease: string | null
  attempt_log: WebhookAttemptRecord[]
}

/**
 * The reference `WebhookStore` in process memory. Every operation runs behind the storage's
 * transaction gate, so a dispatcher never sees a delivery whose transaction may still roll back.
 * Events are fanned out by `MemoryWriteTransaction.recordEvent`, which calls `fanOut` with its undo list.
 * Audit entries go to `audit` (shared with the key store) in the same step as their change.
 */
export class MemoryWebhookStore implements WebhookStore {
  readonly endpoints = new Map<string, WebhookEndpointRecord>()
  /** Recorded events by `evt_` id: the outbox. */
  readonly events = new Map<string, ChangeEvent>()
  readonly deliveries: DeliveryRow[] = []
  #nextDeliveryId = 1
  readonly #feeds = new Map<number, MemoryFeed>()
  readonly #listeners = new Set<() => void>()

  constructor(
    private readonly gate: TransactionGate,
    readonly audit: MemoryAuditStore = new MemoryAuditStore(),
  ) {}

  /**
   * Stores `event` and a pending delivery for each enabled endpoint subscribed to it, pushing
   * the steps that undo them. Called inside a write transaction.
   * @returns how many deliveries were created
   */
  fanOut(event: ChangeEvent, undo: Array<() => void>): number {
    this.events.set(event.id, { ...event })
    undo.push(() => this.events.delete(event.id))
    const feed = this.#feedOf(event.company_id)
    feed.head += 1
    const entry = { id: event.id, position: feed.head, type: event.type, payload: event.payload }
    feed.entries.push(entry)
    // A rolled-back event leaves its position unused: positions may have gaps, never repeats.
    undo.push(() => feed.entries.splice(feed.entries.indexOf(entry), 1))
    let created = 0
    for (const endpoint of this.endpoints.values()) {
      if (endpoint.company_id !== event.company_id || endpoint.status !== 'enabled') continue
      if (!endpoint.events.includes('*') && !endpoint.events.includes(event.type)) continue
      const row = this.#newDelivery(endpoint.id, event, event.occurred_at)
      undo.push(() => this.deliveries.splice(this.deliveries.indexOf(row), 1))
      created += 1
    }
    return created
  }

  /** Tells subscribers that deliveries became due (called after a transaction that created some commits). */
  wake(): void {
    for (const listener of this.#listeners) listener()
  }

  createEndpoint(endpoint: WebhookEndpointRecord, audit?: AuditEntry): Promise<void> {
    return this.gate.exclusive(async () => {
      if (this.endpoints.has(endpoint.id)) throw new Error(`Webhook endpoint ${endpoint.id} already exists`)
      this.audit.check(audit)
      this.endpoints.set(endpoint.id, copyEndpoint(endpoint))
      this.audit.record(audit)
    })
  }

  getEndpoint(id: string): Promise<WebhookEndpointRecord | null> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(id)
      return endpoint === undefined ? null : copyEndpoint(endpoint)
    })
  }

  listEndpoints(companyId: number): Promise<WebhookEndpointRecord[]> {
    return this.gate.exclusive(async () =>
      [...this.endpoints.values()]
        .filter((endpoint) => endpoint.company_id === companyId)
        .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id))
        .map(copyEndpoint),
    )
  }

  updateEndpoint(id: string, changes: WebhookEndpointChanges, now: Date, audit?: AuditEntry): Promise<WebhookEndpointRecord | null> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(id)
      if (endpoint === undefined) return null
      this.audit.check(audit)
      const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined))
      Object.assign(endpoint, structuredClone(given), { updated_at: now })
      this.audit.record(audit)
      return copyEndpoint(endpoint)
    })
  }

  enableEndpoint(id: string, now: Date, audit?: AuditEntry): Promise<boolean> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(id)
      if (endpoint === undefined || endpoint.status === 'enabled') return false
      this.audit.check(audit)
      Object.assign(endpoint, { status: 'enabled', disabled_reason: null, ...HEALTHY, updated_at: now })
      this.audit.record(audit)
      return true
    })
  }

  disableEndpoint(id: string, reason: WebhookDisabledReason, now: Date, audit?: AuditEntry): Promise<boolean> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(id)
      if (endpoint === undefined || endpoint.status === 'disabled') return false
      this.audit.check(audit)
      Object.assign(endpoint, { status: 'disabled', disabled_reason: reason, updated_at: now })
      for (const row of this.deliveries) {
        if (row.endpoint_id === id && row.status === 'pending') Object.assign(row, { status: 'failed', next_attempt_at: null, lease: null, updated_at: now })
      }
      this.audit.record(audit)
      return true
    })
  }

  deleteEndpoint(id: string, audit?: AuditEntry): Promise<boolean> {
    return this.gate.exclusive(async () => {
      if (!this.endpoints.has(id)) return false
      this.audit.check(audit)
      this.endpoints.delete(id)
      for (let index = this.deliveries.length - 1; index >= 0; index -= 1) {
        if (this.deliveries[index]?.endpoint_id === id) this.deliveries.splice(index, 1)
      }
      this.audit.record(audit)
      return true
    })
  }

  async publish(transaction: unknown, events: readonly ChangeEvent[]): Promise<void> {
    const tx = transaction as Partial<WriteTransaction> | null
    if (typeof tx?.recordEvent !== 'function') {
      throw new TypeError('MemoryWebhookStore.publish: pass the WriteTransaction of adapter.writes.transaction()')
    }
    for (const event of events) await tx.recordEvent(event)
  }

  claimDue(now: Date, leaseUntil: Date, limit: number, policy?: ClaimPolicy): Promise<ClaimedDelivery[]> {
    return this.gate.exclusive(async () => {
      const due = this.#fairDue(now, policy).slice(0, Math.max(0, limit))
      return due.map((row) => {
        const lease = randomUUID()
        Object.assign(row, { attempts: row.attempts + 1, next_attempt_at: leaseUntil, lease, updated_at: now })
        const { id, type, company_id, payload } = this.events.get(row.event_id) as ChangeEvent
        return {
          delivery_id: row.id,
          lease,
          attempt: row.attempts,
          event: { id, type, company_id, payload },
          endpoint: copyEndpoint(this.endpoints.get(row.endpoint_id) as WebhookEndpointRecord),
        }
      })
    })
  }

  finishAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Promise<FinishedAttempt | null> {
    return this.gate.exclusive(async () => this.#finish(claim, outcome, now))
  }

  async finishAttempts(finishes: readonly AttemptFinish[], wake = false): Promise<Array<FinishedAttempt | null>> {
    // One step behind the gate, in order: the reference for what the SQL store does in one transaction.
    const answers = await this.gate.exclusive(async () => finishes.map(({ claim, outcome, now }) => this.#finish(claim, outcome, now)))
    if (wake) this.wake()
    return answers
  }

  #finish(claim: ClaimedDelivery, outcome: AttemptOutcome, now: Date): FinishedAttempt | null {
    const row = this.deliveries.find((candidate) => candidate.id === claim.delivery_id)
    if (row === undefined || row.status !== 'pending' || row.lease !== claim.lease) return null
    row.attempt_log.push({ ...outcome.attempt })
    const { next } = outcome
    Object.assign(row, { status: next.status, next_attempt_at: next.status === 'pending' ? next.at : null, lease: null, updated_at: now })
    const endpoint = this.endpoints.get(row.endpoint_id)
    if (endpoint === undefined) return { opened: false, closed: false, health: HEALTHY }
    const { failing_since, consecutive_failures, paused_until, pause_ms } = endpoint
    const finished = nextEndpointHealth({ failing_since, consecutive_failures, paused_until, pause_ms }, outcome.attempt.succeeded, outcome.breaker, now)
    Object.assign(endpoint, finished.health)
    return structuredClone(finished)
  }

  listDeliveries(endpointId: string, page: DeliveryQuery): Promise<DeliveryPage> {
    return this.gate.exclusive(async () => {
      const rows = this.deliveries
        .filter(
          (row) =>
            row.endpoint_id === endpointId &&
            (page.before === undefined || row.id < page.before) &&
            (page.status === undefined || row.status === page.status) &&
            (page.event_type === undefined || row.event_type === page.event_type),
        )
        .sort((a, b) => b.id - a.id)
      return { deliveries: rows.slice(0, page.limit).map(withAttempts), has_more: rows.length > page.limit }
    })
  }

  redeliver(endpointId: string, eventId: string, now: Date, audit?: AuditEntry): Promise<boolean> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(endpointId)
      const event = this.events.get(eventId)
      if (endpoint === undefined || event === undefined || event.company_id !== endpoint.company_id) return false
      this.audit.check(audit)
      const row = this.deliveries.find((candidate) => candidate.endpoint_id === endpointId && candidate.event_id === eventId)
      if (row === undefined) this.#newDelivery(endpointId, event, now)
      else Object.assign(row, { status: 'pending', attempts: 0, next_attempt_at: now, lease: null, updated_at: now })
      this.audit.record(audit)
      return true
    })
  }

  recover(endpointId: string, since: Date, now: Date, audit?: AuditEntry): Promise<number> {
    return this.gate.exclusive(async () => {
      const failed = this.deliveries.filter((row) => row.endpoint_id === endpointId && row.status === 'failed' && row.created_at >= since)
      if (failed.length === 0) return 0
      this.audit.check(audit)
      for (const row of failed) Object.assign(row, { status: 'pending', attempts: 0, next_attempt_at: now, lease: null, updated_at: now })
      this.audit.record(audit)
      return failed.length
    })
  }

  replay(endpointId: string, period: ReplayPeriod, now: Date, audit?: AuditEntry): Promise<ReplayResult> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(endpointId)
      if (endpoint === undefined) return { count: 0, more: false }
      const types = new Set(period.types)
      const existing = new Map(this.deliveries.filter((row) => row.endpoint_id === endpointId).map((row) => [row.event_id, row]))
      // The events Map keeps recording order; the stable sort keeps it among equal instants.
      const candidates = [...this.events.values()]
        .filter(
          (event) =>
            event.company_id === endpoint.company_id &&
            types.has(event.type) &&
            event.occurred_at >= period.since &&
            event.occurred_at < period.until &&
            // Never delivered to it, or only as a failed delivery.
            [undefined, 'failed'].includes(existing.get(event.id)?.status),
        )
        .sort((a, b) => a.occurred_at.getTime() - b.occurred_at.getTime())
      const chosen = candidates.slice(0, Math.max(0, period.limit))
      if (chosen.length === 0) return { count: 0, more: candidates.length > 0 }
      this.audit.check(audit)
      for (const event of chosen) {
        const row = existing.get(event.id)
        if (row === undefined) this.#newDelivery(endpointId, event, now)
        else Object.assign(row, { status: 'pending', attempts: 0, next_attempt_at: now, lease: null, updated_at: now })
      }
      this.audit.record(audit)
      return { count: chosen.length, more: candidates.length > chosen.length }
    })
  }

  async sendTest(endpointId: string, event: ChangeEvent, now: Date, audit?: AuditEntry): Promise<boolean> {
    const sent = await this.gate.exclusive(async () => {
      if (!this.endpoints.has(endpointId)) return false
      if (this.events.has(event.id)) throw new Error(`Event ${event.id} already exists`)
      this.audit.check(audit)
      // Not fanned out: no other endpoint, whatever it subscribes to, gets this event.
      this.events.set(event.id, { ...event })
      this.#newDelivery(endpointId, event, now)
      this.audit.record(audit)
      return true
    })
    if (sent) this.wake()
    return sent
  }

  eventPayload(endpointId: string, eventId: string): Promise<string | null> {
    return this.gate.exclusive(async () => {
      const delivered = this.deliveries.some((row) => row.endpoint_id === endpointId && row.event_id === eventId)
      return delivered ? (this.events.get(eventId)?.payload ?? null) : null
    })
  }

  deliveryBacklog(now: Date): Promise<DeliveryBacklog> {
    return this.gate.exclusive(async () => {
      let pending = 0
      let due = 0
      let oldestDueAt: Date | null = null
      for (const row of this.deliveries) {
        if (row.status !== 'pending') continue
        pending += 1
        const at = row.next_attempt_at
        if (at === null || at > now) continue
        due += 1
        if (oldestDueAt === null || at < oldestDueAt) oldestDueAt = at
      }
      return { pending, due, oldestDueAt }
    })
  }

  purgeFinished(before: Date, limit: number): Promise<number> {
    return this.gate.exclusive(async () => {
      let purged = 0
      for (let index = 0; index < this.deliveries.length && purged < limit; ) {
        const row = this.deliveries[index] as DeliveryRow
        if (row.status !== 'pending' && row.updated_at < before) {
          this.deliveries.splice(index, 1)
          purged += 1
        } else {
          index += 1
        }
      }
      const needed = new Set(this.deliveries.map((row) => row.event_id))
      for (const [id, event] of this.events) {
        if (purged >= limit) break
        if (event.occurred_at < before && !needed.has(id)) {
          this.events.delete(id)
          this.#forget(event)
          purged += 1
        }
      }
      return purged
    })
  }

  readFeed(companyId: number, query: FeedQuery): Promise<FeedPage> {
    return this.gate.exclusive(async () => {
      const feed = this.#feedOf(companyId)
      const after = query.after ?? feed.horizon
      if (after < feed.horizon) return { expired: true }
      const upper = Math.min(after + query.scan, feed.head)
      const types = new Set(query.types)
      const events: Array<{ position: number; payload: string }> = []
      for (let index = firstAfter(feed.entries, after); index < feed.entries.length && events.length < query.limit; index += 1) {
        const entry = feed.entries[index] as MemoryFeed['entries'][number]
        if (entry.position > upper) break
        if (types.has(entry.type)) events.push({ position: entry.position, payload: entry.payload })
      }
      const next = events.length === query.limit ? (events.at(-1)?.position ?? upper) : Math.max(after, upper)
      return { expired: false, events, next, has_more: next < feed.head, head: feed.head }
    })
  }

  feedHead(companyId: number): Promise<number> {
    return this.gate.exclusive(async () => this.#feedOf(companyId).head)
  }

  #feedOf(companyId: number): MemoryFeed {
    let feed = this.#feeds.get(companyId)
    if (feed === undefined) {
      feed = { head: 0, horizon: 0, entries: [] }
      this.#feeds.set(companyId, feed)
    }
    return feed
  }

  /** Takes a purged event out of its company's feed and moves the horizon over it: a cursor below it is expired. */
  #forget(event: ChangeEvent): void {
    const feed = this.#feeds.get(event.company_id)
    const index = feed?.entries.findIndex((entry) => entry.id === event.id) ?? -1
    if (feed === undefined || index < 0) return
    const [entry] = feed.entries.splice(index, 1)
    feed.horizon = Math.max(feed.horizon, entry?.position ?? 0)
  }

  async subscribeDue(wake: () => void): Promise<() => Promise<void>> {
    this.#listeners.add(wake)
    return async () => {
      this.#listeners.delete(wake)
    }
  }

  /**
   * Due deliveries in claim order, within `policy` (see `WebhookStore.claimDue`); the same
   * steps as the SQL adapter's claim query: in flight per endpoint, the endpoints that may take
   * one more, a rank per endpoint cut at its room, a rank per company and pool cut at its room,
   * then round-robin by company rank.
   */
  #fairDue(now: Date, policy: ClaimPolicy | undefined): DeliveryRow[] {
    const endpointLimit = policy?.endpointLimit ?? Infinity
    const poolLimit = (troubled: boolean) => (troubled ? (policy?.troubledCompanyLimit ?? Infinity) : (policy?.companyLimit ?? Infinity))
    const slowBefore = policy?.slowBefore.getTime() ?? -Infinity
    const flight = new Map<string, { inflight: number; slow: boolean }>()
    for (const row of this.deliveries) {
      if (row.status !== 'pending' || row.lease === null || (row.next_attempt_at as Date) <= now) continue
      const seen = flight.get(row.endpoint_id) ?? { inflight: 0, slow: false }
      flight.set(row.endpoint_id, { inflight: seen.inflight + 1, slow: seen.slow || row.updated_at.getTime() < slowBefore })
    }
    const troubledOf = (endpoint: WebhookEndpointRecord) =>
      endpoint.consecutive_failures > 0 || endpoint.paused_until !== null || (flight.get(endpoint.id)?.slow ?? false)
    const pools = new Map<string, number>()
    for (const [endpointId, { inflight }] of flight) {
      const endpoint = this.endpoints.get(endpointId)
      if (endpoint === undefined || endpoint.status !== 'enabled') continue
      const pool = `${endpoint.company_id}:${troubledOf(endpoint)}`
      pools.set(pool, (pools.get(pool) ?? 0) + inflight)
    }
    const byEndpoint = new Map<string, DeliveryRow[]>()
    for (const row of this.deliveries) {
      if (row.status !== 'pending' || (row.next_attempt_at as Date) > now) continue
      byEndpoint.set(row.endpoint_id, [...(byEndpoint.get(row.endpoint_id) ?? []), row])
    }
    const ranked: Array<{ row: DeliveryRow; pool: string; troubled: boolean; endpointRank: number }> = []
    for (const [endpointId, rows] of byEndpoint) {
      const endpoint = this.endpoints.get(endpointId)
      if (endpoint === undefined || endpoint.status !== 'enabled') continue
      const inflight = flight.get(endpointId)?.inflight ?? 0
      if (endpoint.paused_until !== null && (endpoint.paused_until > now || inflight > 0)) continue
      const troubled = troubledOf(endpoint)
      const perEndpoint = endpoint.paused_until !== null ? 1 : troubled ? (policy === undefined ? Infinity : 1) : endpointLimit
      const room = perEndpoint - inflight
      rows.sort(dueOrder)
      rows.slice(0, Math.max(0, room)).forEach((row, index) => ranked.push({ row, pool: `${endpoint.company_id}:${troubled}`, troubled, endpointRank: index + 1 }))
    }
    ranked.sort((a, b) => a.endpointRank - b.endpointRank || dueOrder(a.row, b.row))
    const companyRanks = new Map<string, number>()
    const fitting: Array<{ row: DeliveryRow; companyRank: number }> = []
    for (const { row, pool, troubled } of ranked) {
      const companyRank = (companyRanks.get(pool) ?? 0) + 1
      companyRanks.set(pool, companyRank)
      if (companyRank <= poolLimit(troubled) - (pools.get(pool) ?? 0)) fitting.push({ row, companyRank })
    }
    return fitting.sort((a, b) => a.companyRank - b.companyRank || dueOrder(a.row, b.row)).map(({ row }) => row)
  }

  #newDelivery(endpointId: string, event: ChangeEvent, due: Date): DeliveryRow {
    const row: DeliveryRow = {
      id: this.#nextDeliveryId++,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: event.type,
      status: 'pending',
      attempts: 0,
      next_attempt_at: due,
      created_at: due,
      updated_at: due,
      lease: null,
      attempt_log: [],
    }
    this.deliveries.push(row)
    return row
  }
}

/** Oldest due first, then by id. */
function dueOrder(a: DeliveryRow, b: DeliveryRow): number {
  return (a.next_attempt_at as Date).getTime() - (b.next_attempt_at as Date).getTime() || a.id - b.id
}

function copyEndpoint(endpoint: WebhookEndpointRecord): WebhookEndpointRecord {
  return structuredClone(endpoint)
}

function withAttempts(row: DeliveryRow) {
  const { lease: _lease, attempt_log, ...delivery } = row
  return { ...structuredClone(delivery), attempts_made: structuredClone(attempt_log) }
}

/** The index of the first entry with a position above `after` (entries are in position order). */
function firstAfter(entries: ReadonlyArray<{ position: number }>, after: number): number {
  let low = 0
  let high = entries.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((entries[middle] as { position: number }).position <= after) low = middle + 1
    else high = middle
  }
  return low
}
