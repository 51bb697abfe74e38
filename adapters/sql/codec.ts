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
}

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
