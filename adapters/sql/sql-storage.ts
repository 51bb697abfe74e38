import type { ListResult, PageWindow, ResourceReader, Storage } from '../../src/ports/storage.js'
import type { CompanyRecord } from '../../src/ports/records.js'
import type { SqlCodec } from './codec.js'
import { bind, param, prepare, type PreparedQuery, type QueryDb, type ReadScope, type SqlRunner } from './prepared.js'
import { company as companyTable, RESOURCE_TABLES } from './tables/index.js'
import { byId, type ReaderName, type ResourceQuery } from './tables/table.js'
import { boundFilters, listShape } from './list-shape.js'
import { SqlSeekableReader } from './sql-seek.js'

interface ListStatements {
  page: PreparedQuery
  count: PreparedQuery
}

/**
 * A `ResourceReader` over SQL. Each combination of present filters is compiled once, on
 * first use, into a page query and a count query; later requests only bind values.
 */
export class SqlResourceReader<R, F extends object> implements ResourceReader<R, F> {
  readonly #byShape = new Map<string, ListStatements>()
  readonly #get: PreparedQuery
  readonly #filterNames: Array<keyof F & string>
  readonly seek: SqlSeekableReader<R, F>

  constructor(
    private readonly db: QueryDb,
    private readonly runner: SqlRunner,
    private readonly codec: SqlCodec,
    private readonly query: ResourceQuery<R, F>,
    resource: string,
  ) {
    this.#filterNames = Object.keys(query.filters) as Array<keyof F & string>
    this.seek = new SqlSeekableReader(db, runner, codec, query, this.#filterNames, resource)
    this.#get = prepare(byId(query, db))
  }

  async list(companyId: number, filter: F, window: PageWindow): Promise<ListResult<R>> {
    const { present, values } = boundFilters(this.query, this.codec, this.#filterNames, companyId, filter)
    const statements = this.#statements(present)
    Object.assign(values, { limit: window.limit, offset: window.offset })
    // Page and count share one scope, so a runner routes both the same way.
    const scope: ReadScope = { companyId, shape: statements }
    const [rows, counted] = await Promise.all([
      this.runner.all(statements.page, bind(statements.page, values), scope),
      this.runner.all(statements.count, bind(statements.count, values), scope),
    ])
    return {
      rows: rows.map((row) => this.query.decode(row, this.codec)),
      total: this.codec.readInt(counted[0]?.total ?? 0),
    }
  }

  async get(companyId: number, id: number): Promise<R | null> {
    const [row] = await this.runner.all(this.#get, bind(this.#get, { company_id: companyId, id }))
    return row === undefined ? null : this.query.decode(row, this.codec)
  }

  #statements(present: Array<keyof F & string>): ListStatements {
    const shape = present.join(',')
    let statements = this.#byShape.get(shape)
    if (statements === undefined) {
      const { filtered, counted, order } = listShape(this.db, this.query, present)
      statements = {
        page: prepare(this.query.select(filtered).orderBy(order).limit(param('limit')).offset(param('offset'))),
        count: prepare(counted.select((eb) => eb.fn.countAll().as('total'))),
      }
      this.#byShape.set(shape, statements)
    }
    return statements
  }
}

/** The list readers, one per resource descriptor (`adapters/sql/tables/`). */
type SqlReaders = { readonly [N in ReaderName]: Storage[N] extends ResourceReader<infer R, infer F> ? SqlResourceReader<R, F & object> : never }

// The readers are members of every instance, assigned from the descriptors in the constructor.
export interface SqlStorage extends SqlReaders {}

/**
 * The `Storage` port over the shared SQL schema, for any dialect that supplies a Kysely
 * instance (used only to compile SQL), a runner and a codec.
 */
export class SqlStorage implements Storage {
  readonly #company: PreparedQuery

  constructor(
    db: QueryDb,
    private readonly runner: SqlRunner,
    private readonly codec: SqlCodec,
  ) {
    for (const { name, query } of RESOURCE_TABLES) {
      Object.assign(this, { [name]: new SqlResourceReader(db, runner, codec, query as ResourceQuery<unknown, object>, name) })
    }
    this.#company = prepare(companyTable.query(db))
  }

  async company(companyId: number): Promise<CompanyRecord | null> {
    const [row] = await this.runner.all(this.#company, [companyId])
    return row === undefined ? null : companyTable.decode(row, this.codec)
  }
}
