import { sql, type RawBuilder } from 'kysely'

/**
 * How one SQL dialect represents the values whose storage differs between databases.
 * `to*` converts a domain value into a bind parameter; `read*` converts a column value back.
 * This is the one place where dialect differences live (style.md, "SQL and data").
 */
export interface SqlCodec {
  instant(value: Date): unknown
  readInstant(value: unknown): Date
  bool(value: boolean): unknown
  readBool(value: unknown): boolean
  json(value: unknown): unknown
  readJson<T>(value: unknown): T
  day(value: string): unknown
  readDay(value: unknown): string
  /** Integers that may come back as strings (Postgres int8 and `count(*)`). */
  readInt(value: unknown): number
  /**
   * `column` for a condition beside a list of ids (`id in (…) and status = 'pending'`), written so
   * that the rows are found by their ids and the condition only filters them. SQLite, planning
   * without statistics, searched an index on the column instead (`status = ?`: every pending
   * delivery, to record four of them); its `+column` is the column's value and keeps it off any
   * index. Postgres plans from statistics: the column as it is.
   */
  filterOnly(column: string): RawBuilder<unknown>
  /**
   * Whether the planner bounds an index range by a row value (`(a, b) <= (?, ?)` on an index of
   * `(a, b)`). Postgres does; SQLite bounds it by `a` alone and filters the rest, so rows that
   * share `a` are all read.
   */
  rowValueRanges: boolean
  /**
   * Whether a LIMIT may be a bound parameter. Postgres: yes, and one text serves every size.
   * SQLite reads a bound LIMIT's value when it plans, so each new binding makes it prepare the
   * statement again at its next run (for the claim's ranking, about 0.7 ms a run where running
   * it takes 25 µs): there the limit is a literal, a text per size.
   */
  boundLimits: boolean
}

/** `SqlCodec.filterOnly` of a dialect whose planner needs no help. */
export const plainColumn = (column: string): RawBuilder<unknown> => sql.ref(column)

/** `SqlCodec.filterOnly` for SQLite: `+column`, which no index serves. */
export const unindexedColumn = (column: string): RawBuilder<unknown> => sql`+${sql.ref(column)}`

/** Column types of the shared migration, per dialect. */
export interface SqlColumnTypes {
  /** An auto-incrementing primary key that also accepts explicit ids (fixtures). */
  id: 'integer' | 'bigint'
  instant: 'integer' | 'timestamptz'
  bool: 'integer' | 'boolean'
  json: 'text' | 'jsonb'
  day: 'text' | 'date'
  bigint: 'integer' | 'bigint'
  real: 'real' | 'double precision'
  dialect: 'sqlite' | 'postgres'
}
