import type * as Database from 'better-sqlite3'
import { Kysely, SqliteDialect, SqliteQueryCompiler, ValueNode, sql, type LimitNode, type QueryCompiler } from 'kysely'
import type { PreparedQuery, ReadScope, SqlRunner } from '../sql/prepared.js'
import type { SqlTransactor } from '../sql/sql-transactor.js'
import { untilReadable, type TransactionGate } from '../transaction-gate.js'
import { BetterSqlite3 } from './sqlite-driver.js'
import { guardSqlite } from './sqlite-errors.js'
import { cachedForKysely } from './sqlite-kysely-database.js'
import type { SqliteReadPool } from './sqlite-read-pool.js'
import type { SlowReadRouter } from './sqlite-slow-reads.js'
import { StatementCache } from './sqlite-statement-cache.js'

export type SqliteDatabase = Database.Database

/**
 * How long the server's connection waits for another process's write lock (ms) before the
 * request fails with `StorageUnavailable` (503). better-sqlite3 waits synchronously, on the
 * event loop: every tenant waits with it, so this stays short; writes hold the lock for milliseconds.
 */
export const BUSY_TIMEOUT_MS = 1_000

/** Opens a database file with the settings a server wants: WAL, a busy timeout, normal sync. */
export function openSqliteDatabase(filename: string): SqliteDatabase {
  const database = new BetterSqlite3(filename)
  // Ignored by `:memory:`, which keeps its own journal: there is no file to share.
  database.pragma('journal_mode = WAL')
  database.pragma('synchronous = NORMAL')
  database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
  return database
}

/** Whether other connections (read workers) can open `database` and see what it commits: a file in WAL mode. */
export function isSharableWalFile(database: SqliteDatabase): boolean {
  return !database.memory && database.name !== '' && database.pragma('journal_mode', { simple: true }) === 'wal'
}

/**
 * Kysely over `database`, each statement prepared once per SQL text (a bounded cache), busy
 * and locked errors rethrown as `StorageUnavailable` (`cachedForKysely`), and each bound LIMIT
 * written so that SQLite does not prepare the statement again at every run (`LimitAtRunTime`).
 */
export function createSqliteKysely(database: SqliteDatabase): Kysely<any> {
  return new Kysely({ dialect: new LimitAtRunTimeDialect({ database: cachedForKysely(database) }) })
}

/**
 * SQLite's compiler, with a bound LIMIT written `? + 0`. SQLite plans with the value bound to a
 * plain `LIMIT ?`, so a new binding expires the statement and its next run prepares it again:
 * every list page did (50–200 µs for a page of the seeded company's users, employees or
 * to-dos, against its 170–270 µs run). `? + 0` is computed when the statement runs, as before
 * SQLite read the value: `EXPLAIN QUERY PLAN` gives the same plan, and nothing is prepared
 * again. `SqlCodec.boundLimits` is the same fact for raw SQL.
 */
class LimitAtRunTime extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    super.visitLimit(node)
    if (ValueNode.is(node.limit) && node.limit.immediate !== true) this.append(' + 0')
  }
}

class LimitAtRunTimeDialect extends SqliteDialect {
  override createQueryCompiler(): QueryCompiler {
    return new LimitAtRunTime()
  }
}

/** Where expensive list reads go instead of the event loop. */
export interface SqliteOffLoop {
  pool: SqliteReadPool
  router: SlowReadRouter
}

/**
 * Runs prepared SQL through better-sqlite3 statements, each prepared once and reused (the
 * `STATEMENT_CACHE_MAX` most recently used ones).
 * While a write transaction is open on the connection, reads wait for it to end (`gate`).
 *
 * With `offLoop`, list reads (those with a `scope`) that `router` has seen to be slow for that
 * company and shape run on `pool`'s worker threads instead, without the gate: their
 * connections see committed data only. Reads inside a write transaction always stay here, on
 * the transaction's connection. Every list statement is timed, here or on its worker, to feed `router`.
 */
export function createSqliteRunner(database: SqliteDatabase, gate: TransactionGate, offLoop?: SqliteOffLoop): SqlRunner {
  const statements = new StatementCache((text) => guardSqlite(() => database.prepare(text)))
  const inProcess = (query: PreparedQuery, values: unknown[]) => {
    const prepared = statements.get(query.sql)
    return guardSqlite(() => prepared.all(...values) as Record<string, unknown>[])
  }
  if (offLoop === undefined) {
    return {
      async all(query: PreparedQuery, values: unknown[]) {
        // No await unless a write transaction is open: the fast path stays synchronous.
        if (gate.readable() !== undefined) await untilReadable(gate)
        return inProcess(query, values)
      },
    }
  }
  const { pool, router } = offLoop
  return {
    async all(query: PreparedQuery, values: unknown[], scope?: ReadScope) {
      if (scope === undefined) {
        if (gate.readable() !== undefined) await untilReadable(gate)
        return inProcess(query, values)
      }
      if (!gate.inside() && router.offLoop(scope.companyId, scope.shape, query)) {
        let read
        try {
          read = await pool.all(query.sql, values, scope.companyId)
        } catch (error) {
          router.probeFailed(scope.companyId, scope.shape, query)
          throw error
        }
        router.observeOffLoop(scope.companyId, scope.shape, query, read.ms)
        return read.rows
      }
      if (gate.readable() !== undefined) await untilReadable(gate)
      const started = performance.now()
      const rows = inProcess(query, values)
      router.observeInProcess(scope.companyId, scope.shape, query, performance.now() - started)
      return rows
    },
  }
}

/**
 * Write transactions on the single connection: behind `gate` (one at a time, reads held
 * back), and begun with `BEGIN IMMEDIATE`, which takes the database's write lock at once.
 * With Kysely's plain (deferred) `BEGIN`, two processes could both read a slot and then
 * fail to upgrade to writing; here the second waits (busy_timeout) and then reads the
 * first one's committed row.
 */
export function createSqliteTransactor(db: Kysely<any>, database: SqliteDatabase, gate: TransactionGate): SqlTransactor {
  return (work) =>
    gate.exclusive(() =>
      // `connection()` holds Kysely's connection for the whole transaction, so its other
      // queries (key store, module registry) wait for the commit too.
      db.connection().execute(async (conn) => {
        await sql`begin immediate`.execute(conn)
        try {
          const result = await work(conn)
          await sql`commit`.execute(conn)
          return result
        } catch (error) {
          // SQLite may already have rolled back on its own (e.g. a full disk).
          if (database.inTransaction) await sql`rollback`.execute(conn)
          throw error
        }
      }),
    )
}
