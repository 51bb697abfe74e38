/**
 * A resource of the host's own, served by the public API beside the contract's nine: the
 * host's teams, read-only, with their scope `teams:read`, the `teams` module, the events
 * `teams.created|updated|deleted` and their place in the reference document
 * (docs/extending.md). The declaration takes its reader, so the same one serves the host's
 * SQLite schema (server.ts) and a Postgres database (test/host-resources/teams.postgres.test.ts).
 */
import { Type } from '@sinclair/typebox'
// 'fastify-workforce-api' in a host
import { defineResource, Id, Nullable, Timestamp, timestamp, updatedSince, type ResourceReader } from '../../src/index.js'

/** A team on the wire: the GET's `data` and an event's `data`. */
export const Team = Type.Object({
  id: Id,
  name: Type.String(),
  lead_employee_id: Nullable(Id),
  created_at: Timestamp,
  updated_at: Timestamp,
})

/** A team as the reader returns it: instants as `Date`s, like the contract's records. */
export interface TeamRecord {
  id: number
  name: string
  /** An employee id of the same company (`GET /v1/employees/:id`), or `null`. */
  lead_employee_id: number | null
  created_at: Date
  updated_at: Date
}

/** What `GET /v1/teams` may filter by; an absent member does not filter. */
export interface TeamFilter {
  leadEmployeeId?: number
  /** Teams changed at or after this instant. */
  updatedSince?: Date
}

export function renderTeam(team: TeamRecord) {
  return {
    id: team.id,
    name: team.name,
    lead_employee_id: team.lead_employee_id,
    created_at: timestamp(team.created_at),
    updated_at: timestamp(team.updated_at),
  }
}

/**
 * The `teams` resource over `reader`.
 *
 * @example
 * await app.register(workforceApi, { storage, keyStore, modules, resources: [teamsResource(new TeamReader(db))] })
 */
export function teamsResource(reader: ResourceReader<TeamRecord, TeamFilter>) {
  return defineResource({
    name: 'teams',
    singular: 'team',
    component: 'Team',
    module: 'teams',
    scope: 'teams:read',
    item: Team,
    render: renderTeam,
    list: {
      filters: {
        lead_employee_id: Type.Optional(Id),
        updated_since: Type.Optional(Timestamp),
      },
      reader: () => reader,
      toFilter: (query): TeamFilter => ({ leadEmployeeId: query.lead_employee_id, updatedSince: updatedSince(query.updated_since) }),
    },
    events: { actions: ['created', 'updated', 'deleted'] },
    docs: {
      description: 'Teams of your company: the groups your planners staff shifts with, and who leads each.',
      fields: {
        name: 'The name your company gave the team.',
        lead_employee_id: 'The employee leading the team; `null` while it has no lead.',
      },
      parameters: {
        lead_employee_id: 'Only teams led by this employee.',
      },
    },
  })
}

// Tells the compiler about the scope, so `keys.create({ scopes: ['teams:read'] })` compiles.
declare module '../../src/index.js' {
  // 'fastify-workforce-api' in a host
  interface HostScopes {
    'teams:read': true
  }
}
