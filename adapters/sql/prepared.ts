import { CompiledQuery, type Compilable, type Kysely } from 'kysely'

const SENTINEL = '\u0000wfa-param:'

/**
 * A named bind parameter for a query that is compiled once and executed many times.
 * Kysely builds the SQL with the sentinel in place of a value; `prepare` then records
 * which name each positional parameter stands for.
 */
export function param(name: string): any {
  return SENTINEL + name
}

/**
 * Begins SQL whose text is the same at every run, for a given store and its settings (values
 * are all bound parameters; a claim's text also varies with its size, so a store has a few
 * dozen at most): a Postgres adapter runs such a statement as a named prepared
 * statement, parsed once per connection (`createPostgresKysely`). A comment, so any dialect
 * runs the text as it is.
 */
export const FIXED_TEXT = '/* wfa:fixed */ '

/** SQL text plus the parameter names in bind order. */
export interface PreparedQuery {
  sql: string
  params: readonly string[]
}

/**
 * Compiles a Kysely query once. Building a query with Kysely costs tens of microseconds,
 * which is a large share of a fast list request, so the hot path binds values into SQL
 * compiled at first use instead of rebuilding it.
 */
export function prepare(query: Compilable): PreparedQuery {
  return prepareCompiled(query.compile())
}

/** `prepare` for SQL already compiled (raw `sql` is compiled against a Kysely instance: `sql\`…\`.compile(db)`). */
export function prepareCompiled(compiled: CompiledQuery): PreparedQuery {
  const params = compiled.parameters.map((value) => {
    if (typeof value !== 'string' || !value.startsWith(SENTINEL)) {
      throw new Error(`Prepared query has a literal parameter ${String(value)}; use param()`)
    }
    return value.slice(SENTINEL.length)
  })
  return { sql: compiled.sql, params }
}

/** Binds named values in the order the prepared SQL expects. */
export function bind(query: PreparedQuery, values: Readonly<Record<string, unknown>>): unknown[] {
  return query.params.map((name) => values[name])
}

/** Runs prepared SQL on a Kysely instance or transaction, `values` bound by name. @returns its rows. */
export async function runPrepared(db: QueryDb, query: PreparedQuery, values: Readonly<Record<string, unknown>>): Promise<Array<Record<string, any>>> {
  return (await db.executeQuery<Record<string, any>>(CompiledQuery.raw(query.sql, bind(query, values)))).rows
}

/**
 * Whom a list read is for, and which statement shape it runs: the same `shape` object for
 * every page and count query of one combination of filters on one resource. A runner may use
 * it to treat one tenant's expensive reads apart from everyone's cheap ones (SQLite moves
 * them off the event loop); it never changes the rows.
 */
export interface ReadScope {
  companyId: number
  shape: object
}

/** Runs prepared SQL. Each adapter supplies one (better-sqlite3 statements, pg named statements). */
export interface SqlRunner {
  all(query: PreparedQuery, values: unknown[], scope?: ReadScope): Promise<Record<string, unknown>[]>
}

export type QueryDb = Kysely<any>
