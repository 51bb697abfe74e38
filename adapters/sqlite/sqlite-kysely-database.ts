import type { SqliteDatabase as KyselySqliteDatabase, SqliteStatement as KyselySqliteStatement } from 'kysely'
import type { SqliteDatabase } from './sqlite-database.js'
import { guardSqlite } from './sqlite-errors.js'
import { STATEMENT_CACHE_MAX, StatementCache } from './sqlite-statement-cache.js'

/** The database as Kysely's SQLite dialect sees it, with `prepare` served from a bounded cache. */
export interface CachedKyselySqliteDatabase extends KyselySqliteDatabase {
  /** Statements held now (at most the cache's `max`). */
  readonly cachedStatements: number
}

/**
 * The database as Kysely's SQLite dialect sees it, for our own Kysely over it: the key store,
 * module registry, idempotency store, writes and webhook store all run through it.
 *
 * - **Statements are prepared once per SQL text.** Kysely's driver calls `prepare(sql)` for every
 *   query it runs; better-sqlite3 compiles the SQL each time (11 % of a webhook delivery's CPU
 *   in issue 25). Here `prepare` answers from a `StatementCache` of the `max` most recently used
 *   texts. A better-sqlite3 statement binds its parameters per call and runs `all`/`run`
 *   synchronously to the end, so one statement serves every caller in turn.
 * - **`iterate` gets a statement of its own.** An iterator keeps its statement busy until it
 *   ends, and Kysely's `stream()` yields between rows: a query of the same text in that time
 *   would find the cached statement busy ("This statement is busy executing a query"). Streams
 *   are rare here, so they prepare afresh as before.
 * - **Busy and locked errors become `StorageUnavailable`** (`guardSqlite`), `BEGIN IMMEDIATE`
 *   past the busy timeout included.
 *
 * @example
 * const db = new Kysely({ dialect: new SqliteDialect({ database: cachedForKysely(database) }) })
 */
export function cachedForKysely(database: SqliteDatabase, max = STATEMENT_CACHE_MAX): CachedKyselySqliteDatabase {
  const statements = new StatementCache<KyselySqliteStatement>((sql) => {
    const statement = guardSqlite(() => database.prepare(sql))
    return {
      reader: statement.reader,
      all: (parameters) => guardSqlite(() => statement.all(parameters)),
      run: (parameters) => guardSqlite(() => statement.run(parameters)),
      iterate: (parameters) => guardSqlite(() => database.prepare(sql).iterate(parameters)),
    }
  }, max)
  return {
    close: () => database.close(),
    prepare: (sql) => statements.get(sql),
    get cachedStatements() {
      return statements.size
    },
  }
}
