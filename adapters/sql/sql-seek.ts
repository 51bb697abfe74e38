import { sql, type ExpressionBuilder } from 'kysely'
import type { ListVersion, SeekableReader, SeekWindow } from '../../src/ports/storage.js'
import type { SqlCodec } from './codec.js'
import { bind, param, prepare, type PreparedQuery, type QueryDb, type SqlRunner } from './prepared.js'
import type { ResourceQuery } from './tables/table.js'
import { boundFilters, LIST_BLOCK_IDS, listShape } from './list-shape.js'

interface SeekStatements {
  count: PreparedQuery
  /** The page that starts right after `after`. */
  forward: PreparedQuery
  /** The same rows in plain id order, for a filter that otherwise sorts what its index finds. */
  forwardById: PreparedQuery
  /** The page that starts `skip` rows after `after`: its first row found on an index alone. */
  located: PreparedQuery
  /** The page that ends `skip` rows before the end, its last row found the same way. */
  fromEnd: PreparedQuery
}

const COUNTERS = ['appends', 'updates', 'removals'] as const

/**
 * The fast-list capability over the shared schema: `wfa_list_versions` holds each company's
 * counters per resource, bumped by triggers in every change's transaction (migration 0006).
 * The count and each page read the counters in the same statement as their rows, so the
 * version they report is the one of their own snapshot.
 */
export class SqlSeekableReader<R, F extends object> implements SeekableReader<R, F> {
  readonly #byShape = new Map<string, SeekStatements>()
  readonly #version: PreparedQuery

  constructor(
    private readonly db: QueryDb,
    private readonly runner: SqlRunner,
    private readonly codec: SqlCodec,
    private readonly query: ResourceQuery<R, F>,
    private readonly filterNames: ReadonlyArray<keyof F & string>,
    /** The resource's name in `wfa_list_versions`. */
    private readonly resource: string,
  ) {
    this.#version = prepare(
      db
        .selectFrom('wfa_list_versions')
        .select([...COUNTERS])
        .where('company_id', '=', param('company_id'))
        .where('resource', '=', sql.lit(resource)),
    )
  }

  async version(companyId: number): Promise<ListVersion> {
    const [row] = await this.runner.all(this.#version, bind(this.#version, { company_id: companyId }))
    return this.#readVersion(row, '') ?? { appends: 0, updates: 0, removals: 0 }
  }

  async count(companyId: number, filter: F): Promise<{ total: number; version: ListVersion }> {
    const { statements, values } = this.#prepare(companyId, filter)
    const [row] = await this.runner.all(statements.count, bind(statements.count, values), { companyId, shape: statements.count })
    return {
      total: this.codec.readInt(row?.total ?? 0),
      version: this.#readVersion(row, 'v_') ?? { appends: 0, updates: 0, removals: 0 },
    }
  }

  async page(companyId: number, filter: F, window: SeekWindow): Promise<{ rows: R[]; version: ListVersion | null }> {
    const { statements, values } = this.#prepare(companyId, filter)
    Object.assign(values, { after: window.after, skip: window.skip, limit: window.limit })
    const statement =
      window.fromEnd === true
        ? statements.fromEnd
        : window.skip > 0
          ? statements.located
          : window.walkIds === true
            ? statements.forwardById
            : statements.forward
    const rows = await this.runner.all(statement, bind(statement, values), { companyId, shape: statements.forward })
    if (window.fromEnd === true) rows.reverse()
    return { rows: rows.map((row) => this.query.decode(row, this.codec)), version: this.#readVersion(rows[0], 'v_') }
  }

  #prepare(companyId: number, filter: F): { statements: SeekStatements; values: Record<string, unknown> } {
    const { present, values } = boundFilters(this.query, this.codec, this.filterNames, companyId, filter)
    return { statements: this.#statements(present), values }
  }

  #statements(present: ReadonlyArray<keyof F & string>): SeekStatements {
    const shape = present.join(',')
    let statements = this.#byShape.get(shape)
    if (statements === undefined) {
      const { filtered, counted, order, ranged } = listShape(this.db, this.query, present)
      // Uncorrelated scalar subqueries: evaluated once per statement, in its snapshot.
      const versions = (eb: ExpressionBuilder<any, any>) =>
        COUNTERS.map((counter) =>
          eb
            .selectFrom('wfa_list_versions')
            .select(counter)
            .where('company_id', '=', param('company_id'))
            .where('resource', '=', sql.lit(this.resource))
            .as(`v_${counter}`),
        )
      const rows = this.query.select(filtered).select(versions)
      const id = sql.ref(this.query.id)
      const after = (ordered: typeof order) => prepare(rows.where(this.query.id, '>', param('after')).orderBy(ordered).limit(param('limit')))
      const forward = after(order)
      // Skipping rows costs what walking an index costs: the boundary row is found in the same
      // statement (one snapshot), on the narrowest rows that carry the filters (`counted`: no
      // joins where the resource allows) and by id alone, so the planner can answer it from an
      // index without reading a table row (migration 0010 puts the range columns beside the id).
      // Only then are the page's rows read, joins included: `limit` of them, not `skip + limit`.
      const boundary = (direction: 'asc' | 'desc') =>
        counted
          .select(id.as('boundary'))
          .$if(direction === 'asc', (q) => q.where(this.query.id, '>', param('after')))
          .orderBy(direction === 'asc' ? id : sql`${id} desc`)
          .limit(sql.lit(1))
          .offset(param('skip'))
      // A time range's first match, found by reading the range's own index (the `+ 0` keeps the
      // planner from walking id order to it): a narrow range costs its few matches, a wide one one
      // index-only pass, and no plan sorts the whole range to return its first rows.
      const firstMatch = counted.select(sql`min(${id} + 0)`.as('boundary')).where(this.query.id, '>', param('after'))
      const unfiltered = present.length === 0
      statements = {
        count: prepare(unfiltered ? this.#rowCount() : counted.select((eb) => [eb.fn.countAll().as('total'), ...versions(eb)])),
        forward: ranged ? prepare(rows.where(this.query.id, '>=', firstMatch).orderBy(id).limit(param('limit'))) : forward,
        forwardById: ranged ? after(id) : forward,
        located: prepare(rows.where(this.query.id, '>=', unfiltered ? this.#rowAt(counted, 'located') : boundary('asc')).orderBy(id).limit(param('limit'))),
        fromEnd: prepare(
          rows.where(this.query.id, '<=', unfiltered ? this.#rowAt(counted, 'fromEnd') : boundary('desc')).orderBy(sql`${id} desc`).limit(param('limit')),
        ),
      }
      this.#byShape.set(shape, statements)
    }
    return statements
  }

  /**
   * The id of the row at one position of an unfiltered list, found through `wfa_list_blocks`
   * (migration 0010: the company's rows counted per block of 1,024 ids): the blocks' running sum
   * says which block holds the position and how many rows come before it, and only that block's
   * ids are walked. Costs one block row per 1,024 ids plus at most 1,024 index entries, at any
   * depth. The position is `skip` rows after `after` (`located`: rows up to `after` are counted
   * the same way) or `skip` rows before the end (`fromEnd`, from `row_count`). Past the end: null.
   */
  #rowAt(rows: ReturnType<typeof listShape>['counted'], from: 'located' | 'fromEnd') {
    const id = sql.ref(this.query.id)
    const size = sql.lit(LIST_BLOCK_IDS)
    const blocks = () =>
      this.db
        .selectFrom('wfa_list_blocks')
        .where('company_id', '=', param('company_id'))
        .where('resource', '=', sql.lit(this.resource))
    // Typed: Postgres would take a parameter divided by an integer for an int4.
    const after = sql`cast(${param('after')} as bigint)`
    // Rows at or before `after`: the whole blocks before its block, then its block up to it.
    const upToAfter = sql`(coalesce(${blocks()
      .select(sql`cast(sum(row_count) as bigint)`.as('n'))
      .where('block', '<', sql`${after} / ${size}`)}, 0) + ${rows
      .select(sql`count(*)`.as('n'))
      .where(this.query.id, '>=', sql`(${after} / ${size}) * ${size}`)
      .where(this.query.id, '<=', after)})`
    const total = this.db
      .selectFrom('wfa_list_versions')
      .select('row_count')
      .where('company_id', '=', param('company_id'))
      .where('resource', '=', sql.lit(this.resource))
    // The 0-based position of the row wanted.
    const position = from === 'located' ? sql`(${upToAfter} + ${param('skip')})` : sql`(${total} - 1 - ${param('skip')})`
    const running = blocks()
      .select(['block', 'row_count', sql`cast(sum(row_count) over (order by block) as bigint)`.as('through')])
      .as('b')
    const target = (column: 'start' | 'before') =>
      this.db
        .selectFrom(running)
        .select(column === 'start' ? sql`b.block * ${size}`.as('v') : sql`b.through - b.row_count`.as('v'))
        .where(sql`b.through`, '>', position)
        .where(position, '>=', sql.lit(0))
        .orderBy('b.block')
        .limit(sql.lit(1))
    return rows
      .select(id.as('boundary'))
      .where(this.query.id, '>=', target('start'))
      .orderBy(id)
      .limit(sql.lit(1))
      // No block holds the position (past either end): no boundary, so no rows, and offset 0.
      .offset(sql<number>`coalesce(${position} - ${target('before')}, 0)`)
  }

  /**
   * An unfiltered list's total: the company's `row_count` (migration 0010), which the same
   * triggers keep as the counters, read with them. No row yet: no rows, version zero.
   */
  #rowCount() {
    return this.db
      .selectFrom('wfa_list_versions')
      .select(['row_count as total', ...COUNTERS.map((counter) => `${counter} as v_${counter}` as const)])
      .where('company_id', '=', param('company_id'))
      .where('resource', '=', sql.lit(this.resource))
  }

  #readVersion(row: Record<string, unknown> | undefined, prefix: string): ListVersion | null {
    if (row === undefined) return null
    const read = (counter: (typeof COUNTERS)[number]) => {
      const value = row[`${prefix}${counter}`]
      return value === null || value === undefined ? 0 : this.codec.readInt(value)
    }
    return { appends: read('appends'), updates: read('updates'), removals: read('removals') }
  }
}
