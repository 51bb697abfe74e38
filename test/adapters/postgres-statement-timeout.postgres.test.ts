import { sql } from 'kysely'
import { expect, it } from 'vitest'
import {
  DEFAULT_QUERY_TIMEOUT_MS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  defaultStatementTimeoutMs,
  openPostgresAdapter,
  type PostgresAdapter,
} from '../../adapters/postgres/index.js'
import { POOL_SIZE } from '../../adapters/postgres/postgres-database.js'
import { StatementTimeout, StorageUnavailable } from '../../src/ports/errors.js'
import { generateDataset } from '../../src/seed/generate.js'
import { createTestDatabase, describePostgres, usePostgresAdapters, useTestDatabase } from '../helpers/postgres.js'
import { timed } from '../helpers/timed.js'

/**
 * "A slow query is not an outage" (issue 22) at the pg boundary: a statement Postgres stops at
 * its own `statement_timeout` is a `StatementTimeout` on a connection that stays in use, and
 * the guard keeps serving every other operation at once. The client-side `queryTimeoutMs`
 * (frozen or unreachable servers) is covered by postgres-guard.postgres.test.ts and
 * test/faults/outage.postgres.test.ts.
 */
describePostgres('Postgres adapter: a statement stopped at statement_timeout is not an outage', () => {
  const database = useTestDatabase()
  const { open, closeAll } = usePostgresAdapters(database)

  const pidOf = async (db: PostgresAdapter['db']) => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid

  it('a statement past statementTimeoutMs (200) is a StatementTimeout well within queryTimeoutMs (1,000), and its connection answers the next query at once', async () => {
    const adapter = await open({ connectionString: database.current.url }, { statementTimeoutMs: 200, queryTimeoutMs: 1_000 })
    const conn = await adapter.db.connection().execute(async (db) => {
      const pid = await pidOf(db)
      const stopped = await timed(() => sql`select pg_sleep(3)`.execute(db))
      const next = await timed(() => pidOf(db))
      return { pid, stopped, next }
    })
    expect(conn.stopped.outcome).toBeInstanceOf(StatementTimeout)
    expect(conn.stopped.outcome).not.toBeInstanceOf(StorageUnavailable)
    expect(((conn.stopped.outcome as StatementTimeout).cause as { code?: string }).code).toBe('57014')
    expect(conn.stopped.ms).toBeGreaterThanOrEqual(150)
    expect(conn.stopped.ms).toBeLessThan(1_000)
    // The same connection, kept by the guard, answers at once.
    expect(conn.next.outcome).toBe(conn.pid)
    expect(conn.next.ms).toBeLessThan(200)
  })

  it('does not switch the guard into fail-fast mode: the very next operation, and one running meanwhile, answer normally', async () => {
    const adapter = await open({ connectionString: database.current.url }, { statementTimeoutMs: 200, queryTimeoutMs: 1_000 })
    await adapter.loadDataset(generateDataset())
    const slow = timed(() => sql`select pg_sleep(3)`.execute(adapter.db))
    // Meanwhile, on other connections: cheap port reads answer as usual.
    const during: number[] = []
    for (let i = 0; i < 5; i += 1) {
      const { ms, outcome } = await timed(() => adapter.storage.company(1))
      expect(outcome).toMatchObject({ id: 1 })
      during.push(ms)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const stopped = await slow
    expect(stopped.outcome).toBeInstanceOf(StatementTimeout)
    // Right after it: no StorageUnavailable, no waiting for the guard's probe.
    const after = await timed(() => adapter.storage.company(2))
    expect(after.outcome).toMatchObject({ id: 2 })
    expect(after.ms).toBeLessThan(200)
    const list = await timed(() => adapter.storage.todos.list(1, {}, { limit: 5, offset: 0 }))
    expect((list.outcome as { rows: unknown[] }).rows.length).toBeGreaterThan(0)
    expect(Math.max(...during)).toBeLessThan(200)
  })

  it('a cancel that reached the socket during an event-loop stall past queryTimeoutMs is still a StatementTimeout, not an outage', async () => {
    const adapter = await open({ connectionString: database.current.url }, { statementTimeoutMs: 200, queryTimeoutMs: 400 })
    await adapter.warmUp()
    const slow = timed(() => sql`select pg_sleep(3)`.execute(adapter.db))
    // Until the statement runs on the server (pg_stat_activity, seen from another connection).
    const running = async () =>
      (await sql<{ n: unknown }>`select count(*) as n from pg_stat_activity where query = 'select pg_sleep(3)' and state = 'active'`.execute(adapter.db)).rows[0]!.n
    while (Number(await running()) === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    // The server stops the statement at 200 ms, while the loop is stalled; at the end of the
    // stall both the client-side timer (400 ms) has expired and the answer waits on the socket.
    const until = performance.now() + 900
    while (performance.now() < until) {
      // a synchronous stall: a burst of CPU-bound work in the same process
    }
    const { outcome } = await slow
    expect(outcome).toBeInstanceOf(StatementTimeout)
    expect((await timed(() => adapter.storage.company(1))).outcome).not.toBeInstanceOf(StorageUnavailable)
  })

  it('inside a transaction: the transaction rolls back with a StatementTimeout, and the connection serves the next one', async () => {
    const adapter = await open({ connectionString: database.current.url }, { statementTimeoutMs: 200 })
    await sql`create table if not exists st_probe (id int primary key)`.execute(adapter.db)
    const failed = await adapter.db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into st_probe values (1)`.execute(trx)
        await sql`select pg_sleep(3)`.execute(trx)
      })
      .catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(StatementTimeout)
    expect(Number((await sql<{ n: unknown }>`select count(*) as n from st_probe`.execute(adapter.db)).rows[0]!.n)).toBe(0)
  })

  it('defaults statement_timeout below queryTimeoutMs on pools it creates (750 ms under 1,000), derived from queryTimeoutMs when only that is given', async () => {
    expect(DEFAULT_STATEMENT_TIMEOUT_MS).toBeLessThan(DEFAULT_QUERY_TIMEOUT_MS)
    expect(DEFAULT_STATEMENT_TIMEOUT_MS).toBe(750)
    expect([defaultStatementTimeoutMs(1_000), defaultStatementTimeoutMs(2_000), defaultStatementTimeoutMs(1), defaultStatementTimeoutMs(0)]).toEqual([750, 1_500, 1, 5_000])
    const show = async (adapter: PostgresAdapter) => (await adapter.pool.query('show statement_timeout')).rows[0].statement_timeout as string
    expect(await show(await open({ connectionString: database.current.url }))).toBe('750ms')
    expect(await show(await open({ connectionString: database.current.url }, { queryTimeoutMs: 2_000 }))).toBe('1500ms')
    expect(await show(await open({ connectionString: database.current.url }, { queryTimeoutMs: 0 }))).toBe('5s')
    expect(await show(await open({ connectionString: database.current.url }, { statementTimeoutMs: 0 }))).toBe('0')
  })

  it('refuses a statementTimeoutMs at or above queryTimeoutMs (both on), naming both options', async () => {
    const url = database.current.url
    const message = /"statementTimeoutMs" \(\d+\) must be below "queryTimeoutMs" \(\d+\)/
    await expect(openPostgresAdapter({ connectionString: url }, { statementTimeoutMs: 1_000 })).rejects.toThrow(TypeError)
    await expect(openPostgresAdapter({ connectionString: url }, { statementTimeoutMs: 1_000 })).rejects.toThrow(message)
    await expect(openPostgresAdapter({ connectionString: url }, { statementTimeoutMs: 5_000 })).rejects.toThrow(message)
    await expect(openPostgresAdapter({ connectionString: url }, { statementTimeoutMs: 60_000, queryTimeoutMs: 60_000 })).rejects.toThrow(message)
    // Either bound off: nothing to order.
    await open({ connectionString: url }, { statementTimeoutMs: 5_000, queryTimeoutMs: 0 })
    await open({ connectionString: url }, { statementTimeoutMs: 59_000, queryTimeoutMs: 60_000 })
  })

  it('runs loadDataset without statement_timeout (a tiny one would cancel its inserts), and restores the connection’s own value', async () => {
    const fresh = await createTestDatabase()
    try {
      const adapter = await open({ connectionString: fresh.url }, { statementTimeoutMs: 5 })
      // Batches of 500 rows with their version triggers: each insert takes longer than 5 ms.
      await adapter.loadDataset(generateDataset({ scale: 400 }))
      // Counted with the bound off for this one transaction: a first page of a freshly loaded,
      // not yet analyzed database can take over 5 ms on a loaded machine, and this test is about the load.
      const counter = await adapter.pool.connect()
      let loaded: number
      try {
        await counter.query('begin')
        await counter.query('set local statement_timeout = 0')
        loaded = Number((await counter.query('select count(*) as n from wfa_todos where company_id = 1')).rows[0].n)
        await counter.query('commit')
      } finally {
        counter.release()
      }
      expect(loaded).toBeGreaterThanOrEqual(400)
      // Every connection of the pool (the one that loaded included) is back at 5 ms.
      const clients = await Promise.all(Array.from({ length: POOL_SIZE }, () => adapter.pool.connect()))
      const timeouts = await Promise.all(clients.map((client) => client.query('show statement_timeout')))
      for (const client of clients) client.release()
      expect(new Set(timeouts.map((result) => result.rows[0].statement_timeout))).toEqual(new Set(['5ms']))
    } finally {
      await closeAll()
      await fresh.drop()
    }
  })
})
