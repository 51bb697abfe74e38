import { sql } from 'kysely'
import { expect, it } from 'vitest'
import {
  DEFAULT_ACQUIRE_TIMEOUT_MS,
  DEFAULT_QUERY_TIMEOUT_MS,
  openPostgresAdapter,
  type PostgresAdapter,
} from '../../adapters/postgres/index.js'
import { StatementTimeout, StorageUnavailable } from '../../src/ports/errors.js'
import { generateDataset } from '../../src/seed/generate.js'
import { freePort } from '../helpers/free-port.js'
import { describePostgres, usePostgresAdapters, useTestDatabase } from '../helpers/postgres.js'
import { timed } from '../helpers/timed.js'

/**
 * The adapter's boundary with pg (`PostgresGuard`) on the shared server: client-side query
 * and acquire timeouts, what it maps to StorageUnavailable, and that a timed-out query never
 * leaves its connection in the pool. Nothing here stops or freezes the server; see
 * test/faults for that, on a cluster of the test's own.
 */
describePostgres('Postgres adapter: timeouts and unavailability at the pg boundary', () => {
  const database = useTestDatabase()
  const { open, hostPool } = usePostgresAdapters(database)

  const backendPid = async (adapter: PostgresAdapter) =>
    (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(adapter.db)).rows[0]!.pid

  it('has named defaults that let a request answer within 2 s of the database going away', () => {
    expect(DEFAULT_QUERY_TIMEOUT_MS).toBeLessThan(2_000)
    expect(DEFAULT_ACQUIRE_TIMEOUT_MS).toBeLessThan(2_000)
  })

  it('a query past queryTimeoutMs is a StorageUnavailable, and its connection is discarded, not reused', async () => {
    const pool = hostPool({ max: 1 })
    const adapter = await open({ pool }, { queryTimeoutMs: 200 })
    const before = await backendPid(adapter)
    const { ms, outcome } = await timed(() => sql`select pg_sleep(3)`.execute(adapter.db))
    expect(outcome).toBeInstanceOf(StorageUnavailable)
    expect((outcome as Error).message).toMatch(/no answer within 200 ms/)
    expect(ms).toBeLessThan(1_000)
    // A timeout reads as an outage until the guard's own check answers, milliseconds later.
    // The only connection of the pool had the sleep still on its wire: a fresh one answers.
    const next = await timed(() => eventually(() => backendPid(adapter)))
    expect(next.ms).toBeLessThan(1_000)
    expect(typeof next.outcome).toBe('number')
    expect(next.outcome).not.toBe(before)
    expect(pool.totalCount).toBe(1)
  })

  it('a query timeout ends the wait of requests queued for a connection at once, not at their own acquire timeout', async () => {
    const adapter = await open({ pool: hostPool({ max: 1 }) }, { queryTimeoutMs: 300, acquireTimeoutMs: 5_000 })
    const stuck = sql`select pg_sleep(3)`.execute(adapter.db).catch((error: unknown) => error)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const queued = await timed(() => sql`select 1`.execute(adapter.db))
    expect(await stuck).toBeInstanceOf(StorageUnavailable)
    expect(queued.outcome).toBeInstanceOf(StorageUnavailable)
    expect((queued.outcome as Error).message).toMatch(/became unreachable .* while waiting for a connection/)
    expect(queued.ms).toBeLessThan(1_000)
    expect((await eventually(() => sql<{ one: number }>`select 1 as one`.execute(adapter.db))).rows).toEqual([{ one: 1 }])
  })

  it('the prepared-statement runner goes through the same bounds (a port read times out, then reads again)', async () => {
    const adapter = await open({ pool: hostPool({ max: 1 }) }, { queryTimeoutMs: 300 })
    await adapter.loadDataset(generateDataset())
    // Another session locks the table, so the read waits on the server and the client gives up.
    const locker = await hostPool({ max: 1 }).connect()
    await locker.query('begin')
    await locker.query('lock table wfa_todos in access exclusive mode')
    const { ms, outcome } = await timed(() => adapter.storage.todos.list(1, {}, { limit: 5, offset: 0 }))
    await locker.query('rollback')
    locker.release()
    expect(outcome).toBeInstanceOf(StorageUnavailable)
    expect(ms).toBeLessThan(1_500)
    const page = await eventually(() => adapter.storage.todos.list(1, {}, { limit: 5, offset: 0 }))
    expect(page.rows.length).toBeGreaterThan(0)
  })

  it('waiting past acquireTimeoutMs for a connection of a host pool is a StorageUnavailable; the late client goes back', async () => {
    const pool = hostPool({ max: 1 })
    const adapter = await open({ pool }, { acquireTimeoutMs: 200 })
    const held = await pool.connect()
    const { ms, outcome } = await timed(() => sql`select 1`.execute(adapter.db))
    expect(outcome).toBeInstanceOf(StorageUnavailable)
    expect((outcome as Error).message).toMatch(/no connection within 200 ms/)
    expect(ms).toBeLessThan(1_000)
    held.release()
    // The acquire that gave up is handed the client later and returns it at once. Until the
    // guard's own check has had its answer the adapter fails fast (the pool may be stuck on a
    // frozen server); then queries go through again.
    expect(await sql`select 1`.execute(adapter.db).catch((error: unknown) => error)).toBeInstanceOf(StorageUnavailable)
    expect((await eventually(() => sql<{ one: number }>`select 1 as one`.execute(adapter.db))).rows).toEqual([{ one: 1 }])
    expect(pool.totalCount).toBe(1)
  })

  it('a full pool whose every client is busy with its own bounded statements is load, not an outage: the wait past acquireTimeoutMs is a 503 for that request only', async () => {
    const adapter = await open({ pool: hostPool({ max: 1 }) }, { acquireTimeoutMs: 400, queryTimeoutMs: 5_000 })
    const busy = sql`select pg_sleep(0.6)`.execute(adapter.db)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const waited = await timed(() => sql`select 1`.execute(adapter.db))
    expect(waited.outcome).toBeInstanceOf(StorageUnavailable)
    expect((waited.outcome as Error).message).toMatch(/no connection within 400 ms/)
    // No outage was declared: the next request waits for the client instead of failing at
    // once, and is answered as soon as the busy statement ends.
    const next = sql<{ one: number }>`select 1 as one`.execute(adapter.db).catch((error: unknown) => error)
    await busy
    expect(await next).toMatchObject({ rows: [{ one: 1 }] })
  })

  it('a statement cancelled by statement_timeout (57014) is a StatementTimeout, not a StorageUnavailable, and keeps its healthy connection', async () => {
    const adapter = await open({ connectionString: database.current.url }, { statementTimeoutMs: 100 })
    const conn = await adapter.db.connection().execute(async (db) => {
      const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid
      const failure = await sql`select pg_sleep(2)`.execute(db).then(
        () => null,
        (error: unknown) => error,
      )
      const after = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid
      return { pid, failure, after }
    })
    expect(conn.failure).toBeInstanceOf(StatementTimeout)
    expect(conn.failure).not.toBeInstanceOf(StorageUnavailable)
    expect(((conn.failure as StatementTimeout).cause as { code?: string }).code).toBe('57014')
    expect(conn.after).toBe(conn.pid)
  })

  it('a terminated backend (57P01) is a StorageUnavailable; the next query gets a new connection', async () => {
    const pool = hostPool({ max: 1 })
    const adapter = await open({ pool })
    const admin = hostPool({ max: 1 })
    const pid = await backendPid(adapter)
    const dying = await adapter.db.connection().execute(async (db) => {
      const sleeping = sql`select pg_sleep(5)`.execute(db).then(
        () => null,
        (error: unknown) => error,
      )
      await new Promise((resolve) => setTimeout(resolve, 100))
      await admin.query('select pg_terminate_backend($1)', [pid])
      return sleeping
    })
    expect(dying).toBeInstanceOf(StorageUnavailable)
    expect(((dying as StorageUnavailable).cause as { code?: string }).code).toBe('57P01')
    expect(await eventually(() => backendPid(adapter))).not.toBe(pid)
  })

  it('a unique violation is not mapped (it stays a WriteConflict), a syntax error stays a 500; neither costs the connection', async () => {
    const pool = hostPool({ max: 1 })
    const adapter = await open({ pool })
    const pid = await backendPid(adapter)
    await sql`create temporary table uniq (id int primary key)`.execute(adapter.db)
    await sql`insert into uniq values (1)`.execute(adapter.db)
    await expect(sql`insert into uniq values (1)`.execute(adapter.db)).rejects.toMatchObject({ code: '23505' })
    await expect(sql`insert into uniq values (1)`.execute(adapter.db)).rejects.not.toBeInstanceOf(StorageUnavailable)
    await expect(sql`selec 1`.execute(adapter.db)).rejects.toMatchObject({ code: '42601' })
    expect(await backendPid(adapter)).toBe(pid)
  })

  it('a refused connection is a StorageUnavailable within milliseconds; during the outage others fail at once', async () => {
    const port = await freePort()
    const adapter = await open({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` }, { migrate: false })
    const first = await timed(() => adapter.storage.company(1))
    expect(first.outcome).toBeInstanceOf(StorageUnavailable)
    expect(((first.outcome as StorageUnavailable).cause as { code?: string }).code).toBe('ECONNREFUSED')
    expect(first.ms).toBeLessThan(1_000)
    // The outage is known now: the next operations fail at once, without trying to connect.
    const second = await timed(() => adapter.storage.company(1))
    expect(second.outcome).toBeInstanceOf(StorageUnavailable)
    expect((second.outcome as Error).message).toMatch(/has been unreachable since/)
    expect(second.ms).toBeLessThan(50)
  })

  it('opening on an unreachable server fails with StorageUnavailable instead of hanging', async () => {
    const port = await freePort()
    const { ms, outcome } = await timed(() => openPostgresAdapter({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` }))
    expect(outcome).toBeInstanceOf(StorageUnavailable)
    expect(ms).toBeLessThan(2_000)
  })

  it('refuses timeouts that are not whole milliseconds, and pool-only settings with a host pool', async () => {
    const url = database.current.url
    await expect(openPostgresAdapter({ connectionString: url }, { queryTimeoutMs: -1 })).rejects.toThrow('"queryTimeoutMs" must be an integer >= 0')
    await expect(openPostgresAdapter({ connectionString: url }, { acquireTimeoutMs: 1.5 })).rejects.toThrow('"acquireTimeoutMs" must be an integer >= 0')
    await expect(openPostgresAdapter({ connectionString: url }, { keepAliveDelayMs: Number.NaN })).rejects.toThrow('"keepAliveDelayMs" must be an integer >= 0')
    await expect(openPostgresAdapter({ pool: hostPool() }, { keepAliveDelayMs: 1_000 })).rejects.toThrow('"keepAliveDelayMs" applies to pools we create')
  })
})

/**
 * `work` again every 20 ms while it throws StorageUnavailable, for at most a second: after a
 * timeout or a lost connection the guard fails fast until its own check has answered.
 */
async function eventually<T>(work: () => Promise<T>): Promise<T> {
  const deadline = performance.now() + 1_000
  for (;;) {
    try {
      return await work()
    } catch (error) {
      if (!(error instanceof StorageUnavailable) || performance.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

