import { sql, type Kysely } from 'kysely'
import type * as pg from 'pg'
import type { ReferenceAdapterPorts } from '../../src/ports/index.js'
import { migrateToLatest } from '../sql/migrate.js'
import { SqlAuditStore } from '../sql/sql-audit-store.js'
import { SqlIdempotencyStore } from '../sql/sql-idempotency-store.js'
import { SqlKeyStore } from '../sql/sql-key-store.js'
import { SqlModuleRegistry } from '../sql/sql-module-registry.js'
import { SqlStorage } from '../sql/sql-storage.js'
import { SqlUsageStore } from '../sql/sql-usage-store.js'
import { SqlWebhookStore } from '../sql/sql-webhook-store.js'
import { SqlWriteStorage } from '../sql/sql-write-storage.js'
import { postgresCodec, postgresColumnTypes } from './postgres-codec.js'
import { createPostgresKysely, createPostgresPool, createPostgresRunner, POOL_SIZE, PostgresGuard } from './postgres-database.js'
import { isQueryCancelled } from './postgres-errors.js'
import { PostgresDueSignal, webhookChannel } from './postgres-due-signal.js'
import { loadPostgresDataset } from './postgres-fixtures.js'
import { invalidationChannel, PostgresInvalidationFeed, postgresNotifier } from './postgres-invalidations.js'

/**
 * How long the ports wait for the answer to one statement before they take the server for
 * unreachable (a 503, and fail-fast until it answers a probe). A frozen or unreachable server
 * never answers and `statement_timeout` runs on the server, so only the client can bound this;
 * `statement_timeout` stays below it so that a merely expensive statement never gets here. 1 s leaves a request (HTTP, event-loop lag under load,
 * the corridor's other steps) a second of room to answer within 2 s of the server going away,
 * and is ~10× our slowest statement at a million matching rows (a COUNT, ~60–90 ms per
 * million: docs/benchmarks-postgres.md). Tenants larger than ~10 million matching rows
 * need it raised, and then answer an outage that much later.
 */
export const DEFAULT_QUERY_TIMEOUT_MS = 1_000
/**
 * The share of `queryTimeoutMs` a pool we create gives `statement_timeout` when no
 * `statementTimeoutMs` is passed. The server's bound must fire first: a statement it stops is
 * an expensive request on a server that answers (`StatementTimeout`, 504, the connection kept),
 * while the client-side bound cannot tell a slow statement from a frozen server and reads it
 * as an outage (503 for every tenant until the server answers a probe). The remaining quarter
 * (250 ms by default) covers the cancel's way back to us and event-loop lag.
 */
export const STATEMENT_TIMEOUT_SHARE = 0.75
/**
 * Upper bound on any one statement on a pool we create, by default: three quarters of
 * `DEFAULT_QUERY_TIMEOUT_MS`. A runaway COUNT cannot pin a connection, and an expensive page
 * answers 504 `query_timeout` in 0.75 s instead of being taken for an outage.
 */
export const DEFAULT_STATEMENT_TIMEOUT_MS = DEFAULT_QUERY_TIMEOUT_MS * STATEMENT_TIMEOUT_SHARE
/** `statement_timeout` of a pool we create when `queryTimeoutMs` is 0 (no client-side bound) and no `statementTimeoutMs` is passed. */
export const STATEMENT_TIMEOUT_WITHOUT_QUERY_TIMEOUT_MS = 5_000
/**
 * How long the ports wait to check out a connection, connecting a new one included, before a
 * 503. A healthy pool hands one out in microseconds and a new connection takes milliseconds;
 * 1.5 s leaves room for a slow handshake on a loaded host, and still answers within 2 s of a
 * server that accepts TCP but never answers. (Requests queued behind clients stuck on a
 * frozen server do not wait this long: the first query timeout ends their wait.)
 */
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 1_500
/**
 * How long opening waits for the connection its migrations run on, when `acquireTimeoutMs` is
 * shorter. The first connection to a database that the server has just started or created
 * costs more than later ones (the backend builds its catalog caches), and a start on a busy
 * machine is not an outage: CI saw an open fail at 1.5 s, its connection still being made.
 */
export const OPEN_ACQUIRE_TIMEOUT_MS = 10_000
/**
 * TCP keepalive's initial delay on the connections of a pool we create: an idle connection
 * to a host that vanished (no FIN, no RST) is found dead by the kernel instead of at the next
 * query. The query timeout already bounds requests; this only keeps the pool clean.
 */
export const DEFAULT_KEEPALIVE_DELAY_MS = 10_000

/**
 * Connections `warmUp()` opens on a pool we create, and which that pool then keeps open when
 * idle: all of them (pg's pool size). A cold pool answers its first burst of requests only as
 * fast as it can complete handshakes, each of which also queues behind the others; requests
 * that wait past `acquireTimeoutMs` meanwhile get 503s (issue 21: 40 of the first 4,000
 * writes). Ten idle connections cost the server about 10 × a few MB.
 */
export const DEFAULT_MIN_CONNECTIONS = POOL_SIZE

/** Where the data lives: a server we connect to, or a pool the host owns. */
export type PostgresConnection =
  | {
      /** `postgres://…`; we create the pool and `close()` ends it. */
      connectionString: string
    }
  | {
      /**
       * A pg pool the host owns: used as is and never ended by us, nor are its settings or
       * session settings changed. What we set on our own pools is the host's to set on this one:
       * `new Pool({ options: '-c statement_timeout=750 -c plan_cache_mode=force_custom_plan',
       * connectionTimeoutMillis: 1500, keepAlive: true, keepAliveInitialDelayMillis: 10000 })`
       * (see docs/benchmarks-postgres.md for the first two). `queryTimeoutMs` and
       * `acquireTimeoutMs` still bound our own operations on it.
       *
       * Set `statement_timeout` below `queryTimeoutMs` (1,000 ms by default): then Postgres
       * stops an expensive statement itself and the request gets a 504 `query_timeout`, the
       * connection kept. Without it (or with it above `queryTimeoutMs`) the client-side bound
       * fires first, and cannot tell an expensive statement from a frozen server: the request
       * gets a 503 and every request fails fast with 503 until the server answers a probe.
       */
      pool: pg.Pool
    }

export interface PostgresAdapterOptions {
  /** Keep every table (and the migration tables) in this schema, created if missing. Default: the connection's `search_path`. */
  schema?: string
  /**
   * `statement_timeout` of the connections of a pool we create, in milliseconds: a statement
   * past it is stopped by Postgres and the request gets a 504 `query_timeout` (not an outage).
   * Must be below `queryTimeoutMs` when both are on, or `openPostgresAdapter` refuses it: the
   * server's bound has to fire before the client-side one, which reads a statement still
   * running as an outage (503). 0 disables it (and every expensive statement then meets the
   * client-side bound). Default: three quarters of `queryTimeoutMs` (750 with its default), or
   * 5,000 when `queryTimeoutMs` is 0. A host's pool sets `statement_timeout` itself (see
   * `PostgresConnection`). Migrations and `loadDataset` run without it.
   */
  statementTimeoutMs?: number
  /**
   * Client-side bound on the answer to one statement of the ports, in milliseconds: it detects
   * a frozen or unreachable server. Past it the request gets a 503, the connection is
   * discarded and the adapter fails fast until the server answers again. Keep it above
   * `statement_timeout`, so that a merely expensive statement is stopped by the server first
   * (504). Applies to a host's pool too; not to migrations or `loadDataset`. 0 disables it.
   * Default 1,000.
   */
  queryTimeoutMs?: number
  /**
   * Client-side bound on checking out a connection (connecting a new one included), in
   * milliseconds; past it the request gets a 503. On a pool we create it is also pg-pool's
   * `connectionTimeoutMillis`. Applies to a host's pool too. 0 disables it. Default 1,500.
   * Opening waits longer for the connection its migrations run on: up to 10,000 ms
   * (`OPEN_ACQUIRE_TIMEOUT_MS`), since a first connection to a database just started or
   * created costs more.
   */
  acquireTimeoutMs?: number
  /** TCP keepalive's initial delay on a pool we create, in milliseconds; 0 disables keepalive. Default 10,000. */
  keepAliveDelayMs?: number
  /**
   * How many connections `warmUp()` opens, 0 to 10. On a pool we create they then stay open
   * when idle (pg-pool's `min`). Default 10 on a pool we create; 0 on a host's pool (whose
   * `min` and `idleTimeoutMillis` are the host's to set).
   */
  minConnections?: number
  /** Run migrations on open. Default true. */
  migrate?: boolean
}

/**
 * The ports over one Postgres database (or schema), plus the hooks the CLI and tests use.
 * Writes are one transaction each on a pooled connection, rows read for update locked;
 * idempotency records live in `wfa_idempotency`, atomic across every process on the database.
 * `loadDataset` writes a whole dataset in one transaction, then moves id sequences past it;
 * `close` ends the pool only if this adapter created it.
 *
 * When Postgres cannot answer — stopped, frozen, unreachable, out of connections, a statement
 * cancelled on request — the ports throw `StorageUnavailable` (a 503 with Retry-After) within
 * `acquireTimeoutMs` or `queryTimeoutMs`, and fail at once while the outage lasts; the
 * adapter recovers by itself when the server answers again. A statement Postgres stopped at
 * `statement_timeout` is not an outage: that operation throws `StatementTimeout` (a 504
 * `query_timeout`) and every other goes on as before.
 */
export interface PostgresAdapter extends ReferenceAdapterPorts {
  modules: SqlModuleRegistry
  /**
   * Key and module changes made anywhere on this database (any instance, the CLI), through
   * LISTEN/NOTIFY: `pg_notify` is sent in the change's own transaction by `keyStore` and
   * `modules`, and the plugin follows the feed on a connection of its own.
   */
  invalidations: PostgresInvalidationFeed
  /**
   * Webhook endpoints and deliveries. A transaction that makes deliveries due sends
   * `pg_notify` on `wfa_webhooks[_<schema>]`; `subscribeDue` listens on a connection of its own,
   * ended by `close`. A host records its own events with `publish(trx, events)`, `trx` being a
   * Kysely transaction on this database (the `schema` is applied to it).
   */
  webhooks: SqlWebhookStore
  /** Kysely over our tables, schema-qualified when `schema` is set. */
  db: Kysely<any>
  pool: pg.Pool
  /**
   * Opens `minConnections` connections at once and leaves them idle in the pool: call it
   * before the server takes traffic (`serve` does, before it listens), so the first burst of
   * requests does not queue behind connection handshakes. Resolves with how many are open
   * (fewer when the server refuses some: `max_connections`); never rejects.
   *
   * @example
   * const adapter = await openPostgresAdapter({ connectionString: process.env.DATABASE_URL! })
   * await adapter.warmUp()
   * await app.listen({ port: 3000 })
   */
  warmUp(): Promise<number>
}

/**
 * Opens the Postgres adapter: the same SQL and migrations as SQLite, through Kysely and pg.
 * Two processes opening it at once on a fresh database is safe: migrations run under
 * Kysely's Postgres advisory lock, in our own `wfa_migrations` table.
 *
 * @example
 * const { storage, keyStore, modules, writes, idempotency, webhooks, close } = await openPostgresAdapter(
 *   { connectionString: process.env.DATABASE_URL! },
 *   { schema: 'workforce_api' },
 * )
 * await app.register(workforceApi, { prefix: '/api/public', storage, keyStore, modules, writes, idempotency, webhooks })
 * app.addHook('onClose', close)
 */
export async function openPostgresAdapter(connection: PostgresConnection, options: PostgresAdapterOptions = {}): Promise<PostgresAdapter> {
  const settings = checkAdapterOptions(connection, options)
  const { schema } = settings
  const owned = 'connectionString' in connection
  const pool = owned ? createPostgresPool(connection.connectionString, settings) : connection.pool
  const guard = new PostgresGuard(pool, settings)
  const plainDb = createPostgresKysely(guard)
  const db = schema === undefined ? plainDb : plainDb.withSchema(schema)
  // Dataset loads may rightly run long: bounded only while checking out, and run with
  // statement_timeout lifted (withoutStatementTimeout). Migrations have a guard of their own (migrateOnOpen).
  const unboundedGuard = new PostgresGuard(pool, { acquireTimeoutMs: settings.acquireTimeoutMs, queryTimeoutMs: 0 })
  const unboundedPlainDb = createPostgresKysely(unboundedGuard)
  const clientConfig: pg.ClientConfig = owned
    ? { connectionString: connection.connectionString }
    : (pool as unknown as { options: pg.ClientConfig }).options
  const due = new PostgresDueSignal(clientConfig, webhookChannel(schema))
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    // Listeners have connections of their own, outside the pool.
    await due.close()
    guard.close()
    unboundedGuard.close()
    await plainDb.destroy()
    await unboundedPlainDb.destroy()
    if (owned) await pool.end()
  }
  try {
    if (options.migrate ?? true) await migrateOnOpen(owned ? connection.connectionString : pool, settings)
  } catch (error) {
    await close()
    throw error
  }
  const channel = invalidationChannel(schema)
  const notify = postgresNotifier(channel)
  return {
    storage: new SqlStorage(db, createPostgresRunner(guard), postgresCodec),
    keyStore: new SqlKeyStore(db, postgresCodec, { notify }),
    modules: new SqlModuleRegistry(db, postgresCodec, notify),
    invalidations: new PostgresInvalidationFeed(clientConfig, channel),
    // Transactions run concurrently on separate connections: lock what is read for update.
    writes: new SqlWriteStorage(db, postgresCodec, { lockRows: true, notifyDue: due.notify }),
    idempotency: new SqlIdempotencyStore(db, postgresCodec, { lockRows: true }),
    webhooks: new SqlWebhookStore(db, postgresCodec, {
      lockRows: true,
      notifyDue: due.notify,
      subscribeDue: (wake) => due.subscribe(wake),
      dueChannel: webhookChannel(schema),
      schema,
    }),
    audit: new SqlAuditStore(db, postgresCodec),
    usage: new SqlUsageStore(db, postgresCodec),
    db,
    pool,
    warmUp: () => guard.warmUp(settings.minConnections),
    loadDataset: (dataset) =>
      withoutStatementTimeout(unboundedPlainDb, (conn) => loadPostgresDataset(schema === undefined ? conn : conn.withSchema(schema), conn, dataset, schema)),
    close,
  }
}

function checkAdapterOptions(connection: PostgresConnection, options: PostgresAdapterOptions) {
  const hasUrl = 'connectionString' in connection && typeof connection.connectionString === 'string'
  const hasPool = 'pool' in connection && connection.pool !== undefined
  if (hasUrl === hasPool) throw new TypeError('openPostgresAdapter: pass exactly one of "connectionString" or "pool"')
  const { schema } = options
  if (schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError('openPostgresAdapter: "schema" must be a plain identifier of at most 63 characters')
  }
  if (hasPool && options.statementTimeoutMs !== undefined) {
    throw new TypeError('openPostgresAdapter: "statementTimeoutMs" applies to pools we create; set statement_timeout on your own pool')
  }
  if (hasPool && options.keepAliveDelayMs !== undefined) {
    throw new TypeError('openPostgresAdapter: "keepAliveDelayMs" applies to pools we create; set keepAlive on your own pool')
  }
  const minConnections = options.minConnections ?? (hasPool ? 0 : DEFAULT_MIN_CONNECTIONS)
  if (!Number.isInteger(minConnections) || minConnections < 0 || minConnections > POOL_SIZE) {
    throw new TypeError(`openPostgresAdapter: "minConnections" must be an integer from 0 to ${POOL_SIZE}`)
  }
  const queryTimeoutMs = milliseconds(options, 'queryTimeoutMs', DEFAULT_QUERY_TIMEOUT_MS)
  const statementTimeoutMs = milliseconds(options, 'statementTimeoutMs', defaultStatementTimeoutMs(queryTimeoutMs))
  if (options.statementTimeoutMs !== undefined && statementTimeoutMs > 0 && queryTimeoutMs > 0 && statementTimeoutMs >= queryTimeoutMs) {
    throw new TypeError(
      `openPostgresAdapter: "statementTimeoutMs" (${statementTimeoutMs}) must be below "queryTimeoutMs" (${queryTimeoutMs}): ` +
        'Postgres has to stop an expensive statement (504) before the client-side bound takes it for an outage (503)',
    )
  }
  return {
    schema,
    statementTimeoutMs,
    queryTimeoutMs,
    acquireTimeoutMs: milliseconds(options, 'acquireTimeoutMs', DEFAULT_ACQUIRE_TIMEOUT_MS),
    keepAliveDelayMs: milliseconds(options, 'keepAliveDelayMs', DEFAULT_KEEPALIVE_DELAY_MS),
    minConnections,
  }
}

/**
 * `statement_timeout` of a pool we create when the host passes none: `STATEMENT_TIMEOUT_SHARE`
 * of `queryTimeoutMs` (rounded down, at least 1 ms), or `STATEMENT_TIMEOUT_WITHOUT_QUERY_TIMEOUT_MS`
 * when `queryTimeoutMs` is 0.
 *
 * @example
 * defaultStatementTimeoutMs(1_000) // 750
 * defaultStatementTimeoutMs(0) // 5_000
 */
export function defaultStatementTimeoutMs(queryTimeoutMs: number): number {
  if (queryTimeoutMs <= 0) return STATEMENT_TIMEOUT_WITHOUT_QUERY_TIMEOUT_MS
  return Math.max(1, Math.floor(queryTimeoutMs * STATEMENT_TIMEOUT_SHARE))
}

type MillisecondOption = 'statementTimeoutMs' | 'queryTimeoutMs' | 'acquireTimeoutMs' | 'keepAliveDelayMs'

function milliseconds(options: PostgresAdapterOptions, name: MillisecondOption, fallback: number): number {
  const value = options[name]
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 0) throw new TypeError(`openPostgresAdapter: "${name}" must be an integer >= 0`)
  return value
}

/**
 * The statement timeout bounds the ports' statements; a migration building an index on a large
 * host table, waiting for another process's migration lock, or a dataset load inserting many
 * rows may rightly take longer. So these run on one connection with the timeout lifted, and
 * that connection's own value restored. `work` gets the connection and its current schema.
 */
async function withoutStatementTimeout<T>(db: Kysely<any>, work: (conn: Kysely<any>, currentSchema: string | null) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    // Reading the settings and lifting the timeout still run under the connection's own
    // timeout, which may be tiny (the tests use 1 ms), so on a loaded machine either can be
    // cancelled. A cancelled statement's transaction is rolled back, its set_config with it, so
    // both are tried again. Any cancel counts (57014), not only one worded as a statement
    // timeout: when the timer fires just as a statement ends, Postgres reports the cancel
    // during the next statement as "due to user request", and nothing else cancels this
    // connection's statements (its guard has no query timeout).
    let settings: { timeout: string; current: string | null } | undefined
    for (let attempt = 1; settings === undefined; attempt += 1) {
      try {
        const answer = await sql<{ timeout: string; current: string | null }>`select current_setting('statement_timeout') as timeout, current_schema() as current`.execute(conn)
        const [row] = answer.rows
        if (row === undefined) throw new Error('openPostgresAdapter: could not read the connection\'s statement_timeout')
        await sql`select set_config('statement_timeout', '0', false)`.execute(conn)
        settings = row
      } catch (error) {
        if (attempt >= 10 || !isQueryCancelled(error)) throw error
      }
    }
    try {
      return await work(conn, settings.current)
    } finally {
      await sql`select set_config('statement_timeout', ${settings.timeout}, false)`.execute(conn)
    }
  })
}

/**
 * The migrations of `openPostgresAdapter`, waiting up to `OPEN_ACQUIRE_TIMEOUT_MS` for their
 * connection (unless `acquireTimeoutMs` is longer, or 0). A pool we create bounds its connects
 * itself (`connectionTimeoutMillis`), so they run on a one-off pool with the longer bound,
 * ended once they are done; on a host's pool, its own connect timeout applies.
 */
async function migrateOnOpen(source: string | pg.Pool, settings: ReturnType<typeof checkAdapterOptions>): Promise<void> {
  const acquireTimeoutMs = settings.acquireTimeoutMs === 0 ? 0 : Math.max(settings.acquireTimeoutMs, OPEN_ACQUIRE_TIMEOUT_MS)
  const pool = typeof source === 'string' ? createPostgresPool(source, { ...settings, acquireTimeoutMs, minConnections: 0 }) : source
  const guard = new PostgresGuard(pool, { acquireTimeoutMs, queryTimeoutMs: 0 })
  const db = createPostgresKysely(guard)
  try {
    await migrateWithoutStatementTimeout(db, settings.schema)
  } finally {
    guard.close()
    await db.destroy()
    if (typeof source === 'string') await pool.end()
  }
}

/**
 * Migrations, without the statement timeout (`withoutStatementTimeout`).
 *
 * Without a `schema` option the migration still names one, the connection's current schema:
 * Kysely's Migrator, given none, takes a `wfa_migrations` table in *any* schema as ours and
 * then fails to find it unqualified (seen when another schema of the database already held
 * an adapter's tables).
 */
async function migrateWithoutStatementTimeout(db: Kysely<any>, schema: string | undefined): Promise<void> {
  await withoutStatementTimeout(db, async (conn, current) => {
    const target = schema ?? current
    if (target == null) {
      throw new Error('openPostgresAdapter: the connection has no current schema (search_path); pass the "schema" option')
    }
    await migrateToLatest(conn.withSchema(target), postgresColumnTypes, target)
  })
}

export { postgresCodec, postgresColumnTypes, postgresTypes } from './postgres-codec.js'
export { statementName, UNAVAILABLE_PROBE_INTERVAL_MS } from './postgres-database.js'
export { isStatementTimeout, toStorageError, unavailableReason, type UnavailableReason } from './postgres-errors.js'
export { migrateToLatest } from '../sql/migrate.js'
