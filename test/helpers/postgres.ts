import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { postgresCodec as c } from '../../adapters/postgres/postgres-codec.js'
import type { ChangeEvent } from '../../src/ports/write-storage.js'

/**
 * Postgres suites run against the server named by WORKFORCE_TEST_PG_URL (an admin
 * connection, e.g. postgres://postgres@127.0.0.1:5432/postgres). Each test file gets its
 * own fresh database, dropped afterwards, so files can run in parallel.
 *
 * Without the variable the suites are skipped with a notice; under CI=true a missing
 * variable or an unreachable server fails them instead: CI must never go green by skipping.
 */
export const postgresAdminUrl = process.env.WORKFORCE_TEST_PG_URL || undefined
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false' && process.env.CI !== '0'

const HOW_TO_ENABLE = 'set WORKFORCE_TEST_PG_URL=postgres://postgres@127.0.0.1:5432/postgres to run it'

/** `describe` for a suite that needs Postgres: skipped with a notice, or failing under CI. */
export function describePostgres(name: string, body: () => void): void {
  if (postgresAdminUrl === undefined) {
    if (inCi) {
      describe(name, () => {
        it('needs a Postgres server under CI', () => {
          throw new Error(`WORKFORCE_TEST_PG_URL is not set and CI=true: ${HOW_TO_ENABLE}`)
        })
      })
      return
    }
    console.warn(`[postgres] skipping "${name}": ${HOW_TO_ENABLE}`)
  }
  describe.skipIf(postgresAdminUrl === undefined)(name, body)
}

export interface TestDatabase {
  name: string
  /** Connection string of the fresh database. */
  url: string
  drop(): Promise<void>
}

/** Creates an empty database `wfa_test_<random>` on the admin server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = requireAdminUrl()
  const name = `wfa_test_${randomBytes(6).toString('hex')}`
  await withAdmin(adminUrl, (admin) => admin.query(`create database ${pg.escapeIdentifier(name)}`))
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    drop: () =>
      withAdmin(adminUrl, async (admin) => {
        await untilDisconnected(admin, name)
        await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`)
      }),
  }
}

/**
 * Registers hooks that create a fresh database before the suite and drop it after.
 * Call inside `describePostgres`; read `.current` from tests and hooks.
 */
export function useTestDatabase(): { readonly current: TestDatabase } {
  let database: TestDatabase | undefined
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    await database?.drop()
  })
  return {
    get current() {
      if (database === undefined) throw new Error('The test database is created in beforeAll')
      return database
    },
  }
}

/**
 * Adapters and host pools a test opens, closed after each test (adapters first, then pools),
 * or earlier with `closeAll()` (before dropping a database of the test's own, say): `open` is
 * `openPostgresAdapter`, remembered; `hostPool` is a pg pool on the test database (or
 * `config`'s), remembered, with idle-client errors ignored as a host would. Call inside
 * `describePostgres`, after `useTestDatabase()`.
 */
export function usePostgresAdapters(database: { readonly current: TestDatabase }): {
  open: typeof openPostgresAdapter
  hostPool(config?: pg.PoolConfig): pg.Pool
  closeAll(): Promise<void>
} {
  const opened: PostgresAdapter[] = []
  const pools: pg.Pool[] = []
  const closeAll = async () => {
    for (const adapter of opened.splice(0)) await adapter.close()
    for (const pool of pools.splice(0)) if (!pool.ending) await pool.end()
  }
  afterEach(closeAll)
  return {
    closeAll,
    async open(...args) {
      const adapter = await openPostgresAdapter(...args)
      opened.push(adapter)
      return adapter
    },
    hostPool(config = {}) {
      const pool = new pg.Pool({ connectionString: database.current.url, ...config })
      pool.on('error', () => {})
      pools.push(pool)
      return pool
    },
  }
}

/** Every change event the adapter's writes recorded, in order: the outbox as the port's types. */
export async function readChangeEvents(adapter: PostgresAdapter): Promise<ChangeEvent[]> {
  const rows = await adapter.db.selectFrom('wfa_change_events').selectAll().orderBy('id').execute()
  return rows.map((row) => ({
    id: row.event_id as string,
    company_id: c.readInt(row.company_id),
    type: row.type as string,
    resource_id: c.readInt(row.resource_id),
    occurred_at: c.readInstant(row.occurred_at),
    payload: row.payload as string,
  }))
}

function requireAdminUrl(): string {
  if (postgresAdminUrl === undefined) throw new Error(`No Postgres server: ${HOW_TO_ENABLE}`)
  return postgresAdminUrl
}

/**
 * Waits, up to `GOODBYE_MS`, for the connections to `database` to end. A pool's `end()` settles
 * before its clients' connections have closed on the server; `drop … with (force)` then
 * terminates the ones still on their way out, and a client hears the server's 57P01 in the
 * middle of ending, with no one listening for it (an uncaught error that fails the whole run).
 * Connections still open after the wait are the test's own business: `force` ends them.
 */
async function untilDisconnected(admin: pg.Client, database: string): Promise<void> {
  const deadline = Date.now() + GOODBYE_MS
  for (;;) {
    const { rows } = await admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [database])
    if (rows[0]!.n === 0 || Date.now() >= deadline) return
    await sleep(10)
  }
}

const GOODBYE_MS = 500

async function withAdmin<T>(adminUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 })
  try {
    await admin.connect()
  } catch (error) {
    throw new Error(`Cannot reach the Postgres server of WORKFORCE_TEST_PG_URL (${redact(adminUrl)}): ${String(error)}`, { cause: error })
  }
  try {
    return await work(admin)
  } finally {
    await admin.end()
  }
}

function redact(url: string): string {
  const parsed = new URL(url)
  if (parsed.password !== '') parsed.password = '***'
  return parsed.toString()
}
