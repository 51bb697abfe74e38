import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { TeamReader } from '../../examples/host-app/team-reader.js'
import { teamsResource } from '../../examples/host-app/teams.js'
import { portsOf, verifyWebhook, workforceApi, type KeyScope } from '../../src/index.js'
import { seedDataset } from '../helpers/build.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { withResponseChecks } from '../helpers/response-checks.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'

// The declaration and reader of examples/host-app (teams.ts, team-reader.ts), unchanged, over
// Postgres: the reference adapter in a schema of its own, and a `teams` table the host (this
// test) creates there with Postgres's own types — int8 ids, timestamptz instants. Real HTTP.

const SCHEMA = 'host_teams'

/** The host's teams, in insertion order (ids 1…6): company 1's and 2's interleaved. */
const TEAMS = [
  { org_id: 1, name: 'Site crew North', lead_employee_id: 1, created_at: '2026-01-05T08:00:00.000Z', updated_at: '2026-01-05T08:00:00.000Z' },
  { org_id: 2, name: 'Hudson day shift', lead_employee_id: 41, created_at: '2026-01-05T09:00:00.000Z', updated_at: '2026-01-05T09:00:00.000Z' },
  { org_id: 1, name: 'Logistics', lead_employee_id: 2, created_at: '2026-01-06T08:00:00.000Z', updated_at: '2026-02-01T10:00:00.000Z' },
  { org_id: 1, name: 'Night shift «B»', lead_employee_id: null, created_at: '2026-01-07T08:00:00.000Z', updated_at: '2026-03-01T00:00:00.000Z' },
  { org_id: 2, name: 'Hudson nights', lead_employee_id: null, created_at: '2026-01-07T09:00:00.000Z', updated_at: '2026-01-07T09:00:00.000Z' },
  { org_id: 1, name: 'Maintenance', lead_employee_id: 1, created_at: '2026-01-08T08:00:00.000Z', updated_at: '2026-03-15T12:30:00.123Z' },
]

/** What the API must show for company `org`: computed from TEAMS, not read through the reader. */
function expectedTeams(org: number) {
  return TEAMS.map((team, index) => ({ id: index + 1, ...team }))
    .filter((team) => team.org_id === org)
    .map(({ org_id: _org, ...wire }) => wire)
}

interface Answer {
  status: number
  body: any
}

function expectError(answer: Answer, status: number, code: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status)
  expect(Object.keys(answer.body)).toEqual(['error'])
  expect(answer.body.error).toMatchObject({ code, status })
}

describePostgres('a host resource (teams) on Postgres, over HTTP', () => {
  const database = useTestDatabase()
  let adapter: PostgresAdapter
  let app: FastifyInstance
  let receiver: Receiver
  let origin: string

  beforeAll(async () => {
    adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema: SCHEMA })
    await adapter.loadDataset(seedDataset())
    await adapter.db.schema
      .createTable('teams')
      .addColumn('id', 'bigint', (column) => column.primaryKey().generatedAlwaysAsIdentity())
      .addColumn('org_id', 'bigint', (column) => column.notNull())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('lead_employee_id', 'bigint')
      .addColumn('created_at', 'timestamptz', (column) => column.notNull())
      .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
      .execute()
    for (const team of TEAMS) await adapter.db.insertInto('teams').values(team).execute()
    await adapter.modules.setActive(1, 'teams', true)
    await adapter.modules.setActive(2, 'teams', true)
    receiver = await startReceiver()
    app = withResponseChecks(Fastify())
    await app.register(workforceApi, {
      prefix: '/api/public',
      ...portsOf(adapter),
      resources: [teamsResource(new TeamReader(adapter.db))],
      // A module switched off answers 403 at once, not after the cache's 5 s.
      moduleCacheTtlMs: 0,
      webhookOptions: { secretKey: randomBytes(32).toString('base64'), allowPrivateDestinations: true, pollIntervalMs: 50 },
    })
    origin = await app.listen({ host: '127.0.0.1', port: 0 })
  })

  afterAll(async () => {
    await app?.close()
    await receiver?.close()
    await adapter?.close()
  })

  const api = async (path: string, key: string): Promise<Answer> => {
    const response = await fetch(`${origin}/api/public${path}`, { headers: { authorization: `Bearer ${key}` } })
    return { status: response.status, body: await response.json() }
  }
  const keyFor = async (companyId: number, scopes: KeyScope[]) =>
    (await app.workforceApi.keys.create({ companyId, scopes })).key

  it('the table is in the adapter\'s schema, with Postgres types', async () => {
    const columns = await adapter.db
      .withoutPlugins()
      .selectFrom('information_schema.columns' as never)
      .select(['column_name', 'data_type'] as never[])
      .where('table_schema' as never, '=', SCHEMA as never)
      .where('table_name' as never, '=', 'teams' as never)
      .orderBy('ordinal_position' as never)
      .execute()
    expect(columns).toEqual([
      { column_name: 'id', data_type: 'bigint' },
      { column_name: 'org_id', data_type: 'bigint' },
      { column_name: 'name', data_type: 'text' },
      { column_name: 'lead_employee_id', data_type: 'bigint' },
      { column_name: 'created_at', data_type: 'timestamp with time zone' },
      { column_name: 'updated_at', data_type: 'timestamp with time zone' },
    ])
  })

  it('lists by id ascending with the exact total, page by page, only the company\'s own; gets by id', async () => {
    const key = await keyFor(1, ['teams:read'])
    const expected = expectedTeams(1)
    expect(expected.map((team) => team.id)).toEqual([1, 3, 4, 6])
    const first = await api('/v1/teams?per_page=3', key)
    const second = await api('/v1/teams?per_page=3&page=2', key)
    expect(first.body.pagination).toEqual({ page: 1, per_page: 3, total: 4, total_pages: 2 })
    expect(second.body.pagination).toEqual({ page: 2, per_page: 3, total: 4, total_pages: 2 })
    expect([...first.body.data, ...second.body.data]).toEqual(expected)

    expect(await api('/v1/teams/4', key)).toEqual({ status: 200, body: { data: expected[2] } })
    const foreign = await api('/v1/teams/2', key)
    expectError(foreign, 404, 'not_found')
    expect(foreign).toEqual(await api('/v1/teams/987654', key))
  })

  it('a key without teams:read gets 403', async () => {
    const key = await keyFor(1, ['users:read', 'employees:read'])
    expectError(await api('/v1/teams', key), 403, 'forbidden')
    expectError(await api('/v1/teams/1', key), 403, 'forbidden')
  })

  it('with the company\'s teams module off (modules.setActive), 403 even with the scope; on again, 200', async () => {
    const key = await keyFor(1, ['teams:read'])
    await adapter.modules.setActive(1, 'teams', false)
    try {
      expectError(await api('/v1/teams', key), 403, 'forbidden')
      expectError(await api('/v1/teams/1', key), 403, 'forbidden')
      // Company 3 never had it switched on.
      expectError(await api('/v1/teams', await keyFor(3, ['all'])), 403, 'forbidden')
    } finally {
      await adapter.modules.setActive(1, 'teams', true)
    }
    expect((await api('/v1/teams', key)).status).toBe(200)
  })

  it('filters by lead_employee_id and updated_since (at or after), alone and together', async () => {
    const key = await keyFor(1, ['teams:read'])
    const expected = expectedTeams(1)
    const byLead = await api('/v1/teams?lead_employee_id=1', key)
    expect(byLead.body).toEqual({ data: expected.filter((team) => team.lead_employee_id === 1), pagination: { page: 1, per_page: 25, total: 2, total_pages: 1 } })
    // An offset names the same instant as its UTC form: 01:00+01:00 is 00:00Z, the edge of team 4.
    const since = await api(`/v1/teams?updated_since=${encodeURIComponent('2026-03-01T01:00:00.000+01:00')}`, key)
    expect(since.body.data.map((team: { id: number }) => team.id)).toEqual([4, 6])
    expect(since.body.pagination.total).toBe(2)
    const both = await api('/v1/teams?lead_employee_id=1&updated_since=2026-03-01T00:00:00.000Z', key)
    expect(both.body.data.map((team: { id: number }) => team.id)).toEqual([6])
    expect(both.body.data[0].updated_at).toBe('2026-03-15T12:30:00.123Z')
  })

  it('an unknown or wrongly typed query parameter is a 422 in the error envelope', async () => {
    const key = await keyFor(1, ['teams:read'])
    for (const [query, field] of [
      ['team_lead=1', 'team_lead'],
      ['lead_employee_id=one', 'lead_employee_id'],
      ['updated_since=2026-13-01', 'updated_since'],
    ] as const) {
      const answer = await api(`/v1/teams?${query}`, key)
      expectError(answer, 422, 'validation_error')
      expect(answer.body.error.details.map((detail: { field: string }) => detail.field)).toEqual([field])
    }
  })

  it('a team created in a host transaction that rolls back publishes nothing', async () => {
    await app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['*'] })
    const outcome = await adapter.db
      .transaction()
      .execute(async (trx) => {
        const { id } = await trx.insertInto('teams').values({ org_id: 1, name: 'Never', lead_employee_id: null, created_at: new Date(), updated_at: new Date() }).returning('id').executeTakeFirstOrThrow()
        const team = await new TeamReader(trx).get(1, Number(id))
        await app.workforceApi.events.publish(trx, { type: 'teams.created', companyId: 1, record: team })
        throw new Error('the planner cancelled')
      })
      .catch((error: Error) => error.message)
    expect(outcome).toBe('the planner cancelled')
    expect(await adapter.db.selectFrom('teams').select('id').where('name', '=', 'Never').execute()).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(receiver.received).toHaveLength(0)
  })

  it('a team created in a host transaction reaches the receiver as teams.created, signed, with data equal to the GET', async () => {
    const { secret } = await app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['teams.created'] })
    const key = await keyFor(1, ['teams:read'])
    const created = await adapter.db.transaction().execute(async (trx) => {
      const now = new Date()
      const { id } = await trx.insertInto('teams').values({ org_id: 1, name: 'Cranes', lead_employee_id: 3, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()
      const team = await new TeamReader(trx).get(1, Number(id))
      await app.workforceApi.events.publish(trx, { type: 'teams.created', companyId: 1, record: team })
      return team!
    })
    // Both endpoints of company 1 take it: the `*` one of the previous test, and this one.
    const deliveries = await receiver.waitFor(2)
    const get = await api(`/v1/teams/${created.id}`, key)
    // Past the six: the rolled-back insert of the previous test used up an id of the sequence.
    expect(created.id).toBeGreaterThan(6)
    expect(get.body.data).toMatchObject({ id: created.id, name: 'Cranes', lead_employee_id: 3 })
    const signed = deliveries.flatMap((delivery) => {
      try {
        return [verifyWebhook(secret, delivery.headers as Record<string, string>, delivery.body) as { type: string; company_id: number; data: unknown }]
      } catch {
        return []
      }
    })
    expect(signed).toHaveLength(1)
    expect(signed[0]).toMatchObject({ type: 'teams.created', company_id: 1 })
    expect(signed[0]!.data).toEqual(get.body.data)
    const list = await api('/v1/teams', key)
    expect(list.body.pagination.total).toBe(5)
    expect(list.body.data.at(-1)).toEqual(get.body.data)
  })
})
