import type { Kysely } from 'kysely'
import type { ListResult, PageWindow, ResourceReader } from '../../src/index.js' // 'fastify-workforce-api' in a host
import type { TeamFilter, TeamRecord } from './teams.js'

/**
 * The one table the reader needs. The host's SQLite schema stores instants as ISO UTC text; a
 * Postgres `timestamptz` column comes back as a `Date`, and an `int8` id as a string: the reader
 * takes either and converts here, at its boundary.
 */
export interface TeamTables {
  teams: {
    id: number | string
    org_id: number | string
    name: string
    lead_employee_id: number | string | null
    created_at: string | Date
    updated_at: string | Date
  }
}

type TeamRow = TeamTables['teams']

/**
 * `GET /v1/teams` and `GET /v1/teams/:id` over a `teams` table, with one Kysely code path for
 * SQLite and Postgres. Every query is scoped to the company, as the `ResourceReader` contract
 * demands: another company's team is never listed, counted or returned.
 *
 * @example
 * const reader = new TeamReader(db) // any Kysely whose database has a `teams` table like TeamTables'
 * await app.register(workforceApi, { ...ports, resources: [teamsResource(reader)] })
 */
export class TeamReader implements ResourceReader<TeamRecord, TeamFilter> {
  private readonly db: Kysely<TeamTables>

  /** `db` is the host's, or a transaction of it; the reader never closes it. */
  constructor(db: Kysely<any>) {
    this.db = db as Kysely<TeamTables>
  }

  async list(companyId: number, filter: TeamFilter, { limit, offset }: PageWindow): Promise<ListResult<TeamRecord>> {
    let matching = this.db.selectFrom('teams').where('org_id', '=', companyId)
    if (filter.leadEmployeeId !== undefined) matching = matching.where('lead_employee_id', '=', filter.leadEmployeeId)
    // ISO text compares as instants do (fixed width, UTC, `Z`); Postgres casts it to timestamptz.
    if (filter.updatedSince !== undefined) matching = matching.where('updated_at', '>=', filter.updatedSince.toISOString())
    const rows = await matching.selectAll().orderBy('id', 'asc').limit(limit).offset(offset).execute()
    const { total } = await matching.select((eb) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow()
    return { rows: rows.map(teamOf), total: Number(total) }
  }

  async get(companyId: number, id: number): Promise<TeamRecord | null> {
    const row = await this.db.selectFrom('teams').selectAll().where('org_id', '=', companyId).where('id', '=', id).executeTakeFirst()
    return row === undefined ? null : teamOf(row)
  }
}

function teamOf(row: TeamRow): TeamRecord {
  return {
    id: Number(row.id),
    name: row.name,
    lead_employee_id: row.lead_employee_id === null ? null : Number(row.lead_employee_id),
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
  }
}

function instant(value: string | Date): Date {
  return value instanceof Date ? value : new Date(value)
}
