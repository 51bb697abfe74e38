import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { webhookChannel } from '../../adapters/postgres/postgres-due-signal.js'
import { attemptRecord, changeEvent, endpointRecord, outcome } from '../../src/conformance/webhook-facts.js'
import { afterNow } from '../../src/conformance/write-facts.js'
import type { ClaimedDelivery } from '../../src/ports/webhook-store.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'

const SCHEMA = 'webhook_store'
const DELIVERIES = 200
const CLAIMERS = 4

/** Resolves once `check` holds, or fails after `ms`. */
async function eventually(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const quiet = (ms = 300) => new Promise((resolve) => setTimeout(resolve, ms))

// Issue 10: several instances share one Postgres; every due delivery goes to one dispatcher at a
// time, and a commit anywhere wakes every dispatcher through LISTEN/NOTIFY.
describePostgres('SqlWebhookStore on Postgres', () => {
  const database = useTestDatabase()
  let admin: pg.Pool
  let one: PostgresAdapter
  let two: PostgresAdapter
  const endpoint = endpointRecord('postgres: *', 1, ['*'])

  /** Backends of this database listening on the adapters' channel. */
  const listeners = async () => {
    const { rows } = await admin.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and query = $1`,
      [`listen ${pg.escapeIdentifier(webhookChannel(SCHEMA))}`],
    )
    return rows.map((row) => row.pid)
  }

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: database.current.url, max: 2 })
  })
  afterAll(async () => {
    await admin?.end()
  })

  beforeEach(async () => {
    await admin.query(`drop schema if exists ${SCHEMA} cascade`)
    one = await openPostgresAdapter({ connectionString: database.current.url }, { schema: SCHEMA })
    two = await openPostgresAdapter({ connectionString: database.current.url }, { schema: SCHEMA })
    await one.webhooks.createEndpoint(endpoint)
  })
  afterEach(async () => {
    await one?.close()
    await two?.close()
  })

  it(`hands each of ${DELIVERIES} deliveries to exactly one of ${CLAIMERS} concurrent claimers on two instances`, async () => {
    const events = Array.from({ length: DELIVERIES }, (_, n) => changeEvent(`postgres: race ${n}`, 1, 'todos.created', n, n % 50))
    await one.writes.transaction(async (tx) => {
      for (const event of events) await tx.recordEvent(event)
    })
    const claimers = Array.from({ length: CLAIMERS }, (_, index) => (index % 2 === 0 ? one : two).webhooks)
    const claimedBy = await Promise.all(
      claimers.map(async (store) => {
        const mine: ClaimedDelivery[] = []
        for (;;) {
          const batch = await store.claimDue(afterNow(1_000), afterNow(60_000), 7)
          if (batch.length === 0) return mine
          mine.push(...batch)
        }
      }),
    )
    const ids = claimedBy.flat().map((claim) => claim.delivery_id)
    expect(ids.length, 'claims in all').toBe(DELIVERIES)
    expect(new Set(ids).size, 'distinct deliveries claimed').toBe(DELIVERIES)
    expect(new Set(claimedBy.flat().map((claim) => claim.event.id)), 'every event claimed').toEqual(new Set(events.map((event) => event.id)))
    expect(claimedBy.flat().every((claim) => claim.attempt === 1), 'each claim is the first attempt').toBe(true)
    expect(await one.webhooks.claimDue(afterNow(1_000), afterNow(60_000), 100), 'claimDue once all are claimed').toEqual([])
  })

  it('NOTIFY wakes a subscriber on another instance after a commit, never after a rollback', async () => {
    const wakes: number[] = []
    const stop = await two.webhooks.subscribeDue!(() => wakes.push(Date.now()))
    try {
      await expect(
        one.writes.transaction(async (tx) => {
          await tx.recordEvent(changeEvent('postgres: rolled back', 1, 'todos.created', 1))
          throw new Error('rolled back')
        }),
      ).rejects.toThrow('rolled back')
      await one.writes.transaction((tx) => tx.recordEvent(changeEvent('postgres: no endpoint', 2, 'todos.created', 1)))
      await quiet()
      expect(wakes, 'wakes after a rollback and after a commit without deliveries').toEqual([])

      await one.writes.transaction((tx) => tx.recordEvent(changeEvent('postgres: committed', 1, 'todos.created', 1)))
      await eventually(() => wakes.length === 1, 'the wake after the commit')

      // A host's own Kysely on the database, without the schema: publish applies it.
      const host = new Kysely<any>({ dialect: new PostgresDialect({ pool: admin }) })
      await host.transaction().execute((trx) => one.webhooks.publish(trx, [changeEvent('postgres: host', 1, 'shifts.created', 2)]))
      await eventually(() => wakes.length === 2, 'the wake after the host commit')
      const page = await one.webhooks.listDeliveries(endpoint.id, { limit: 10 })
      expect(page.deliveries.map((delivery) => delivery.event_type)).toEqual(['shifts.created', 'todos.created'])
    } finally {
      await stop()
    }
  })

  it('a record announces freed places to another instance only when asked, in one statement (successes on a healthy endpoint) or a transaction', async () => {
    const events = Array.from({ length: 6 }, (_, n) => changeEvent(`postgres: announce ${n}`, 1, 'todos.created', n, n))
    await one.writes.transaction(async (tx) => {
      for (const event of events) await tx.recordEvent(event)
    })
    const claims = await one.webhooks.claimDue(afterNow(1_000), afterNow(60_000), 10)
    expect(claims).toHaveLength(6)
    const [a, b, c, d, e, f] = claims as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery, ClaimedDelivery, ClaimedDelivery, ClaimedDelivery]
    const success = (claim: ClaimedDelivery) => ({ claim, outcome: outcome.delivered(attemptRecord(1, 1_100, 204)), now: afterNow(1_100) })
    const failure = (claim: ClaimedDelivery) => ({ claim, outcome: outcome.retryAt(attemptRecord(1, 1_100, 500), 60_000), now: afterNow(1_100) })
    const wakes: string[] = []
    const stop = await two.webhooks.subscribeDue!(() => wakes.push('woken'))
    try {
      // The endpoint is healthy: successes take the one statement.
      await one.webhooks.finishAttempts!([success(a)], false)
      await quiet()
      expect(wakes, 'wakes after a record not asked to announce').toEqual([])
      await one.webhooks.finishAttempts!([success(b), success(c)], true)
      await eventually(() => wakes.length === 1, 'the wake after a batch of successes')
      // A failure, then a batch on the endpoint it left failing: both in a transaction.
      await one.webhooks.finishAttempts!([failure(d)], true)
      await eventually(() => wakes.length === 2, 'the wake after a batch of one failure')
      await one.webhooks.finishAttempts!([success(e), failure(f)], false)
      await quiet()
      expect(wakes, 'no wake after a transaction not asked to announce').toHaveLength(2)
    } finally {
      await stop()
    }
    const page = await one.webhooks.listDeliveries(endpoint.id, { limit: 10 })
    const byEvent = new Map(page.deliveries.map((delivery) => [delivery.event_id, delivery]))
    const states = claims.map((claim) => {
      const delivery = byEvent.get(claim.event.id)!
      return [delivery.status, delivery.attempts_made.map((attempt) => attempt.status_code)]
    })
    expect(states, 'each delivery as its finish said').toEqual([
      ['delivered', [204]],
      ['delivered', [204]],
      ['delivered', [204]],
      ['pending', [500]],
      ['delivered', [204]],
      ['pending', [500]],
    ])
  })

  it('a claim commits without waiting for the disk; records and the host’s session keep their durable commit', async () => {
    // The host's pool of one connection, watched: right after each transaction begins, on that
    // transaction, what its commit will do (`show synchronous_commit`).
    const pool = new pg.Pool({ connectionString: database.current.url, max: 1 })
    const begun: Array<{ claim: boolean; synchronousCommit: string }> = []
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (config: unknown, ...rest: unknown[]) => Promise<pg.QueryResult>
      ;(client as unknown as { query: typeof query }).query = (config, ...rest) => {
        const answer = query(config, ...rest)
        const text = typeof config === 'string' ? config : (config as { text?: string }).text
        if (text !== undefined && /^\s*begin\b/i.test(text)) {
          void answer
            .then(() => query('show synchronous_commit'))
            .then((shown) => begun.push({ claim: text.includes('pg_advisory_xact_lock'), synchronousCommit: shown.rows[0].synchronous_commit }))
        }
        return answer
      }
    })
    const watched = await openPostgresAdapter({ pool }, { schema: SCHEMA })
    begun.length = 0 // opening checked the migrations
    try {
      const events = Array.from({ length: 2 }, (_, n) => changeEvent(`postgres: durability ${n}`, 1, 'todos.created', n, n))
      await one.writes.transaction(async (tx) => {
        for (const event of events) await tx.recordEvent(event)
      })
      const claims = await watched.webhooks.claimDue(afterNow(1_000), afterNow(60_000), 10)
      expect(claims).toHaveLength(2)
      const [a, b] = claims as [ClaimedDelivery, ClaimedDelivery]
      // A success on a healthy endpoint is recorded in one statement (no transaction, the session's
      // durable commit); a failure in a transaction.
      await watched.webhooks.finishAttempts!([{ claim: a, outcome: outcome.delivered(attemptRecord(1, 1_100, 204)), now: afterNow(1_100) }], false)
      await watched.webhooks.finishAttempts!([{ claim: b, outcome: outcome.retryAt(attemptRecord(1, 1_100, 500), 60_000), now: afterNow(1_100) }], false)
      expect(begun, 'transactions begun: the claim’s, then the failure’s record').toEqual([
        { claim: true, synchronousCommit: 'off' },
        { claim: false, synchronousCommit: 'on' },
      ])
      expect((await pool.query('show synchronous_commit')).rows[0].synchronous_commit, 'the host’s session afterwards').toBe('on')
      const page = await one.webhooks.listDeliveries(endpoint.id, { limit: 10 })
      expect(page.deliveries.map((delivery) => delivery.status).sort(), 'both records committed').toEqual(['delivered', 'pending'])
    } finally {
      await watched.close()
      await pool.end()
    }
  })

  it('listens again after losing its connection, and wakes the dispatcher for what it may have missed', async () => {
    const wakes: string[] = []
    const stop = await two.webhooks.subscribeDue!(() => wakes.push('woken'))
    try {
      const [pid] = await listeners()
      expect(pid, 'the listening backend').toBeTypeOf('number')
      await admin.query('select pg_terminate_backend($1)', [pid])
      await eventually(() => wakes.length === 1, 'the wake after listening again')
      await one.writes.transaction((tx) => tx.recordEvent(changeEvent('postgres: after the reconnect', 1, 'todos.created', 1)))
      await eventually(() => wakes.length === 2, 'the wake after a commit, on the new connection')
    } finally {
      await stop()
    }
    expect(await listeners(), 'listeners after stop').toEqual([])
  })

  it('close() ends the listeners still subscribed', async () => {
    await one.webhooks.subscribeDue!(() => {})
    await two.webhooks.subscribeDue!(() => {})
    await two.webhooks.subscribeDue!(() => {})
    expect((await listeners()).length, 'listening backends').toBe(3)
    await two.close()
    expect((await listeners()).length, 'after closing the second instance').toBe(1)
    await one.close()
    expect(await listeners(), 'after closing both').toEqual([])
  })
})
