import type { FastifyBaseLogger } from 'fastify'
import { describe, expect, it, vi } from 'vitest'
import type { Clock } from '../../src/ports/clock.js'
import type { UsageIncrement, UsageRow, UsageStore } from '../../src/ports/usage-store.js'
import { UsageMeter } from '../../src/usage/usage-meter.js'

const HOUR_0 = Date.parse('2027-02-03T04:00:00.000Z')
const KEY = 'aaaaaaaaaaaaaaa1'

/** A usage store that keeps a copy of every batch it was given, and fails while `failing` is set. */
class RecordingUsageStore implements UsageStore {
  readonly batches: UsageIncrement[][] = []
  failing: Error | undefined
  /** While set, `add` waits for it before answering (a flush in flight). */
  gate: Promise<void> | undefined

  async add(increments: readonly UsageIncrement[]): Promise<void> {
    await this.gate
    if (this.failing !== undefined) throw this.failing
    this.batches.push(increments.map((increment) => structuredClone(increment)))
  }

  async hourly(): Promise<UsageRow[]> {
    return []
  }
}

function meterWith(store: UsageStore, now = HOUR_0 + 60_000) {
  const clock: Clock = { now: () => now }
  const log = { warn: vi.fn() }
  return { meter: new UsageMeter(store, clock, log as unknown as FastifyBaseLogger), log }
}

/** One key's increment for hour 0 with the given counts, every other count 0. */
function counts(partial: Partial<UsageIncrement>): UsageIncrement {
  return { company_id: 1, key_id: KEY, hour: new Date(HOUR_0), requests: 0, client_errors: 0, server_errors: 0, rate_limited: 0, last_rate_limited_at: null, not_modified: 0, ...partial }
}

describe('UsageMeter', () => {
  it('counts a 304 as a request and as not_modified, not as a client error', async () => {
    const store = new RecordingUsageStore()
    const { meter } = meterWith(store)
    for (const status of [200, 304, 304, 404, 500]) meter.count(1, KEY, status)
    await meter.flush()
    expect(store.batches).toEqual([[counts({ requests: 5, not_modified: 2, client_errors: 1, server_errors: 1 })]])
  })

  it('keeps the not_modified count of a failed flush and adds it to what was counted meanwhile', async () => {
    const store = new RecordingUsageStore()
    const { meter, log } = meterWith(store)
    meter.count(1, KEY, 304)
    meter.count(1, KEY, 200)
    let open!: () => void
    store.gate = new Promise((resolve) => (open = resolve))
    store.failing = new Error('database down')
    const failed = meter.flush()
    // Counted while the first flush is in flight: the failed batch is restored onto this row.
    meter.count(1, KEY, 304)
    open()
    await failed
    expect(log.warn).toHaveBeenCalledOnce()
    expect(store.batches).toEqual([])
    store.gate = undefined
    store.failing = undefined
    await meter.flush()
    expect(store.batches).toEqual([[counts({ requests: 3, not_modified: 2 })]])
  })
})
