import { resolve } from 'node:path'
import type { Kysely } from 'kysely'
import type { ReferenceAdapterPorts } from '../../src/ports/index.js'
import { migrateToLatest } from '../sql/migrate.js'
import { loadDataset } from '../sql/sql-fixtures.js'
import { SqlAuditStore } from '../sql/sql-audit-store.js'
import { SqlIdempotencyStore } from '../sql/sql-idempotency-store.js'
import { SqlKeyStore } from '../sql/sql-key-store.js'
import { SqlModuleRegistry } from '../sql/sql-module-registry.js'
import { SqlStorage } from '../sql/sql-storage.js'
import type { SqlTransactor } from '../sql/sql-transactor.js'
import { SqlUsageStore } from '../sql/sql-usage-store.js'
import { SqlWebhookStore } from '../sql/sql-webhook-store.js'
import { SqlWriteStorage } from '../sql/sql-write-storage.js'
import { sqliteCodec, sqliteColumnTypes } from './sqlite-codec.js'
import { SqliteDueSignal } from './sqlite-due-signal.js'
import {
  createSqliteKysely,
  createSqliteRunner,
  createSqliteTransactor,
  isSharableWalFile,
  openSqliteDatabase,
  type SqliteDatabase,
  type SqliteOffLoop,
} from './sqlite-database.js'
import { DEFAULT_READ_WORKERS, SqliteReadPool } from './sqlite-read-pool.js'
import { SlowReadRouter } from './sqlite-slow-reads.js'
import { TransactionGate } from '../transaction-gate.js'

export interface SqliteAdapterOptions {
  /** A database file path (or `:memory:`); opened, and closed by `close()`. */
  filename?: string
  /** Or a better-sqlite3 database the host owns: used as is and never closed by us. */
  database?: SqliteDatabase
  /** Run migrations on open. Default true. */
  migrate?: boolean
  /**
   * Worker threads, each with a read-only connection, that run list reads seen to be slow for
   * a company, so they do not block the event loop. Needs a database file in WAL mode (a
   * `:memory:` database cannot be shared between connections). Default: 2 for a `filename`
   * other than `:memory:`; 0 for `:memory:` and for a host's `database` (opt in: see docs).
   * 0 keeps every read in process.
   */
  readWorkers?: number
  /**
   * When a list statement is slow (ms). A company's first run of a statement shape is timed on a
   * worker, and so is a statement that runs this long in process; slow there twice, the
   * company's reads of that shape go to the workers until none has been slow for 10 minutes.
   * 0 sends every list read to the workers. Default 2.
   */
  slowReadMs?: number
  /** Longest an off-loop read may take, queue wait included (ms), before it fails with `StorageUnavailable`. Default 5000. */
  readTimeoutMs?: number
}

/**
 * The ports over one SQLite database, plus the hooks the CLI and tests use.
 * Writes are one `BEGIN IMMEDIATE` transaction each, one at a time; idempotency records live in
 * `wfa_idempotency`, atomic across processes sharing the file. `loadDataset` writes a whole
 * dataset in one transaction (in-process reads wait for it); `close` ends the read workers and
 * leaves a host-owned database open. List reads seen to be slow for a company run on read
 * workers (`readWorkers`), which see committed data only.
 */
export interface SqliteAdapter extends ReferenceAdapterPorts {
  modules: SqlModuleRegistry
  webhooks: SqlWebhookStore
  db: Kysely<any>
  /**
   * Runs `work` in a write transaction on the adapter's connection, the way the ports do
   * (`BEGIN IMMEDIATE`, one at a time, reads held back): the transaction for a host's own
   * changes whose events it records with `webhooks.publish(trx, events)`. Their deliveries wake
   * this process's dispatcher once it commits.
   *
   * @example
   * await adapter.transaction(async (trx) => {
   *   await trx.updateTable('timesheets').set({ status: 'approved' }).where('id', '=', timesheetId).execute()
   *   await adapter.webhooks.publish(trx, [event])
   * })
   */
  transaction: SqlTransactor
  database: SqliteDatabase
  /** The read workers, when expensive reads run off the event loop (`readWorkers` > 0). */
  readPool: SqliteReadPool | undefined
  /**
   * Starts the read workers and lets each answer one read: call it before the server takes
   * traffic (`serve` does), so no request waits for a worker thread to start. Resolves with how
   * many workers answered (0 without workers); never rejects.
   */
  warmUp(): Promise<number>
}

/**
 * Opens the SQLite reference adapter.
 *
 * @example
 * const { storage, keyStore, modules, writes, idempotency, webhooks } = await openSqliteAdapter({ filename: 'workforce.db' })
 * await app.register(workforceApi, { prefix: '/api/public', storage, keyStore, modules, writes, idempotency, webhooks })
 */
export async function openSqliteAdapter(options: SqliteAdapterOptions): Promise<SqliteAdapter> {
  if ((options.filename === undefined) === (options.database === undefined)) {
    throw new TypeError('openSqliteAdapter: pass exactly one of "filename" or "database"')
  }
  const owned = options.database === undefined
  const database = options.database ?? openSqliteDatabase(options.filename as string)
  let offLoop: SqliteOffLoop | undefined
  try {
    offLoop = readOffLoop(database, owned, options)
  } catch (error) {
    if (owned) database.close()
    throw error
  }
  const db = createSqliteKysely(database)
  if (options.migrate ?? true) await migrateToLatest(db, sqliteColumnTypes)
  // One read-write connection: the gate keeps write transactions apart and reads out of them.
  const gate = new TransactionGate()
  // Every write transaction, so that any of them that makes deliveries due wakes the dispatcher at commit.
  const due = new SqliteDueSignal(database)
  const transact = due.transactor(createSqliteTransactor(db, database, gate))
  const pool = offLoop?.pool
  return {
    storage: new SqlStorage(db, createSqliteRunner(database, gate, offLoop), sqliteCodec),
    keyStore: new SqlKeyStore(db, sqliteCodec, { transact }),
    modules: new SqlModuleRegistry(db, sqliteCodec),
    writes: new SqlWriteStorage(db, sqliteCodec, { transact, notifyDue: due.notify }),
    idempotency: new SqlIdempotencyStore(db, sqliteCodec, { transact }),
    webhooks: new SqlWebhookStore(db, sqliteCodec, { transact, notifyDue: due.notify, subscribeDue: (wake) => due.subscribe(wake) }),
    audit: new SqlAuditStore(db, sqliteCodec),
    usage: new SqlUsageStore(db, sqliteCodec, { transact }),
    db,
    transaction: transact,
    database,
    readPool: pool,
    warmUp: async () => (pool === undefined ? 0 : pool.warmUp()),
    loadDataset: (dataset) => gate.exclusive(() => loadDataset(db, sqliteCodec, dataset)),
    async close() {
      await due.close()
      // Workers first: a read still running fails with StorageUnavailable rather than outlive the adapter.
      await pool?.close()
      if (owned) database.close()
    },
  }
}

/**
 * The webhook store over a host's own SQLite database, for a host with its own schema and ports
 * (examples/host-app). It creates our tables (all `wfa_`-prefixed; only the outbox and webhook
 * tables are used) and queries through the host's Kysely, so `publish(trx, …)` joins the host's
 * transactions and Kysely's connection lock keeps the store's own transactions out of them.
 * Without a wake-up signal, dispatchers find new deliveries by polling.
 *
 * @example
 * const webhooks = await openSqliteWebhookStore({ db })
 * await app.register(workforceApi, { storage, keyStore, modules, webhooks, webhookOptions: { secretKey } })
 */
export async function openSqliteWebhookStore(options: { db: Kysely<any>; migrate?: boolean }): Promise<SqlWebhookStore> {
  if (options.migrate ?? true) await migrateToLatest(options.db, sqliteColumnTypes)
  return new SqlWebhookStore(options.db, sqliteCodec)
}

/** The read workers and their router, or `undefined` when every read stays in process. */
function readOffLoop(database: SqliteDatabase, owned: boolean, options: SqliteAdapterOptions): SqliteOffLoop | undefined {
  const sharable = isSharableWalFile(database)
  const workers = options.readWorkers ?? (owned && sharable ? DEFAULT_READ_WORKERS : 0)
  if (!Number.isInteger(workers) || workers < 0) {
    throw new TypeError(`openSqliteAdapter: "readWorkers" must be a non-negative integer, got ${String(workers)}`)
  }
  if (workers === 0) return undefined
  if (!sharable) {
    throw new TypeError('openSqliteAdapter: "readWorkers" needs a database file in WAL mode; an in-memory database cannot be shared with worker connections')
  }
  const slowReadMs = options.slowReadMs
  if (slowReadMs !== undefined && !(Number.isFinite(slowReadMs) && slowReadMs >= 0)) {
    throw new TypeError(`openSqliteAdapter: "slowReadMs" must be a non-negative number, got ${String(slowReadMs)}`)
  }
  return {
    pool: new SqliteReadPool({
      filename: resolve(database.name),
      size: workers,
      ...(options.readTimeoutMs === undefined ? {} : { timeoutMs: options.readTimeoutMs }),
    }),
    router: new SlowReadRouter(slowReadMs === undefined ? {} : { thresholdMs: slowReadMs }),
  }
}

export { sqliteCodec, sqliteColumnTypes } from './sqlite-codec.js'
export { SqliteReadPool } from './sqlite-read-pool.js'
export { migrateToLatest } from '../sql/migrate.js'
