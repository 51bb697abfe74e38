import type { LightMyRequestResponse as Response } from 'fastify'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_QUERY_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS, openPostgresAdapter } from '../../adapters/postgres/index.js'
import type { Storage } from '../../src/ports/storage.js'
import { build, type TestApp } from '../helpers/build.js'
import { withoutSeek } from '../helpers/without-seek.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'

/**
 * Issue 22, "a slow query is not an outage", through the public API on Postgres with the
 * adapter's default bounds: a list whose statement runs past `statement_timeout` gets a 504
 * `query_timeout` (no Retry-After), and nothing else changes: other tenants, other lists of the
 * same tenant, and the same list once it is cheap again answer 200 at once. The statement is
 * made slow deterministically: another session holds an ACCESS EXCLUSIVE lock on `wfa_todos`,
 * so `GET /v1/todos` waits on the server until `statement_timeout` stops it.
 */
describePostgres('a list past statement_timeout on Postgres (issue 22)', () => {
  // Both ways the plugin serves a list: the adapter's seek path, and one COUNT and one OFFSET
  // query (an adapter without `seek`).
  describe.each([
    { path: 'seek', storage: (storage: Storage) => storage },
    { path: 'without seek', storage: withoutSeek },
  ])('lists served by $path', ({ path, storage }) => statementTimeoutSuite(storage, path === 'seek'))
})

/** `seekPath`: the adapter's seek path, whose answers are kept by version (issue 25). */
function statementTimeoutSuite(storageOf: (storage: Storage) => Storage, seekPath: boolean): void {
  const database = useTestDatabase()
  let t: TestApp
  let company1: string
  let company2: string
  let locker: pg.Client | undefined

  beforeAll(async () => {
    t = await build({ adapter: { name: 'postgres', open: () => openPostgresAdapter({ connectionString: database.current.url }) }, options: (adapter) => ({ storage: storageOf(adapter.storage) }) })
    company1 = await t.keyFor(1)
    company2 = await t.keyFor(2)
  })

  afterEach(async () => {
    await locker?.end()
    locker = undefined
  })

  afterAll(async () => {
    await t?.close()
  })

  /** Another session holding `wfa_todos` in ACCESS EXCLUSIVE mode until `release()`. */
  async function lockTodos(): Promise<{ release(): Promise<void> }> {
    locker = new pg.Client({ connectionString: database.current.url })
    await locker.connect()
    await locker.query('begin')
    await locker.query('lock table wfa_todos in access exclusive mode')
    const held = locker
    return { release: () => held.query('rollback').then(() => {}) }
  }

  const timed = async (request: () => Promise<Response>): Promise<{ ms: number; response: Response }> => {
    const started = performance.now()
    const response = await request()
    return { ms: performance.now() - started, response }
  }

  /** Cheap requests that must keep answering 200 at once: another tenant's, and an unlocked list of the slow tenant. */
  const cheap = [
    () => t.get('/v1/company', company2),
    () => t.get('/v1/users?per_page=5', company2),
    () => t.get('/v1/users?per_page=5', company1),
  ]

  async function expectCheapAnswers(label: string): Promise<void> {
    for (const request of cheap) {
      const { ms, response } = await timed(request)
      expect(response.statusCode, `${label}: ${response.body}`).toBe(200)
      expect(ms, label).toBeLessThan(500)
    }
  }

  function expectQueryTimeout(response: Response): void {
    expect(response.statusCode, response.body).toBe(504)
    expect(response.headers['retry-after']).toBeUndefined()
    const body = response.json() as { error: { code: string; status: number; message: string } }
    expect(Object.keys(body)).toEqual(['error'])
    expect({ code: body.error.code, status: body.error.status }).toEqual({ code: 'query_timeout', status: 504 })
    expect(body.error.message).toMatch(/^This request took longer than the database allows for one statement and was stopped \(request [^)]+\); it is not an outage/)
    for (const leak of ['57014', 'canceling', 'wfa_', 'select']) expect(response.body).not.toContain(leak)
  }

  it('the defaults put the server bound first: statement_timeout below the client-side query timeout', () => {
    expect(DEFAULT_STATEMENT_TIMEOUT_MS).toBeLessThan(DEFAULT_QUERY_TIMEOUT_MS)
  })

  it('a list past statement_timeout gets 504 query_timeout, not 503; other tenants and other lists answer 200 before, during and after', async () => {
    expect((await t.get('/v1/todos', company1)).statusCode).toBe(200)
    await expectCheapAnswers('before')

    const lock = await lockTodos()
    try {
      // A kept answer needs no statement (issue 25): the list's rows are unchanged, so while the
      // table is locked the same question still answers 200 at once. A question not asked
      // before must run its statement, which the lock stops.
      const kept = await timed(() => t.get('/v1/todos', company1))
      expect(kept.response.statusCode, kept.response.body).toBe(seekPath ? 200 : 504)
      const slow = timed(() => t.get('/v1/todos?per_page=24', company1))
      // While the statement waits on the server: the rest of the API answers as usual.
      let rounds = 0
      let settled = false
      void slow.finally(() => {
        settled = true
      })
      while (!settled) {
        await expectCheapAnswers(`during, round ${rounds}`)
        rounds += 1
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(rounds).toBeGreaterThan(3)
      const { ms, response } = await slow
      expectQueryTimeout(response)
      // Stopped by the server (statement_timeout), not by the client-side bound.
      expect(ms).toBeGreaterThanOrEqual(DEFAULT_STATEMENT_TIMEOUT_MS - 50)
      expect(ms).toBeLessThan(DEFAULT_QUERY_TIMEOUT_MS)
      // No fail-fast mode after it: right away, everything else answers.
      await expectCheapAnswers('right after the 504')
      // The list is still locked, so it is stopped again, again with a 504.
      expectQueryTimeout(await t.get('/v1/todos?status=open', company2))
    } finally {
      await lock.release()
    }

    // Once the statement is cheap again, the same list answers 200 at once.
    const after = await timed(() => t.get('/v1/todos?per_page=24', company1))
    expect(after.response.statusCode).toBe(200)
    expect(after.ms).toBeLessThan(500)
    await expectCheapAnswers('after')
  })

  it("a 504 does not fail the company's queued reads: a list waiting behind two stopped ones runs and answers 200", async () => {
    const lock = await lockTodos()
    let stopped: Response[]
    let queued: { ms: number; response: Response }
    try {
      // Two slots per company (DEFAULT_LIST_READS_PER_COMPANY): both are taken by locked lists,
      // and the users list, sent once they wait on the lock, queues behind them in the
      // company's read limiter until the first of them is stopped.
      // Questions not asked before: a kept answer would need no statement (issue 25).
      const locked = Promise.all([t.get('/v1/todos?per_page=4', company1), t.get('/v1/todos?per_page=3', company1)])
      await new Promise((resolve) => setTimeout(resolve, 150))
      ;[stopped, queued] = await Promise.all([locked, timed(() => t.get('/v1/users?per_page=3', company1))])
    } finally {
      await lock.release()
    }
    for (const response of stopped) expectQueryTimeout(response)
    expect(queued.response.statusCode, queued.response.body).toBe(200)
    // It did wait for a slot (so it was in the queue when the 504s came), and was not failed with them.
    expect(queued.ms).toBeGreaterThan(DEFAULT_STATEMENT_TIMEOUT_MS - 250)
  })
}
