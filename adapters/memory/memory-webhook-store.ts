import { randomUUID } from 'node:crypto'
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryPage,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookDisabledReason,
  WebhookEndpointChanges,
  WebhookEndpointRecord,
  WebhookStore,
} from '../../src/ports/webhook-store.js'
import type { ChangeEvent, WriteTransaction } from '../../src/ports/write-storage.js'
import type { TransactionGate } from '../transaction-gate.js'

interface DeliveryRow extends WebhookDeliveryRecord {
  lease: string | null
  attempt_log: WebhookAttemptRecord[]
}

/**
 * The reference `WebhookStore` in process memory. Every operation runs behind the storage's
 * transaction gate, so a dispatcher never sees a delivery whose transaction may still roll back.
 * Events are fanned out by `MemoryWriteTransaction.recordEvent`, which calls `fanOut` with its undo list.
 */
export class MemoryWebhookStore implements WebhookStore {
  readonly endpoints = new Map<string, WebhookEndpointRecord>()
  /** Recorded events by `evt_` id: the outbox. */
  readonly events = new Map<string, ChangeEvent>()
  readonly deliveries: DeliveryRow[] = []
  #nextDeliveryId = 1
  readonly #listeners = new Set<() => void>()

  constructor(private readonly gate: TransactionGate) {}

  /**
   * Stores `event` and a pending delivery for each enabled endpoint subscribed to it, pushing
   * the steps that undo them. Called inside a write transaction.
   * @returns how many deliveries were created
   */
  fanOut(event: ChangeEvent, undo: Array<() => void>): number {
    this.events.set(event.id, { ...event })
    undo.push(() => this.events.delete(event.id))
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

  createEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    return this.gate.exclusive(async () => {
      if (this.endpoints.has(endpoint.id)) throw new Error(`Webhook endpoint ${endpoint.id} already exists`)
      this.endpoints.set(endpoint.id, copyEndpoint(endpoint))
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

  updateEndpoint(id: string, changes: WebhookEndpointChanges, now: Date): Promise<WebhookEndpointRecord | null> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(id)
      if (endpoint === undefined) return null
      const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined))
      Object.assign(endpoint, structuredClone(given), { updated_at: now })
      return copyEndpoint(endpoint)
    })
  }

  enableEndpoint(id: string, now: Date): Promise<boolean> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(id)
      if (endpoint === undefined || endpoint.status === 'enabled') return false
      Object.assign(endpoint, { status: 'enabled', disabled_reason: null, failing_since: null, updated_at: now })
      return true
    })
  }

  disableEndpoint(id: string, reason: WebhookDisabledReason, now: Date): Promise<boolean> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(id)
      if (endpoint === undefined || endpoint.status === 'disabled') return false
      Object.assign(endpoint, { status: 'disabled', disabled_reason: reason, updated_at: now })
      for (const row of this.deliveries) {
        if (row.endpoint_id === id && row.status === 'pending') Object.assign(row, { status: 'failed', next_attempt_at: null, lease: null, updated_at: now })
      }
      return true
    })
  }

  deleteEndpoint(id: string): Promise<boolean> {
    return this.gate.exclusive(async () => {
      if (!this.endpoints.delete(id)) return false
      for (let index = this.deliveries.length - 1; index >= 0; index -= 1) {
        if (this.deliveries[index]?.endpoint_id === id) this.deliveries.splice(index, 1)
      }
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

  claimDue(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
    return this.gate.exclusive(async () => {
      const due = this.deliveries
        .filter((row) => row.status === 'pending' && (row.next_attempt_at as Date) <= now && this.endpoints.get(row.endpoint_id)?.status === 'enabled')
        .sort((a, b) => (a.next_attempt_at as Date).getTime() - (b.next_attempt_at as Date).getTime() || a.id - b.id)
        .slice(0, limit)
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

  finishAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Promise<boolean> {
    return this.gate.exclusive(async () => {
      const row = this.deliveries.find((candidate) => candidate.id === claim.delivery_id)
      if (row === undefined || row.status !== 'pending' || row.lease !== claim.lease) return false
      row.attempt_log.push({ ...outcome.attempt })
      const { next } = outcome
      Object.assign(row, { status: next.status, next_attempt_at: next.status === 'pending' ? next.at : null, lease: null, updated_at: now })
      const endpoint = this.endpoints.get(row.endpoint_id)
      if (endpoint !== undefined) endpoint.failing_since = outcome.attempt.succeeded ? null : (endpoint.failing_since ?? now)
      return true
    })
  }

  listDeliveries(endpointId: string, page: { limit: number; before?: number }): Promise<DeliveryPage> {
    return this.gate.exclusive(async () => {
      const rows = this.deliveries
        .filter((row) => row.endpoint_id === endpointId && (page.before === undefined || row.id < page.before))
        .sort((a, b) => b.id - a.id)
      return { deliveries: rows.slice(0, page.limit).map(withAttempts), has_more: rows.length > page.limit }
    })
  }

  redeliver(endpointId: string, eventId: string, now: Date): Promise<boolean> {
    return this.gate.exclusive(async () => {
      const endpoint = this.endpoints.get(endpointId)
      const event = this.events.get(eventId)
      if (endpoint === undefined || event === undefined || event.company_id !== endpoint.company_id) return false
      const row = this.deliveries.find((candidate) => candidate.endpoint_id === endpointId && candidate.event_id === eventId)
      if (row === undefined) this.#newDelivery(endpointId, event, now)
      else Object.assign(row, { status: 'pending', attempts: 0, next_attempt_at: now, lease: null, updated_at: now })
      return true
    })
  }

  recover(endpointId: string, since: Date, now: Date): Promise<number> {
    return this.gate.exclusive(async () => {
      let count = 0
      for (const row of this.deliveries) {
        if (row.endpoint_id !== endpointId || row.status !== 'failed' || row.created_at < since) continue
        Object.assign(row, { status: 'pending', attempts: 0, next_attempt_at: now, lease: null, updated_at: now })
        count += 1
      }
      return count
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
          purged += 1
        }
      }
      return purged
    })
  }

  async subscribeDue(wake: () => void): Promise<() => Promise<void>> {
    this.#listeners.add(wake)
    return async () => {
      this.#listeners.delete(wake)
    }
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

function copyEndpoint(endpoint: WebhookEndpointRecord): WebhookEndpointRecord {
  return structuredClone(endpoint)
}

function withAttempts(row: DeliveryRow) {
  const { lease: _lease, attempt_log, ...delivery } = row
  return { ...structuredClone(delivery), attempts_made: structuredClone(attempt_log) }
}
