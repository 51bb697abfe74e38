import type { DueNotifier } from './due-signal.js'
import type { QueryDb } from './prepared.js'

/**
 * Runs `work` in one database transaction on `trx`: commits if it resolves, rolls back if it
 * throws. A dialect supplies its own when plain `db.transaction()` is not what it needs
 * (SQLite: `BEGIN IMMEDIATE` on its single connection, behind the read gate).
 */
export type SqlTransactor = <T>(work: (trx: QueryDb) => Promise<T>) => Promise<T>

/** How the shared write path adapts to a dialect. Everything is optional; the defaults suit Postgres. */
export interface SqlWriteOptions {
  /** Default: Kysely's `db.transaction().execute(work)`. */
  transact?: SqlTransactor
  /**
   * Lock rows read for update (`SELECT … FOR UPDATE`). Needed where transactions run
   * concurrently (Postgres); SQLite's write transaction is already exclusive and has no such clause.
   * Default false.
   */
  lockRows?: boolean
  /**
   * Wakes webhook dispatchers when a transaction that made deliveries due commits: called
   * inside it (Postgres: `pg_notify`; SQLite: a wake once the dialect's transactor commits).
   * Default: none, and dispatchers find due deliveries by polling.
   */
  notifyDue?: DueNotifier
}

/** The dialect's transactor from `options`, or else Kysely's own transactions on `db`. */
export function sqlTransactor(db: QueryDb, options: SqlWriteOptions): SqlTransactor {
  return options.transact ?? ((work) => db.transaction().execute(work))
}
