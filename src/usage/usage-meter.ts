import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../ports/clock.js'
import type { UsageIncrement, UsageStore } from '../ports/usage-store.js'

const HOUR_MS = 60 * 60 * 1000
/** How often counts are added to the store. A crash loses at most this much of the usage view. */
export const USAGE_FLUSH_INTERVAL_MS = 5_000
/** Keys × hours kept while the store cannot be reached; beyond it the oldest counts are dropped. */
const MAX_PENDING = 10_000

/**
 * Counts each key's answered requests per UTC hour in memory and adds them to the usage store
 * every few seconds. Counting is a map update on the request path; the store sees one additive
 * upsert per (key, hour) per flush, so any number of instances can count the same key.
 * A flush that fails keeps its counts for the next one.
 */
export class UsageMeter {
  readonly #pending = new Map<string, UsageIncrement>()
  #timer: NodeJS.Timeout | undefined
  #flushing: Promise<void> | undefined

  constructor(
    private readonly store: UsageStore,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  count(companyId: number, keyId: string, status: number): void {
    const now = this.clock.now()
    const hour = now - (now % HOUR_MS)
    const slot = `${keyId}\n${hour}`
    let row = this.#pending.get(slot)
    if (row === undefined) {
      if (this.#pending.size >= MAX_PENDING) this.#dropOldest()
      row = { company_id: companyId, key_id: keyId, hour: new Date(hour), requests: 0, client_errors: 0, server_errors: 0, rate_limited: 0, last_rate_limited_at: null, not_modified: 0 }
      this.#pending.set(slot, row)
    }
    row.requests += 1
    // A 304 answered a conditional GET from the client's own copy: a request, not an error.
    if (status === 304) row.not_modified += 1
    if (status >= 400 && status < 500) row.client_errors += 1
    if (status >= 500) row.server_errors += 1
    if (status === 429) {
      row.rate_limited += 1
      row.last_rate_limited_at = new Date(now)
    }
  }

  start(everyMs = USAGE_FLUSH_INTERVAL_MS): void {
    this.#timer = setInterval(() => void this.flush(), everyMs)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.flush()
  }

  /** Adds what was counted since the last flush; one flush at a time. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = undefined
    })
    return this.#flushing
  }

  async #flush(): Promise<void> {
    if (this.#pending.size === 0) return
    const batch = [...this.#pending.values()]
    this.#pending.clear()
    try {
      await this.store.add(batch)
    } catch (error) {
      this.log.warn({ err: error }, 'workforce-api: could not record key usage; keeping the counts for the next try')
      for (const row of batch) this.#restore(row)
    }
  }

  #restore(row: UsageIncrement): void {
    const slot = `${row.key_id}\n${row.hour.getTime()}`
    const newer = this.#pending.get(slot)
    if (newer === undefined) {
      if (this.#pending.size >= MAX_PENDING) return
      this.#pending.set(slot, row)
      return
    }
    newer.requests += row.requests
    newer.client_errors += row.client_errors
    newer.server_errors += row.server_errors
    newer.rate_limited += row.rate_limited
    newer.not_modified += row.not_modified
    newer.last_rate_limited_at ??= row.last_rate_limited_at
  }

  #dropOldest(): void {
    const oldest = this.#pending.keys().next().value
    if (oldest !== undefined) this.#pending.delete(oldest)
  }
}
