import type { SqliteDatabase as KyselySqliteDatabase, SqliteStatement as KyselySqliteStatement } from 'kysely'
import { StorageUnavailable } from '../../src/ports/errors.js'
import type { SqliteDatabase } from './sqlite-database.js'

/**
 * SQLite's "cannot answer now": the file is locked by another connection past the busy
 * timeout (`SQLITE_BUSY`, and its extended codes such as `SQLITE_BUSY_SNAPSHOT`), or a
 * table is locked (`SQLITE_LOCKED…`). Retrying later can succeed; nothing is wrong with the request.
 */
export function isSqliteUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
}

/** `error` as the port's `StorageUnavailable` (503 with Retry-After) when SQLite could not answer now; otherwise unchanged. */
export function sqliteStorageError(error: unknown): unknown {
  if (!isSqliteUnavailable(error)) return error
  return new StorageUnavailable(`sqlite: ${(error as Error).message}`, { cause: error })
}

/** Runs a synchronous better-sqlite3 call, rethrowing busy and locked errors as `StorageUnavailable`. */
export function guardSqlite<T>(run: () => T): T {
  try {
    return run()
  } catch (error) {
    throw sqliteStorageError(error)
  }
}

/**
 * The database as Kysely's SQLite dialect sees it, with busy and locked errors rethrown as
 * `StorageUnavailable`: the key store, module registry, idempotency store and writes all run
 * through Kysely, so one wrapper covers them (`BEGIN IMMEDIATE` past the busy timeout included).
 */
export function guardedForKysely(database: SqliteDatabase): KyselySqliteDatabase {
  return {
    close: () => database.close(),
    prepare(sql: string): KyselySqliteStatement {
      const statement = guardSqlite(() => database.prepare(sql))
      return {
        reader: statement.reader,
        all: (parameters) => guardSqlite(() => statement.all(parameters)),
        run: (parameters) => guardSqlite(() => statement.run(parameters)),
        iterate: (parameters) => guardSqlite(() => statement.iterate(parameters)),
      }
    },
  }
}
