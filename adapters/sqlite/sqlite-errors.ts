import { StorageUnavailable } from '../../src/ports/errors.js'

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
