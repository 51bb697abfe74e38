import type { Kysely } from 'kysely'
import type { ReferenceAdapterPorts } from '../../src/ports/index.js'
import { migrateToLatest } from '../sql/migrate.js'
import { loadDataset } from '../sql/sql-fixtures.js'
import { SqlIdempotencyStore } from '../sql/sql-idempotency-store.js'
import { SqlKeyStore } from '../sql/sql-key-store.js'
import { SqlModuleRegistry } from '../sql/sql-module-registry.js'
import { SqlStorage } from '../sql/sql-storage.js'
import { SqlWriteStorage } from '../sql/sql-write-storage.js'
import { sqliteCodec, sqliteColumnTypes } from './sqlite-codec.js'
import { createSqliteKysely, createSqliteRunner, createSqliteTransactor, openSqliteDatabase, type SqliteDatabase } from './sqlite-database.js'
import { TransactionGate } from '../transaction-gate.js'

export interface SqliteAdapterOptions {
  /** A database file path (or `:memory:`); opened, and closed by `close()`. */
  filename?: string
  /** Or a better-sqlite3 database the host owns: used as is and never closed by us. */
  database?: SqliteDatabase
  /** Run migrations on open. Default true. */
  migrate?: boolean
}

/**
 * The ports over one SQLite database, plus the hooks the CLI and tests use.
 * Writes are one `BEGIN IMMEDIATE` transaction each, one at a time; idempotency records live in
 * `wfa_idempotency`, atomic across processes sharing the file. `loadDataset` writes a whole
 * dataset in one transaction (reads wait for it); `close` leaves a host-owned database open.
 */
export interface SqliteAdapter extends ReferenceAdapterPorts {
  modules: SqlModuleRegistry
  db: Kysely<any>
  database: SqliteDatabase
}

/**
 * Opens the SQLite reference adapter.
 *
 * @example
 * const { storage, keyStore, modules, writes, idempotency } = await openSqliteAdapter({ filename: 'workforce.db' })
 * await app.register(workforceApi, { prefix: '/api/public', storage, keyStore, modules, writes, idempotency })
 */
export async function openSqliteAdapter(options: SqliteAdapterOptions): Promise<SqliteAdapter> {
  if ((options.filename === undefined) === (options.database === undefined)) {
    throw new TypeError('openSqliteAdapter: pass exactly one of "filename" or "database"')
  }
  const owned = options.database === undefined
  const database = options.database ?? openSqliteDatabase(options.filename as string)
  const db = createSqliteKysely(database)
  if (options.migrate ?? true) await migrateToLatest(db, sqliteColumnTypes)
  // One connection: the gate keeps write transactions apart and reads out of them.
  const gate = new TransactionGate()
  const transact = createSqliteTransactor(db, database, gate)
  return {
    storage: new SqlStorage(db, createSqliteRunner(database, gate), sqliteCodec),
    keyStore: new SqlKeyStore(db, sqliteCodec),
    modules: new SqlModuleRegistry(db, sqliteCodec),
    writes: new SqlWriteStorage(db, sqliteCodec, { transact }),
    idempotency: new SqlIdempotencyStore(db, sqliteCodec, { transact }),
    db,
    database,
    loadDataset: (dataset) => gate.exclusive(() => loadDataset(db, sqliteCodec, dataset)),
    async close() {
      if (owned) database.close()
    },
  }
}

export { sqliteCodec, sqliteColumnTypes } from './sqlite-codec.js'
export { migrateToLatest } from '../sql/migrate.js'
