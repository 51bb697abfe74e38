import { sql, type Kysely } from 'kysely'
import type pg from 'pg'
import type { ReferenceAdapterPorts } from '../../src/ports/index.js'
import { migrateToLatest } from '../sql/migrate.js'
import { SqlIdempotencyStore } from '../sql/sql-idempotency-store.js'
import { SqlKeyStore } from '../sql/sql-key-store.js'
import { SqlModuleRegistry } from '../sql/sql-module-registry.js'
import { SqlStorage } from '../sql/sql-storage.js'
import { SqlWriteStorage } from '../sql/sql-write-storage.js'
import { postgresCodec, postgresColumnTypes } from './postgres-codec.js'
import { createPostgresKysely, createPostgresPool, createPostgresRunner } from './postgres-database.js'
import { loadPostgresDataset } from './postgres-fixtures.js'

/** Upper bound on any one statement on a pool we create: a runaway COUNT cannot pin a connection. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5_000

/** Where the data lives: a server we connect to, or a pool the host owns. */
export type PostgresConnection =
  | {
      /** `postgres://…`; we create the pool and `close()` ends it. */
      connectionString: string
    }
  | {
      /**
       * A pg pool the host owns: used as is and never ended by us, nor are its session
       * settings changed. What we set on our own pools is the host's to set on this one:
       * `new Pool({ options: '-c statement_timeout=5000 -c plan_cache_mode=force_custom_plan' })`
       * (see docs/benchmarks-postgres.md for why both matter).
       */
      pool: pg.Pool
    }

export interface PostgresAdapterOptions {
  /** Keep every table (and the migration tables) in this schema, created if missing. Default: the connection's `search_path`. */
  schema?: string
  /** `statement_timeout` of the connections of a pool we create, in milliseconds; 0 disables it. Default 5,000. */
  statementTimeoutMs?: number
  /** Run migrations on open. Default true. */
  migrate?: boolean
}

/**
 * The ports over one Postgres database (or schema), plus the hooks the CLI and tests use.
 * Writes are one transaction each on a pooled connection, rows read for update locked;
 * idempotency records live in `wfa_idempotency`, atomic across every process on the database.
 * `loadDataset` writes a whole dataset in one transaction, then moves id sequences past it;
 * `close` ends the pool only if this adapter created it.
 */
export interface PostgresAdapter extends ReferenceAdapterPorts {
  modules: SqlModuleRegistry
  /** Kysely over our tables, schema-qualified when `schema` is set. */
  db: Kysely<any>
  pool: pg.Pool
}

/**
 * Opens the Postgres adapter: the same SQL and migrations as SQLite, through Kysely and pg.
 * Two processes opening it at once on a fresh database is safe: migrations run under
 * Kysely's Postgres advisory lock, in our own `wfa_migrations` table.
 *
 * @example
 * const { storage, keyStore, modules, writes, idempotency, close } = await openPostgresAdapter(
 *   { connectionString: process.env.DATABASE_URL! },
 *   { schema: 'workforce_api' },
 * )
 * await app.register(workforceApi, { prefix: '/api/public', storage, keyStore, modules, writes, idempotency })
 * app.addHook('onClose', close)
 */
export async function openPostgresAdapter(connection: PostgresConnection, options: PostgresAdapterOptions = {}): Promise<PostgresAdapter> {
  const { schema, statementTimeoutMs } = checkAdapterOptions(connection, options)
  const owned = 'connectionString' in connection
  const pool = owned ? createPostgresPool(connection.connectionString, statementTimeoutMs) : connection.pool
  const plainDb = createPostgresKysely(pool)
  const db = schema === undefined ? plainDb : plainDb.withSchema(schema)
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await plainDb.destroy()
    if (owned) await pool.end()
  }
  try {
    if (options.migrate ?? true) await migrateWithoutStatementTimeout(plainDb, schema)
  } catch (error) {
    await close()
    throw error
  }
  return {
    storage: new SqlStorage(db, createPostgresRunner(pool), postgresCodec),
    keyStore: new SqlKeyStore(db, postgresCodec),
    modules: new SqlModuleRegistry(db, postgresCodec),
    // Transactions run concurrently on separate connections: lock what is read for update.
    writes: new SqlWriteStorage(db, postgresCodec, { lockRows: true }),
    idempotency: new SqlIdempotencyStore(db, postgresCodec, { lockRows: true }),
    db,
    pool,
    loadDataset: (dataset) => loadPostgresDataset(db, plainDb, dataset, schema),
    close,
  }
}

function checkAdapterOptions(connection: PostgresConnection, options: PostgresAdapterOptions) {
  const hasUrl = 'connectionString' in connection && typeof connection.connectionString === 'string'
  const hasPool = 'pool' in connection && connection.pool !== undefined
  if (hasUrl === hasPool) throw new TypeError('openPostgresAdapter: pass exactly one of "connectionString" or "pool"')
  const { schema, statementTimeoutMs } = options
  if (schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError('openPostgresAdapter: "schema" must be a plain identifier of at most 63 characters')
  }
  if (statementTimeoutMs !== undefined) {
    if (hasPool) throw new TypeError('openPostgresAdapter: "statementTimeoutMs" applies to pools we create; set statement_timeout on your own pool')
    if (!Number.isInteger(statementTimeoutMs) || statementTimeoutMs < 0) {
      throw new TypeError('openPostgresAdapter: "statementTimeoutMs" must be an integer >= 0')
    }
  }
  return { schema, statementTimeoutMs: statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS }
}

/**
 * The statement timeout bounds reads; a migration building an index on a large host table,
 * or waiting for another process's migration lock, may rightly take longer. So migrations
 * run on one connection with the timeout lifted, and that connection's own value restored.
 *
 * Without a `schema` option the migration still names one, the connection's current schema:
 * Kysely's Migrator, given none, takes a `wfa_migrations` table in *any* schema as ours and
 * then fails to find it unqualified (seen when another schema of the database already held
 * an adapter's tables).
 */
async function migrateWithoutStatementTimeout(db: Kysely<any>, schema: string | undefined): Promise<void> {
  await db.connection().execute(async (conn) => {
    const { rows } = await sql<{ timeout: string; current: string | null }>`
      select current_setting('statement_timeout') as timeout, current_schema() as current`.execute(conn)
    const [settings] = rows
    const target = schema ?? settings?.current
    if (settings === undefined || target == null) {
      throw new Error('openPostgresAdapter: the connection has no current schema (search_path); pass the "schema" option')
    }
    await sql`select set_config('statement_timeout', '0', false)`.execute(conn)
    try {
      await migrateToLatest(conn.withSchema(target), postgresColumnTypes, target)
    } finally {
      await sql`select set_config('statement_timeout', ${settings.timeout}, false)`.execute(conn)
    }
  })
}

export { postgresCodec, postgresColumnTypes, postgresTypes } from './postgres-codec.js'
export { statementName } from './postgres-database.js'
export { migrateToLatest } from '../sql/migrate.js'
