import Database from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import type { PreparedQuery, SqlRunner } from '../sql/prepared.js'
import type { SqlTransactor } from '../sql/sql-transactor.js'
import { untilReadable, type TransactionGate } from '../transaction-gate.js'

export type SqliteDatabase = Database.Database

/** Opens a database file with the settings a server wants: WAL, a busy timeout, normal sync. */
export function openSqliteDatabase(filename: string): SqliteDatabase {
  const database = new Database(filename)
  database.pragma('journal_mode = WAL')
  database.pragma('synchronous = NORMAL')
  database.pragma('busy_timeout = 5000')
  return database
}

export function createSqliteKysely(database: SqliteDatabase): Kysely<any> {
  return new Kysely({ dialect: new SqliteDialect({ database }) })
}

/**
 * Runs prepared SQL through better-sqlite3 statements, each prepared once and reused.
 * While a write transaction is open on the connection, reads wait for it to end (`gate`).
 */
export function createSqliteRunner(database: SqliteDatabase, gate: TransactionGate): SqlRunner {
  const statements = new Map<string, Database.Statement>()
  return {
    async all(query: PreparedQuery, values: unknown[]) {
      // No await unless a write transaction is open: the fast path stays synchronous.
      if (gate.readable() !== undefined) await untilReadable(gate)
      let statement = statements.get(query.sql)
      if (statement === undefined) {
        statement = database.prepare(query.sql)
        statements.set(query.sql, statement)
      }
      return statement.all(...values) as Record<string, unknown>[]
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
