import { sql } from 'kysely'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'
import type { ResourceQuery } from './tables/table.js'

/**
 * Ids per block of `wfa_list_blocks`: a company's rows of a list are counted per `id / 1024`
 * (migration 0010 keeps the same number in its triggers, which never import this).
 */
export const LIST_BLOCK_IDS = 1024

/**
 * The rows a combination of present filters selects (`filtered`), the same rows for counting
 * (`counted`, without joins where the resource allows), and the order of a page.
 */
export function listShape<R, F>(db: QueryDb, query: ResourceQuery<R, F>, present: ReadonlyArray<keyof F & string>) {
  const filters = present.map((name) => query.filters[name])
  const narrow = (rows: ReturnType<typeof query.from>) => filters.reduce((q, filter) => filter.where(q), rows)
  const filtered = narrow(query.from(db))
  const { countFrom } = query
  const counted = countFrom !== undefined && !filters.some((filter) => filter.joined === true) ? narrow(countFrom(db)) : filtered
  // With a time range, `ORDER BY id + 0` keeps the planner off the id index: walking id
  // order to find a recent week skipped ~1M rows (105 ms) where the range index plus a
  // top-25 sort takes 0.5 ms. Without one, id order is the fast path (docs/benchmarks-postgres.md).
  const ranged = filters.some((filter) => filter.range === true)
  const order = ranged ? sql`${sql.ref(query.id)} + 0` : sql.ref(query.id)
  return { filtered, counted, order, ranged }
}

/** The filters present in `filter`, in declaration order, and the values they bind, with the company's. */
export function boundFilters<R, F>(query: ResourceQuery<R, F>, codec: SqlCodec, filterNames: ReadonlyArray<keyof F & string>, companyId: number, filter: F) {
  const present = filterNames.filter((name) => filter[name] !== undefined)
  const values: Record<string, unknown> = { company_id: companyId }
  for (const name of present) Object.assign(values, query.filters[name].bind(filter[name] as never, codec))
  return { present, values }
}
