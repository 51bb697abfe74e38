import type { ListResult, PageWindow, ResourceReader, Storage } from '../../src/ports/storage.js'
import type { CompanyRecord } from '../../src/ports/records.js'
import type { SqlCodec } from './codec.js'
import { bind, param, prepare, type PreparedQuery, type QueryDb, type ReadScope, type SqlRunner } from './prepared.js'
import {
  absenceQuery,
  employeeQuery,
  expenseQuery,
  projectQuery,
  roleQuery,
  shiftQuery,
  todoQuery,
  userQuery,
  type ResourceQuery,
} from './resource-queries.js'
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
    this.#get = prepare(query.select(query.from(db)).where(query.id, '=', param('id')))
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

/**
 * The `Storage` port over the shared SQL schema, for any dialect that supplies a Kysely
 * instance (used only to compile SQL), a runner and a codec.
 */
export class SqlStorage implements Storage {
  readonly users: Storage['users']
  readonly employees: Storage['employees']
  readonly roles: Storage['roles']
  readonly projects: Storage['projects']
  readonly shifts: Storage['shifts']
  readonly absences: Storage['absences']
  readonly expenses: Storage['expenses']
  readonly todos: Storage['todos']
  readonly #company: PreparedQuery

  constructor(
    db: QueryDb,
    private readonly runner: SqlRunner,
    private readonly codec: SqlCodec,
  ) {
    this.users = new SqlResourceReader(db, runner, codec, userQuery, 'users')
    this.employees = new SqlResourceReader(db, runner, codec, employeeQuery, 'employees')
    this.roles = new SqlResourceReader(db, runner, codec, roleQuery, 'roles')
    this.projects = new SqlResourceReader(db, runner, codec, projectQuery, 'projects')
    this.shifts = new SqlResourceReader(db, runner, codec, shiftQuery, 'shifts')
    this.absences = new SqlResourceReader(db, runner, codec, absenceQuery, 'absences')
    this.expenses = new SqlResourceReader(db, runner, codec, expenseQuery, 'expenses')
    this.todos = new SqlResourceReader(db, runner, codec, todoQuery, 'todos')
    this.#company = prepare(
      db
        .selectFrom('wfa_companies')
        .select(['id', 'name', 'timezone', 'country', 'created_at', 'updated_at'])
        .where('id', '=', param('company_id')),
    )
  }

  async company(companyId: number): Promise<CompanyRecord | null> {
    const [row] = await this.runner.all(this.#company, [companyId])
    if (row === undefined) return null
    return {
      id: this.codec.readInt(row.id),
      name: row.name as string,
      timezone: row.timezone as string,
      country: row.country as string,
      created_at: this.codec.readInstant(row.created_at),
      updated_at: this.codec.readInstant(row.updated_at),
    }
  }
}
