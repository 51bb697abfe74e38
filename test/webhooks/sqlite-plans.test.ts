import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteAdapter, type SqliteAdapter } from '../../adapters/sqlite/index.js'
import { attemptRecord, changeEvent, endpointRecord, outcome } from '../../src/conformance/webhook-facts.js'
import { afterNow } from '../../src/conformance/write-facts.js'

/** Deliveries waiting for the endpoint, all published in one transaction (so all due at one time). */
const BACKLOG = 300

/**
 * SQLite plans without statistics, and once chose an index that read the whole backlog for a
 * statement about four deliveries (docs/decisions.md, "Deliveries in batches"). A turn of the
 * dispatcher (a claim, then the record of its attempts) must find its rows by id or by an index
 * range bounded by the batch, however many deliveries wait: each statement it ran is planned
 * here (`EXPLAIN QUERY PLAN`) and the plan read.
 */
describe('SQLite webhook statements: a turn reads what it claims and records, not the backlog', () => {
  let adapter: SqliteAdapter
  /** Every statement the turn prepared, with its plan's steps. */
  const plans = new Map<string, string[]>()

  beforeAll(async () => {
    adapter = await openSqliteAdapter({ filename: ':memory:' })
    const { database } = adapter
    const prepare = database.prepare.bind(database)
    const seen = new Set<string>()
    // The adapter's statement cache prepares each text once, through this.
    database.prepare = ((source: string) => (seen.add(source), prepare(source))) as typeof database.prepare

    const endpoint = endpointRecord('plans: one endpoint', 1, ['*'])
    await adapter.webhooks.createEndpoint(endpoint)
    await adapter.writes.transaction(async (tx) => {
      for (let n = 0; n < BACKLOG; n += 1) await tx.recordEvent(changeEvent(`plans: event ${n}`, 1, 'todos.created', n + 1))
    })
    seen.clear()
    const policy = { endpointLimit: 4, companyLimit: 16, troubledCompanyLimit: 8, slowBefore: afterNow(0) }
    const claims = await adapter.webhooks.claimDue(afterNow(1_000), afterNow(60_000), 4, policy)
    expect(claims).toHaveLength(4)
    const recorded = await adapter.webhooks.finishAttempts!(
      claims.map((claim) => ({ claim, outcome: outcome.delivered(attemptRecord(claim.attempt, 1_100, 204)), now: afterNow(1_100) })),
    )
    expect(recorded.every((answer) => answer !== null)).toBe(true)

    for (const source of seen) {
      if (!source.includes('wfa_webhook_deliveries') || /^\s*(begin|commit|rollback)/i.test(source)) continue
      const parameters = new Array((source.match(/\?/g) ?? []).length).fill(null)
      const steps = prepare(`explain query plan ${source}`).all(...parameters) as Array<{ detail: string }>
      plans.set(source, steps.map((step) => step.detail))
    }
  })
  afterAll(async () => {
    await adapter?.close()
  })

  it('finds the deliveries it claims and records by their ids, never by every row of a status', () => {
    // Every statement of the turn but the ranking: the claim's update, the record's update.
    const byIds = [...plans].filter(([source]) => !source.includes('with flight as'))
    expect(byIds.filter(([source]) => /^\s*update "wfa_webhook_deliveries"/.test(source))).toHaveLength(2)
    for (const [source, steps] of byIds) {
      const deliveries = steps.filter((step) => /^(SCAN|SEARCH) (wfa_webhook_deliveries|d) /.test(step))
      expect(deliveries, source).toEqual(deliveries.map((step) => `SEARCH ${step.split(' ')[1]} USING INTEGER PRIMARY KEY (rowid=?)`))
    }
  })

  it('ranks the endpoint’s first due deliveries by two index ranges that end at the cutoff, ties included', () => {
    const ranking = [...plans].find(([source]) => source.includes('with flight as'))
    expect(ranking).toBeDefined()
    const [, steps] = ranking!
    // At the cutoff's due time, up to its id: deliveries of one transaction share their due time,
    // and a range bounded by the time alone read every one of them.
    expect(steps).toContain('SEARCH d USING COVERING INDEX wfa_webhook_deliveries_endpoint_due (endpoint_id=? AND next_attempt_at=? AND id<?)')
    expect(steps).toContain('SEARCH d USING COVERING INDEX wfa_webhook_deliveries_endpoint_due (endpoint_id=? AND next_attempt_at<?)')
  })

  it('writes each ranking’s size in its text: a bound LIMIT made SQLite prepare the ranking again at every claim', () => {
    // SQLite plans with a bound LIMIT's value, so binding one expires the statement: about 0.7 ms
    // of preparing per claim, where running the ranking takes 25 µs (docs/decisions.md).
    const rankings = [...plans.keys()].filter((source) => source.includes('with flight as'))
    // The read before the first claim (one) and the claim (four).
    expect(rankings.map((source) => /limit (\S+)\s*$/.exec(source)?.[1]).sort()).toEqual(['1', '4'])
  })
})
