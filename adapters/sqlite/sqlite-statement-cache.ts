import type * as Database from 'better-sqlite3'

/**
 * Prepared statements kept per connection, at most. A statement costs about 14 KiB of native
 * memory; the texts are finite (one per resource × filter combination × statement kind, about
 * 1,600), but a server that kept them all on three connections would hold about 66 MiB for
 * them alone. 256 covers every statement of a client that uses a few dozen filter
 * combinations: ≈ 3.5 MiB per connection.
 */
export const STATEMENT_CACHE_MAX = 256

/**
 * A connection's prepared statements by SQL text (or whatever `prepare` makes of one: the
 * Kysely wrapper keeps its guarded statements); beyond `max`, the least recently used one is
 * dropped (better-sqlite3 finalizes it once it is collected) and prepared again if its text
 * comes back, at a fraction of a millisecond.
 *
 * @example
 * const statements = new StatementCache((sql) => database.prepare(sql))
 * const rows = statements.get('select * from wfa_todos where company_id = ?').all(1)
 */
export class StatementCache<S = Database.Statement> {
  readonly #statements = new Map<string, S>()
  readonly #prepare: (sql: string) => S
  readonly #max: number

  constructor(prepare: (sql: string) => S, max = STATEMENT_CACHE_MAX) {
    if (!Number.isInteger(max) || max < 1) throw new TypeError(`StatementCache: max must be a positive integer, got ${max}`)
    this.#prepare = prepare
    this.#max = max
  }

  /** Statements held now. */
  get size(): number {
    return this.#statements.size
  }

  /** The statement of `sql`, prepared on first use (a preparing error is thrown, nothing kept). */
  get(sql: string): S {
    const known = this.#statements.get(sql)
    if (known !== undefined) {
      // Most recently used last: a Map iterates in insertion order.
      this.#statements.delete(sql)
      this.#statements.set(sql, known)
      return known
    }
    const statement = this.#prepare(sql)
    if (this.#statements.size >= this.#max) this.#statements.delete(this.#statements.keys().next().value as string)
    this.#statements.set(sql, statement)
    return statement
  }
}
