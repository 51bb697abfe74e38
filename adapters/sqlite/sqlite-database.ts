import Database from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { PreparedQuery, SqlRunner } from '../sql/prepared.js'

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

/** Runs prepared SQL through better-sqlite3 statements, each prepared once and reused. */
export function createSqliteRunner(database: SqliteDatabase): SqlRunner {
  const statements = new Map<string, Database.Statement>()
  return {
    async all(query: PreparedQuery, values: unknown[]) {
      let statement = statements.get(query.sql)
      if (statement === undefined) {
        statement = database.prepare(query.sql)
        statements.set(query.sql, statement)
      }
      return statement.all(...values) as Record<string, unknown>[]
    },
  }
}
