import type { SelectQueryBuilder } from 'kysely'
import type { Dataset } from '../../../src/ports/dataset.js'
import type { ResourceReader, Storage } from '../../../src/ports/storage.js'
import type { SqlCodec } from '../codec.js'
import { param, type QueryDb } from '../prepared.js'

// What a table descriptor is (one file per resource beside this one, listed in `index.ts`), and
// the pieces its queries and fixtures are built from. Migrations never import this: they are
// frozen, and declare their own tables and triggers.

export type Query = SelectQueryBuilder<any, any, any>
export type Row = Record<string, any>

/** One filter: the WHERE it adds (with named params) and how its value binds to those names. */
export interface FilterSql<V> {
  where(query: Query): Query
  bind(value: V, codec: SqlCodec): Record<string, unknown>
  /**
   * A range over a column that grows with time (updated_at, starts_at, days, due dates).
   * Such a filter is usually selective and its rows cluster at the newest ids, so the page is
   * better found through the filter's index than by walking id order (see `SqlResourceReader`).
   */
  range?: true
  /** Reads a joined table, so the COUNT cannot use the resource's `countFrom` shortcut. */
  joined?: true
}

/**
 * The SQL of one read-only resource, shared by every SQL dialect. `from` must scope rows
 * to `param('company_id')`; `id` is the column lists are ordered by.
 */
export interface ResourceQuery<R, F> {
  from(db: QueryDb): Query
  /**
   * Optional: the same rows as `from`, counted without its joins. Used for the COUNT when no
   * `joined` filter is present; it must count exactly the rows `from` yields.
   */
  countFrom?(db: QueryDb): Query
  id: string
  select(query: Query): Query
  filters: { [K in keyof Required<F>]: FilterSql<Exclude<F[K], undefined>> }
  decode(row: Row, codec: SqlCodec): R
}

/** One record by id, scoped to `param('company_id')`: the query a reader's `get` and a write's read-back share. */
export function byId<R, F>(query: ResourceQuery<R, F>, db: QueryDb): Query {
  return query.select(query.from(db)).where(query.id, '=', param('id'))
}

/**
 * One dataset table's SQL table: its columns, and a row's values in that order. Positional
 * rather than a record per row, because the bulk loaders bind millions of rows and a record
 * (then its values) per row costs as much as the insert; every adapter test loads fixtures
 * through these lists, so a column out of place fails them.
 */
export interface FixtureTable<T extends keyof Dataset = keyof Dataset> {
  /** The `Dataset` table whose rows it holds. */
  dataset: T
  table: string
  columns: readonly string[]
  values(codec: SqlCodec, row: Dataset[T][number]): unknown[]
}

/** What every descriptor says: the dataset tables it is stored in, which fixtures and bulk loads fill. */
export interface StoredTables {
  tables: readonly FixtureTable[]
}

/** The members of `Storage` that are list resources (the company is read apart: `company.ts`). */
export type ReaderName = { [K in keyof Storage]: Storage[K] extends ResourceReader<any, any> ? K : never }[keyof Storage]
type RecordOf<N extends ReaderName> = Storage[N] extends ResourceReader<infer R, any> ? R : never
type FilterOf<N extends ReaderName> = Storage[N] extends ResourceReader<any, infer F> ? F : never

/**
 * Everything the SQL adapters know of one list resource: its reader's SQL, the tables it is
 * stored in, and the table whose rows it lists.
 */
export interface ResourceTable<N extends ReaderName = ReaderName> extends StoredTables {
  /** Its member of `Storage`, and its `resource` in `wfa_list_versions` and `wfa_list_blocks`. */
  name: N
  query: ResourceQuery<RecordOf<N>, FilterOf<N>>
  /**
   * The table of `tables` its rows are, and the column its lists are ordered by there. That
   * table's insert trigger (`wfa_lv_<name>_insert`, migrations 0006 and 0010) keeps the list's
   * version and blocks; a bulk load sets the trigger aside and counts in its place.
   */
  listed: { table: FixtureTable; orderedBy: string }
}

/**
 * The usual resource: its rows are one table of its own (`rows`), scoped by `company_id` and
 * listed by `id`, called `alias` in its queries. Gives the descriptor's `tables` and `listed`,
 * and its query's `from` and `id` around the rest of `query`. Name the resource (`companyRows<'roles'>`):
 * its reader's types then check `query`.
 */
export function companyRows<N extends ReaderName>(
  rows: FixtureTable,
  alias: string,
  query: Omit<ResourceQuery<RecordOf<N>, FilterOf<N>>, 'from' | 'id'>,
): Omit<ResourceTable<N>, 'name'> {
  return {
    tables: [rows],
    listed: { table: rows, orderedBy: 'id' },
    query: {
      from: (db: QueryDb): Query => db.selectFrom(`${rows.table} as ${alias}`).where(`${alias}.company_id`, '=', param('company_id')),
      id: `${alias}.id`,
      ...query,
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Filters

const same = (name: string) => <V>(value: V) => ({ [name]: value })

/** `column = :name`. */
export const eq = <V>(column: string, name: string): FilterSql<V> => ({
  where: (q) => q.where(column, '=', param(name)),
  bind: same(name),
})
export const updatedSince = (column: string): FilterSql<Date> => ({
  range: true,
  where: (q) => q.where(column, '>=', param('updated_since')),
  bind: (value, codec) => ({ updated_since: codec.instant(value) }),
})
export const dayFrom = (column: string): FilterSql<string> => ({
  range: true,
  where: (q) => q.where(column, '>=', param('date_from')),
  bind: (value, codec) => ({ date_from: codec.day(value) }),
})
export const dayTo = (column: string): FilterSql<string> => ({
  range: true,
  where: (q) => q.where(column, '<=', param('date_to')),
  bind: (value, codec) => ({ date_to: codec.day(value) }),
})

// ---------------------------------------------------------------------------------------------
// Columns

/** The two instants every record carries, last in every table. */
export const STAMPS = ['created_at', 'updated_at'] as const
export const timestamps = (row: Row, codec: SqlCodec) => ({
  created_at: codec.readInstant(row.created_at),
  updated_at: codec.readInstant(row.updated_at),
})
export const nullableDay = (value: unknown, codec: SqlCodec) => (value === null ? null : codec.readDay(value))
export const dayOrNull = (codec: SqlCodec, value: string | null) => (value === null ? null : codec.day(value))
