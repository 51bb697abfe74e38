import { createServer, connect, type Server, type Socket } from 'node:net'
import pg from 'pg'
import { afterEach, expect, it } from 'vitest'
import { DEFAULT_ACQUIRE_TIMEOUT_MS, DEFAULT_QUERY_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS, OPEN_ACQUIRE_TIMEOUT_MS, openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { postgresColumnTypes } from '../../adapters/postgres/postgres-codec.js'
import { createMigrations } from '../../adapters/sql/migrations/index.js'
import { generateDataset } from '../../src/seed/generate.js'
import { createTestDatabase, describePostgres, useTestDatabase } from '../helpers/postgres.js'

const MIGRATION_NAMES = Object.keys(createMigrations(postgresColumnTypes)).sort()

describePostgres('openPostgresAdapter lifecycle', () => {
  const database = useTestDatabase()
  const opened: PostgresAdapter[] = []
  const pools: pg.Pool[] = []
  const open: typeof openPostgresAdapter = async (...args) => {
    const adapter = await openPostgresAdapter(...args)
    opened.push(adapter)
    return adapter
  }
  // A host's pool, with idle-client errors ignored as a host would (test/helpers/postgres.ts,
  // `usePostgresAdapters`): without a listener, a pool rethrows an idle client's error, and a
  // client still closing when its test database is dropped hears 57P01 (an uncaught error that
  // failed a whole run).
  const hostPool = (config: pg.PoolConfig = {}) => {
    const pool = new pg.Pool({ connectionString: database.current.url, ...config })
    pool.on('error', () => {})
    pools.push(pool)
    return pool
  }

  afterEach(async () => {
    for (const adapter of opened.splice(0)) await adapter.close()
    for (const pool of pools.splice(0)) if (!pool.ending) await pool.end()
  })

  it('ends the pool it created on close, and tolerates a second close', async () => {
    const adapter = await open({ connectionString: database.current.url })
    await adapter.close()
    expect(adapter.pool.ended).toBe(true)
    await expect(adapter.pool.query('select 1')).rejects.toThrow()
    await adapter.close()
  })

  it('never ends a pool the host passed in', async () => {
    const pool = hostPool()
    const adapter = await open({ pool })
    expect(adapter.pool).toBe(pool)
    await adapter.close()
    expect(pool.ending).toBe(false)
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }])
  })

  it('leaves the global pg type parsers alone, so the host keeps int8 and date as it had them', async () => {
    const before = [pg.types.getTypeParser(20, 'text'), pg.types.getTypeParser(1082, 'text')]
    const pool = hostPool()
    const adapter = await open({ pool })
    await adapter.storage.employees.list(1, {}, { limit: 5, offset: 0 })
    expect([pg.types.getTypeParser(20, 'text'), pg.types.getTypeParser(1082, 'text')]).toEqual(before)
    const { rows } = await pool.query(`select 7::int8 as n, date '2026-03-29' as d`)
    expect(rows[0].n).toBe('7')
    expect(rows[0].d).toBeInstanceOf(Date)
  })

  it('sets a statement timeout on the connections it creates, below the client-side query bound unless told otherwise', async () => {
    const byDefault = await open({ connectionString: database.current.url })
    expect(DEFAULT_STATEMENT_TIMEOUT_MS).toBeLessThan(DEFAULT_QUERY_TIMEOUT_MS)
    expect((await byDefault.pool.query('show statement_timeout')).rows[0].statement_timeout).toBe(`${DEFAULT_STATEMENT_TIMEOUT_MS}ms`)
    const off = await open({ connectionString: database.current.url }, { statementTimeoutMs: 0 })
    expect((await off.pool.query('show statement_timeout')).rows[0].statement_timeout).toBe('0')

    const short = await open({ connectionString: database.current.url }, { statementTimeoutMs: 150 })
    await expect(short.pool.query('select pg_sleep(1)')).rejects.toMatchObject({ code: '57014' })
  })

  it('plans every execution of its named statements for the tenant at hand (no generic plan)', async () => {
    const adapter = await open({ connectionString: database.current.url })
    expect((await adapter.pool.query('show plan_cache_mode')).rows[0].plan_cache_mode).toBe('force_custom_plan')
  })

  it('waits longer for the connection its migrations run on than a request waits for one', async () => {
    // A proxy that holds every new connection 2 s before passing it on: a connect slower than
    // the request bound (1.5 s), as CI saw for the first connection to a database just created.
    const { url, close } = await slowConnects(database.current.url, 2_000)
    try {
      expect(DEFAULT_ACQUIRE_TIMEOUT_MS).toBeLessThan(2_000)
      expect(OPEN_ACQUIRE_TIMEOUT_MS).toBeGreaterThan(2_000)
      const adapter = await open({ connectionString: url }, { schema: 'slow_connects' })
      const { rows } = await hostPool().query(`select count(*)::int as n from slow_connects.wfa_migrations`)
      expect(rows[0].n).toBe(MIGRATION_NAMES.length)
      // A request still gives up on a connection at its own bound, an outage to it.
      const started = performance.now()
      await expect(adapter.storage.users.get(1, 1)).rejects.toThrow(/no connection within 1500 ms/)
      expect(performance.now() - started).toBeLessThan(2_000)
    } finally {
      for (const adapter of opened.splice(0)) await adapter.close()
      await close()
      await hostPool().query('drop schema if exists slow_connects cascade')
    }
  })

  it('lifts the statement timeout for migrations only, and restores the connection’s own value', async () => {
    const fresh = await createTestDatabase()
    try {
      // 1 ms would cancel DDL if it applied to migrations.
      const adapter = await open({ connectionString: fresh.url }, { statementTimeoutMs: 1 })
      const admin = hostPool({ connectionString: fresh.url })
      const { rows } = await admin.query('select name from wfa_migrations order by name')
      expect(rows.map((row) => row.name)).toEqual(MIGRATION_NAMES)
      await adapter.close()

      const single = hostPool({ connectionString: fresh.url, max: 1, options: '-c statement_timeout=3s' })
      await open({ pool: single })
      expect((await single.query('show statement_timeout')).rows[0].statement_timeout).toBe('3s')
    } finally {
      for (const adapter of opened.splice(0)) await adapter.close()
      for (const pool of pools.splice(0)) await pool.end()
      await fresh.drop()
    }
  })

  it('migrates a fresh database when several processes open it at once', async () => {
    const fresh = await createTestDatabase()
    try {
      const adapters = await Promise.all([1, 2, 3].map(() => open({ connectionString: fresh.url })))
      const scoped = await Promise.all([1, 2, 3].map(() => open({ connectionString: fresh.url }, { schema: 'tenant_api' })))
      const { rows } = await adapters[0]!.pool.query(
        `select table_schema, count(*)::int as n from information_schema.tables where table_name = 'wfa_migrations' group by 1 order by 1`,
      )
      expect(rows).toEqual([
        { table_schema: 'public', n: 1 },
        { table_schema: 'tenant_api', n: 1 },
      ])
      for (const adapter of [...adapters, ...scoped]) {
        const applied = await adapter.db.selectFrom('wfa_migrations').select('name').execute()
        expect(applied.map((row) => row.name).sort()).toEqual(MIGRATION_NAMES)
      }
    } finally {
      for (const adapter of opened.splice(0)) await adapter.close()
      await fresh.drop()
    }
  })

  it('keeps every table, index and migration table inside the schema option', async () => {
    const pool = hostPool({ max: 1 })
    await open({ pool }) // the same migrations in the default schema, to compare with
    const adapter = await open({ pool }, { schema: 'workforce_api' })
    const objects = async (schema: string) => {
      const { rows: tables } = await pool.query('select table_name as name from information_schema.tables where table_schema = $1 order by 1', [schema])
      const { rows: indexes } = await pool.query(`select indexname as name from pg_indexes where schemaname = $1 order by 1`, [schema])
      return { tables: tables.map((row) => row.name), indexes: indexes.map((row) => row.name) }
    }
    const scoped = await objects('workforce_api')
    expect(scoped.tables).toEqual(expect.arrayContaining(['wfa_migrations', 'wfa_migrations_lock', 'wfa_shifts', 'wfa_todos']))
    expect(scoped.indexes).toEqual(expect.arrayContaining(['wfa_shifts_company_status', 'wfa_todos_company_due_at']))
    expect(scoped).toEqual(await objects('public'))

    await adapter.loadDataset(generateDataset())
    await adapter.storage.shifts.list(1, { status: 'scheduled' }, { limit: 5, offset: 0 })
    // The hot path's prepared SQL names the schema: it cannot depend on the host's search_path.
    const { rows: statements } = await pool.query(`select name, statement from pg_prepared_statements where name like 'wfa\\_%'`)
    expect(statements.length).toBeGreaterThanOrEqual(2)
    for (const statement of statements) expect(statement.statement).toContain('"workforce_api"."wfa_shifts"')
  })

  it('migrates the default schema when another schema of the database already holds our tables', async () => {
    const fresh = await createTestDatabase()
    try {
      await open({ connectionString: fresh.url }, { schema: 'installed_first' })
      const adapter = await open({ connectionString: fresh.url })
      const { rows } = await adapter.pool.query(
        `select table_schema, count(*)::int as n from information_schema.tables where table_name like 'wfa\\_%' group by 1 order by 1`,
      )
      expect(rows.map((row) => row.table_schema)).toEqual(['installed_first', 'public'])
      expect(rows[0].n).toBe(rows[1].n)
    } finally {
      for (const adapter of opened.splice(0)) await adapter.close()
      await fresh.drop()
    }
  })

  it('serves two schemas through one host pool without mixing their data or their statements', async () => {
    const pool = hostPool({ max: 2 })
    const loaded = await open({ pool }, { schema: 'tenant_a' })
    const empty = await open({ pool }, { schema: 'tenant_b' })
    await loaded.loadDataset(generateDataset())
    const window = { limit: 10, offset: 0 }
    expect((await loaded.storage.shifts.list(1, {}, window)).total).toBeGreaterThan(0)
    expect(await empty.storage.shifts.list(1, {}, window)).toEqual({ rows: [], total: 0 })
    expect(await empty.storage.company(1)).toBeNull()
    expect(await loaded.storage.company(1)).toMatchObject({ id: 1, timezone: 'Europe/Rome' })
  })

  it('rejects options it cannot honour, naming the option', async () => {
    const url = database.current.url
    await expect(openPostgresAdapter({} as never)).rejects.toThrow(/exactly one of "connectionString" or "pool"/)
    await expect(openPostgresAdapter({ connectionString: url }, { schema: 'bad-name' })).rejects.toThrow(/"schema"/)
    await expect(openPostgresAdapter({ pool: hostPool() }, { statementTimeoutMs: 1000 })).rejects.toThrow(/"statementTimeoutMs"/)
    await expect(openPostgresAdapter({ connectionString: url }, { statementTimeoutMs: -1 })).rejects.toThrow(/"statementTimeoutMs"/)
  })

  it('does not migrate when told not to', async () => {
    const fresh = await createTestDatabase()
    try {
      const adapter = await open({ connectionString: fresh.url }, { migrate: false })
      const { rows } = await adapter.pool.query(`select count(*)::int as n from information_schema.tables where table_name like 'wfa\\_%'`)
      expect(rows[0].n).toBe(0)
    } finally {
      for (const adapter of opened.splice(0)) await adapter.close()
      await fresh.drop()
    }
  })
})

/** A TCP proxy to `target`'s server on 127.0.0.1 that starts passing each connection on only after `delayMs`. */
async function slowConnects(target: string, delayMs: number): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = new URL(target)
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    sockets.add(client)
    client.pause()
    const timer = setTimeout(() => {
      const onward = connect(Number(upstream.port || 5432), upstream.hostname)
      sockets.add(onward)
      client.pipe(onward).pipe(client)
      client.resume()
      onward.on('error', () => client.destroy())
      onward.on('close', () => sockets.delete(onward))
    }, delayMs)
    client.on('error', () => undefined)
    client.on('close', () => {
      clearTimeout(timer)
      sockets.delete(client)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = new URL(target)
  url.hostname = '127.0.0.1'
  url.port = String((server.address() as { port: number }).port)
  return {
    url: url.toString(),
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
