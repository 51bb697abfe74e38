import { sql, type ExpressionBuilder } from 'kysely'
import type { ListVersion, SeekableReader, SeekWindow } from '../../src/ports/storage.js'
import type { SqlCodec } from './codec.js'
import { bind, param, prepare, type PreparedQuery, type QueryDb, type SqlRunner } from './prepared.js'
import type { ResourceQuery } from './resource-queries.js'
import { boundFilters, listShape } from './list-shape.js'

interface SeekStatements {
  count: PreparedQuery
  forward: PreparedQuery
  /** The same rows in plain id order, for a filter that otherwise sorts what its index finds. */
  forwardById: PreparedQuery
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
    const statement = window.fromEnd === true ? statements.fromEnd : window.walkIds === true ? statements.forwardById : statements.forward
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
      const after = (ordered: typeof order) =>
        prepare(rows.where(this.query.id, '>', param('after')).orderBy(ordered).limit(param('limit')).offset(param('skip')))
      const forward = after(order)
      statements = {
        count: prepare(counted.select((eb) => [eb.fn.countAll().as('total'), ...versions(eb)])),
        forward,
        forwardById: ranged ? after(sql.ref(this.query.id)) : forward,
        fromEnd: prepare(rows.orderBy(sql`${order} desc`).limit(param('limit')).offset(param('skip'))),
      }
      this.#byShape.set(shape, statements)
    }
    return statements
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
