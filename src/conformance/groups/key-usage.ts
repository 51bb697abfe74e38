import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { UsageIncrement, UsageRow } from '../../ports/usage-store.js'
import type { ConformanceGroup } from '../group.js'
import { typed } from './value-fidelity.js'

const HOUR_MS = 60 * 60 * 1000
const MINUTE_MS = 60 * 1000
/** The start of a UTC hour; the suite's hours are counted from it. */
const HOUR_0 = new Date('2027-02-03T04:00:00.000Z')

/** The start of hour `n` after `HOUR_0` (negative: before). */
function hour(n: number): Date {
  return new Date(HOUR_0.getTime() + n * HOUR_MS)
}

/** An instant `minutes` into hour 0 (with milliseconds, so a column that drops them shows). */
function minute(minutes: number): Date {
  return new Date(HOUR_0.getTime() + minutes * MINUTE_MS + 123)
}

/** Counts of one key for one hour; only `requests` unless more are given. */
function increment(keyId: string, companyId: number, hourIndex: number, counts: Partial<Omit<UsageIncrement, 'key_id' | 'company_id' | 'hour'>> = {}): UsageIncrement {
  return {
    company_id: companyId,
    key_id: keyId,
    hour: hour(hourIndex),
    requests: 1,
    client_errors: 0,
    server_errors: 0,
    rate_limited: 0,
    last_rate_limited_at: null,
    not_modified: 0,
    ...counts,
  }
}

/** A row as failure messages show it, every value with its runtime type. */
function facts(row: UsageRow): string {
  return [
    `${typed(row.hour)} ${row.key_id} (company ${typed(row.company_id)})`,
    `requests ${typed(row.requests)}, 304 ${typed(row.not_modified)}, 4xx ${typed(row.client_errors)}, 5xx ${typed(row.server_errors)}, 429 ${typed(row.rate_limited)}`,
    `last 429 ${typed(row.last_rate_limited_at)}`,
  ].join('; ')
}

const KEY_A = 'aaaaaaaaaaaaaaa1'
const KEY_B = 'bbbbbbbbbbbbbbb2'
const KEY_C = 'ccccccccccccccc3'

/**
 * Requests per key per hour (src/ports/usage-store.ts): `add` adds to the stored counts per
 * (key, hour), `not_modified` included, across calls, within a batch and under concurrent calls; `last_rate_limited_at`
 * keeps the later instant; `hourly` reads one company's hours since an instant, ordered.
 */
export const keyUsage: ConformanceGroup = {
  title: 'key usage',
  requires: ['usage'],
  define(ctx) {
    it('add is additive per (key, hour), every count (not_modified too), across calls and within one batch; hourly reads the sums back exactly', async () => {
      const usage = ctx.usage()
      await usage.add([increment(KEY_A, 1, 0, { requests: 5, client_errors: 2, server_errors: 1, rate_limited: 1, last_rate_limited_at: minute(10), not_modified: 1 })])
      await usage.add([
        increment(KEY_A, 1, 0, { requests: 3, client_errors: 1, not_modified: 2 }),
        increment(KEY_A, 1, 0, { requests: 2, server_errors: 2, not_modified: 1 }),
        increment(KEY_B, 1, 0, { requests: 7, not_modified: 7 }),
        increment(KEY_A, 1, 1, { requests: 1_000_000, client_errors: 999_999, rate_limited: 999_999, last_rate_limited_at: new Date(hour(1).getTime() + 59 * MINUTE_MS + 999), not_modified: 500_000 }),
      ])
      await usage.add([])
      const expected: UsageRow[] = [
        increment(KEY_A, 1, 0, { requests: 10, client_errors: 3, server_errors: 3, rate_limited: 1, last_rate_limited_at: minute(10), not_modified: 4 }),
        increment(KEY_B, 1, 0, { requests: 7, not_modified: 7 }),
        increment(KEY_A, 1, 1, { requests: 1_000_000, client_errors: 999_999, rate_limited: 999_999, last_rate_limited_at: new Date(hour(1).getTime() + 59 * MINUTE_MS + 999), not_modified: 500_000 }),
      ]
      const rows = await usage.hourly(1, hour(0))
      expect(rows.map(facts), 'hourly(1, hour 0): the sums, with runtime types').toEqual(expected.map(facts))
      expect(rows, 'hourly(1, hour 0)').toEqual(expected)
    })

    it('last_rate_limited_at keeps the later of the stored and the added instant; null changes nothing', async () => {
      const usage = ctx.usage()
      const last = async (keyId: string) => {
        const row = (await usage.hourly(1, hour(0))).find((candidate) => candidate.key_id === keyId)
        return row === undefined ? 'no row' : row.last_rate_limited_at
      }
      const seen: Record<string, string> = {}
      await usage.add([increment(KEY_A, 1, 0, { rate_limited: 1, last_rate_limited_at: minute(30) })])
      seen['first: minute 30'] = typed(await last(KEY_A))
      await usage.add([increment(KEY_A, 1, 0, { rate_limited: 1, last_rate_limited_at: minute(20) })])
      seen['then an earlier one, minute 20'] = typed(await last(KEY_A))
      await usage.add([increment(KEY_A, 1, 0)])
      seen['then null'] = typed(await last(KEY_A))
      await usage.add([increment(KEY_A, 1, 0, { rate_limited: 1, last_rate_limited_at: minute(45) })])
      seen['then a later one, minute 45'] = typed(await last(KEY_A))
      await usage.add([increment(KEY_B, 1, 0)])
      seen['another key, null first'] = typed(await last(KEY_B))
      await usage.add([increment(KEY_B, 1, 0, { rate_limited: 1, last_rate_limited_at: minute(5) })])
      seen['then minute 5'] = typed(await last(KEY_B))
      await usage.add([
        increment(KEY_C, 1, 0, { rate_limited: 1, last_rate_limited_at: minute(50) }),
        increment(KEY_C, 1, 0, { rate_limited: 1, last_rate_limited_at: minute(40) }),
        increment(KEY_C, 1, 0),
      ])
      seen['one batch: minute 50, minute 40, null'] = typed(await last(KEY_C))
      expect(seen, 'last_rate_limited_at after each add').toEqual({
        'first: minute 30': typed(minute(30)),
        'then an earlier one, minute 20': typed(minute(30)),
        'then null': typed(minute(30)),
        'then a later one, minute 45': typed(minute(45)),
        'another key, null first': typed(null),
        'then minute 5': typed(minute(5)),
        'one batch: minute 50, minute 40, null': typed(minute(50)),
      })
    })

    it('hourly lists one company\'s hours at or after since, ordered by hour, then key_id', async () => {
      const usage = ctx.usage()
      // Added out of order, one batch and one call at a time.
      await usage.add([increment(KEY_B, 1, 2, { requests: 4 }), increment(KEY_C, 2, 0, { requests: 9 }), increment(KEY_A, 1, -1, { requests: 2 })])
      await usage.add([increment(KEY_B, 1, 0, { requests: 3 })])
      await usage.add([increment(KEY_A, 1, 2, { requests: 6 }), increment(KEY_A, 1, 0, { requests: 1 }), increment(KEY_C, 2, 1, { requests: 8 })])
      const order = (rows: UsageRow[]) => rows.map((row) => `${row.hour.toISOString()} ${row.key_id} ${row.requests}`)
      const at = (n: number, key: string, requests: number) => `${hour(n).toISOString()} ${key} ${requests}`
      const answers = {
        'hourly(1, hour -1)': order(await usage.hourly(1, hour(-1))),
        'hourly(1, hour 0)': order(await usage.hourly(1, hour(0))),
        'hourly(1, 1 ms after hour 0)': order(await usage.hourly(1, new Date(hour(0).getTime() + 1))),
        'hourly(1, hour 3)': order(await usage.hourly(1, hour(3))),
        'hourly(2, hour -1)': order(await usage.hourly(2, hour(-1))),
        'hourly(3, hour -10), a company without usage': order(await usage.hourly(3, hour(-10))),
      }
      expect(answers, 'each answer: hour, key, requests').toEqual({
        'hourly(1, hour -1)': [at(-1, KEY_A, 2), at(0, KEY_A, 1), at(0, KEY_B, 3), at(2, KEY_A, 6), at(2, KEY_B, 4)],
        'hourly(1, hour 0)': [at(0, KEY_A, 1), at(0, KEY_B, 3), at(2, KEY_A, 6), at(2, KEY_B, 4)],
        'hourly(1, 1 ms after hour 0)': [at(2, KEY_A, 6), at(2, KEY_B, 4)],
        'hourly(1, hour 3)': [],
        'hourly(2, hour -1)': [at(0, KEY_C, 9), at(1, KEY_C, 8)],
        'hourly(3, hour -10), a company without usage': [],
      })
    })

    it('10 concurrent add calls to the same key and hour lose no count', async () => {
      const usage = ctx.usage()
      await Promise.all(
        Array.from({ length: 10 }, (_, n) =>
          usage.add([
            increment(KEY_A, 1, 0, { requests: n + 1, client_errors: 1, rate_limited: 1, last_rate_limited_at: minute(n) }),
            increment(KEY_B, 1, 0, { requests: 1, not_modified: 1 }),
          ]),
        ),
      )
      const rows = await usage.hourly(1, hour(0))
      expect(rows.map(facts), 'hourly(1, hour 0) after 10 concurrent adds').toEqual(
        [
          increment(KEY_A, 1, 0, { requests: 55, client_errors: 10, rate_limited: 10, last_rate_limited_at: minute(9) }),
          increment(KEY_B, 1, 0, { requests: 10, not_modified: 10 }),
        ].map(facts),
      )
    })
  },
}
