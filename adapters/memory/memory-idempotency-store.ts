import type { IdempotencyBegin, IdempotencyBeginResult, IdempotencyStore, StoredResponse } from '../../src/ports/idempotency-store.js'
import { TransactionGate, untilReadable } from '../transaction-gate.js'

/** One slot as the memory store keeps it. */
export interface MemoryIdempotencyRecord {
  slot: string
  company_id: number
  fingerprint: string
  state: 'in_flight' | 'completed'
  token: string
  lease_until: Date
  created_at: Date
  response: StoredResponse | null
}

/**
 * The reference `IdempotencyStore`: a `Map` the caller may pass in and inspect. Every method
 * first waits for an open write transaction to end (a completion written inside one must not
 * be seen before it commits), then runs without an await between its read and its write, so
 * `begin` is atomic in one process (and, being in memory, there is no other process).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  constructor(
    readonly records: Map<string, MemoryIdempotencyRecord> = new Map(),
    /** Shared with the write storage. */
    readonly gate: TransactionGate = new TransactionGate(),
  ) {}

  async begin(request: IdempotencyBegin): Promise<IdempotencyBeginResult> {
    await untilReadable(this.gate)
    const existing = this.records.get(request.slot)
    if (existing === undefined || existing.created_at.getTime() < request.expiredBefore.getTime()) {
      this.records.set(request.slot, {
        slot: request.slot,
        company_id: request.companyId,
        fingerprint: request.fingerprint,
        state: 'in_flight',
        token: request.token,
        lease_until: request.leaseUntil,
        created_at: request.now,
        response: null,
      })
      return { state: 'started' }
    }
    if (existing.fingerprint !== request.fingerprint) return { state: 'mismatch' }
    if (existing.state === 'completed') return { state: 'replay', response: structuredClone(existing.response as StoredResponse) }
    if (existing.lease_until.getTime() > request.now.getTime()) return { state: 'in_flight' }
    existing.token = request.token
    existing.lease_until = request.leaseUntil
    return { state: 'started' }
  }

  async complete(slot: string, token: string, response: StoredResponse): Promise<boolean> {
    await untilReadable(this.gate)
    return this.completeNow(slot, token, response) !== null
  }

  /**
   * Synchronous completion for the write transaction.
   * @returns the record as it was before (to undo on rollback), or `null` if `token` lost the slot.
   */
  completeNow(slot: string, token: string, response: StoredResponse): MemoryIdempotencyRecord | null {
    const record = this.records.get(slot)
    if (record === undefined || record.token !== token || record.state !== 'in_flight') return null
    const before = { ...record }
    record.state = 'completed'
    record.response = structuredClone(response)
    return before
  }

  async renew(slot: string, token: string, leaseUntil: Date): Promise<boolean> {
    await untilReadable(this.gate)
    const record = this.records.get(slot)
    if (record === undefined || record.token !== token || record.state !== 'in_flight') return false
    record.lease_until = leaseUntil
    return true
  }

  async release(slot: string, token: string): Promise<void> {
    await untilReadable(this.gate)
    const record = this.records.get(slot)
    if (record !== undefined && record.token === token && record.state === 'in_flight') this.records.delete(slot)
  }

  async purgeExpired(before: Date, limit: number): Promise<number> {
    await untilReadable(this.gate)
    let deleted = 0
    for (const [slot, record] of this.records) {
      if (deleted >= limit) break
      if (record.created_at.getTime() < before.getTime()) {
        this.records.delete(slot)
        deleted++
      }
    }
    return deleted
  }
}
