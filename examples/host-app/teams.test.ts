import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { validate } from '@readme/openapi-parser'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js' // 'fastify-workforce-api/memory' in a host
import { portsOf, verifyWebhook, workforceApi, type KeyScope } from '../../src/index.js' // 'fastify-workforce-api' in a host
import { generateDataset } from '../../src/seed/generate.js'
import { compareDocuments, RELEASED_FILE } from '../../scripts/openapi-compat.js'
import { withResponseChecks } from '../../test/helpers/response-checks.js'
import { startReceiver, type Receiver } from '../../test/webhooks/receiver.js'
import { openHostDatabase, type HostDatabase } from './database.js'
import { FEATURE_OF } from './host-module-registry.js'
import { importDataset } from './import-dataset.js'
import { HostStorage } from './host-storage.js'
import { buildHostServer } from './server.js'
import { TeamReader } from './team-reader.js'
import { teamsResource } from './teams.js'

// The host's own `teams` resource (teams.ts) over real HTTP: the app listens on a loopback port
// and every request goes through fetch, as a client's would.

const COMMITTED = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as OpenApi
const RELEASED = JSON.parse(readFileSync(RELEASED_FILE, 'utf8')) as OpenApi

interface OpenApi {
  paths: Record<string, Record<string, unknown>>
  components: { schemas: Record<string, unknown> }
  webhooks: Record<string, unknown>
}

interface Answer {
  status: number
  body: any
}

/** A team as the API must show it, read straight from the host's table (not through the reader). */
async function teamsInDb(db: Kysely<HostDatabase>, org: number) {
  const rows = await db.selectFrom('teams').selectAll().where('org_id', '=', org).orderBy('id').execute()
  return rows.map(({ id, name, lead_employee_id, created_at, updated_at }) => ({ id, name, lead_employee_id, created_at, updated_at }))
}

function expectError(answer: Answer, status: number, code: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status)
  expect(Object.keys(answer.body)).toEqual(['error'])
  expect(answer.body.error).toMatchObject({ code, status })
}

describe('host app: the teams resource over HTTP', () => {
  let db: Kysely<HostDatabase>
  let app: FastifyInstance
  let receiver: Receiver
  let origin: string

  beforeEach(async () => {
    db = (await openHostDatabase(':memory:')).db
    await importDataset(db, generateDataset())
    receiver = await startReceiver()
    app = withResponseChecks(
      await buildHostServer({ db, webhookOptions: { secretKey: randomBytes(32).toString('base64'), allowPrivateDestinations: true, pollIntervalMs: 50 } }),
    )
    origin = await app.listen({ host: '127.0.0.1', port: 0 })
  })

  afterEach(async () => {
    await app.close()
    await receiver.close()
    await db.destroy()
  })

  const api = async (path: string, key?: string): Promise<Answer> => {
    const response = await fetch(`${origin}/api/public${path}`, { headers: key === undefined ? {} : { 'x-api-key': key } })
    return { status: response.status, body: await response.json() }
  }
  const keyFor = async (companyId: number, scopes: KeyScope[]) =>
    (await app.workforceApi.keys.create({ companyId, scopes })).key

  it("lists a company's teams by id ascending, page by page, with the exact total, and only its own", async () => {
    const key = await keyFor(1, ['teams:read'])
    const expected = await teamsInDb(db, 1)
    expect(expected).toHaveLength(6)
    // The import takes ids in turns across companies: another company's teams lie between ours.
    expect(expected.map((team) => team.id)).toEqual([1, 3, 5, 7, 9, 11])

    const pages = [await api('/v1/teams?per_page=4', key), await api('/v1/teams?per_page=4&page=2', key), await api('/v1/teams?per_page=4&page=3', key)]
    expect(pages.map((page) => page.status)).toEqual([200, 200, 200])
    expect(pages.map((page) => page.body.pagination)).toEqual([
      { page: 1, per_page: 4, total: 6, total_pages: 2 },
      { page: 2, per_page: 4, total: 6, total_pages: 2 },
      { page: 3, per_page: 4, total: 6, total_pages: 2 },
    ])
    expect(pages.flatMap((page) => page.body.data)).toEqual(expected)

    const all = await api('/v1/teams', key)
    expect(all.body).toEqual({ data: expected, pagination: { page: 1, per_page: 25, total: 6, total_pages: 1 } })
  })

  it('gets one team by id; a team of another company is the same 404 as an unknown id', async () => {
    const key = await keyFor(1, ['teams:read'])
    const [, second] = await teamsInDb(db, 1)
    const one = await api(`/v1/teams/${second!.id}`, key)
    expect(one).toEqual({ status: 200, body: { data: second } })

    const [theirs] = await teamsInDb(db, 2)
    const foreign = await api(`/v1/teams/${theirs!.id}`, key)
    const unknown = await api('/v1/teams/999999', key)
    expectError(foreign, 404, 'not_found')
    expect(foreign).toEqual(unknown)
  })

  it('a key without teams:read gets 403; a key made with all holds it', async () => {
    const without = await keyFor(1, ['users:read', 'employees:read', 'projects:read', 'shifts:read'])
    expectError(await api('/v1/teams', without), 403, 'forbidden')
    expectError(await api('/v1/teams/1', without), 403, 'forbidden')
    const all = await keyFor(1, ['all'])
    expect((await api('/v1/teams', all)).status).toBe(200)
  })

  it("an organisation without the teams feature gets 403 even with the scope: its row off, or no row", async () => {
    await db.updateTable('org_features').set({ enabled: 0 }).where('org_id', '=', 1).where('feature', '=', FEATURE_OF.teams).execute()
    const key = await keyFor(1, ['teams:read'])
    expectError(await api('/v1/teams', key), 403, 'forbidden')
    expectError(await api('/v1/teams/1', key), 403, 'forbidden')

    // Company 3 has no staff, so no teams and no feature row: the module is off by default.
    const none = await db.selectFrom('org_features').select('feature').where('org_id', '=', 3).where('feature', '=', FEATURE_OF.teams).execute()
    expect(none).toEqual([])
    expectError(await api('/v1/teams', await keyFor(3, ['all'])), 403, 'forbidden')

    // The other organisation's feature is untouched.
    expect((await api('/v1/teams', await keyFor(2, ['teams:read']))).status).toBe(200)
  })

  it('filters by lead_employee_id and updated_since, alone and together', async () => {
    const key = await keyFor(1, ['teams:read'])
    const expected = await teamsInDb(db, 1)
    const lead = expected[0]!.lead_employee_id as number
    const ledByLead = expected.filter((team) => team.lead_employee_id === lead)
    expect(ledByLead.length).toBe(2)
    const byLead = await api(`/v1/teams?lead_employee_id=${lead}`, key)
    expect(byLead.body).toEqual({ data: ledByLead, pagination: { page: 1, per_page: 25, total: 2, total_pages: 1 } })

    // At or after: the team changed exactly at the instant is included.
    const since = expected[3]!.updated_at
    const recent = expected.filter((team) => team.updated_at >= since)
    expect(recent.length).toBe(3)
    const bySince = await api(`/v1/teams?updated_since=${encodeURIComponent(since)}`, key)
    expect(bySince.body.data).toEqual(recent)
    expect(bySince.body.pagination.total).toBe(3)

    const both = await api(`/v1/teams?lead_employee_id=${lead}&updated_since=${encodeURIComponent(since)}`, key)
    expect(both.body.data).toEqual(recent.filter((team) => team.lead_employee_id === lead))
    expect(both.body.data).toHaveLength(1)

    // An employee of another company leads none of ours.
    const [theirs] = await teamsInDb(db, 2)
    const foreignLead = await api(`/v1/teams?lead_employee_id=${theirs!.lead_employee_id}`, key)
    expect(foreignLead.body).toEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } })
  })

  it('an unknown query parameter or a wrongly typed one is a 422 in the error envelope, naming it', async () => {
    const key = await keyFor(1, ['teams:read'])
    for (const [query, field] of [
      ['colour=red', 'colour'],
      ['lead_employee_id=abc', 'lead_employee_id'],
      ['lead_employee_id=0', 'lead_employee_id'],
      ['updated_since=yesterday', 'updated_since'],
      ['per_page=101', 'per_page'],
    ] as const) {
      const answer = await api(`/v1/teams?${query}`, key)
      expectError(answer, 422, 'validation_error')
      expect(answer.body.error.details.map((detail: { field: string }) => detail.field), query).toEqual([field])
    }
    expectError(await api('/v1/teams/1?lead_employee_id=1', key), 422, 'validation_error')
  })

  it('a renamed team reaches the webhook receiver as teams.updated, signed, with data equal to the GET', async () => {
    const { secret } = await app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['teams.updated'] })
    const key = await keyFor(1, ['teams:read'])
    const [team] = await teamsInDb(db, 1)
    const renamed = await fetch(`${origin}/internal/teams/${team!.id}/rename`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ org: 1, name: 'Site crew North (Milano)' }),
    })
    expect(renamed.status).toBe(200)
    expect(await renamed.json()).toEqual({ team_id: team!.id, name: 'Site crew North (Milano)' })

    const [delivery] = await receiver.waitFor(1)
    const payload = verifyWebhook(secret, delivery!.headers as Record<string, string>, delivery!.body) as { type: string; company_id: number; data: unknown }
    const get = await api(`/v1/teams/${team!.id}`, key)
    expect(get.body.data).toMatchObject({ id: team!.id, name: 'Site crew North (Milano)', lead_employee_id: team!.lead_employee_id, created_at: team!.created_at })
    expect(get.body.data.updated_at > team!.updated_at).toBe(true)
    expect(payload).toMatchObject({ type: 'teams.updated', company_id: 1 })
    expect(payload.data).toEqual(get.body.data)
    // The events feed lists the same event, byte for byte the delivered body, to a key of the
    // host's scope; a key without it sees no teams events and may not ask for them.
    const feed = await api('/v1/events?types=teams.updated', key)
    expect(feed.status).toBe(200)
    expect(feed.body.data.at(-1)).toEqual(JSON.parse(delivery!.body))
    const other = await keyFor(1, ['company:read'])
    expect((await api('/v1/events', other)).body.data.filter((event: { type: string }) => event.type.startsWith('teams.'))).toEqual([])
    expectError(await api('/v1/events?types=teams.updated', other), 403, 'forbidden')
  })

  it("renaming another organisation's team is a 404 and publishes nothing", async () => {
    await app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['*'] })
    const [theirs] = await teamsInDb(db, 2)
    const renamed = await fetch(`${origin}/internal/teams/${theirs!.id}/rename`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ org: 1, name: 'Hijacked' }),
    })
    expect(renamed.status).toBe(404)
    expect((await teamsInDb(db, 2))[0]!.name).toBe(theirs!.name)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.received).toHaveLength(0)
  })

  it('publishing an event leaves the schemas of the served document as declared (teams.updated, shifts.updated)', async () => {
    const [team] = await teamsInDb(db, 1)
    const shift = await db.selectFrom('work_shifts').select('shift_id').where('org_id', '=', 1).orderBy('shift_id').executeTakeFirstOrThrow()
    await db.transaction().execute(async (trx) => {
      await app.workforceApi.events.publish(trx, { type: 'teams.updated', companyId: 1, record: (await new TeamReader(trx).get(1, team!.id))! })
      await app.workforceApi.events.publish(trx, { type: 'shifts.updated', companyId: 1, record: (await new HostStorage(trx).shifts.get(1, shift.shift_id))! })
    })
    const served = (await (await fetch(`${origin}/api/public/openapi.json`)).json()) as OpenApi
    expect(served.components.schemas.Shift).toEqual(COMMITTED.components.schemas.Shift)
    expect(served.components.schemas.Team).toMatchObject({ properties: { lead_employee_id: { type: ['integer', 'null'] } } })
  })

  it('the served reference document has the teams paths, schema and webhooks, validates, and keeps the read paths of the contract', async () => {
    const response = await fetch(`${origin}/api/public/openapi.json`)
    expect(response.status).toBe(200)
    const served = (await response.json()) as OpenApi

    expect(Object.keys(served.paths)).toEqual(expect.arrayContaining(['/v1/teams', '/v1/teams/{id}']))
    expect(served.paths['/v1/teams']).toMatchObject({ get: { operationId: 'listTeams', tags: ['teams'], 'x-required-scope': 'teams:read' } })
    expect(served.paths['/v1/teams/{id}']).toMatchObject({ get: { operationId: 'getTeam', tags: ['teams'] } })
    expect(served.components.schemas.Team).toMatchObject({
      type: 'object',
      required: ['id', 'name', 'lead_employee_id', 'created_at', 'updated_at'],
      properties: { lead_employee_id: { type: ['integer', 'null'], description: 'The employee leading the team; `null` while it has no lead.' } },
    })
    expect(Object.keys(served.webhooks)).toEqual(expect.arrayContaining(['teams.created', 'teams.updated', 'teams.deleted']))
    expect(await validate(structuredClone(served) as never)).toMatchObject({ valid: true, warnings: [] })

    // The host serves reads only (it has no writes port): every read operation of the contract
    // is byte for byte the committed document's, and the writes are all that is missing.
    for (const [path, operations] of Object.entries(COMMITTED.paths)) {
      if (operations.get !== undefined) expect(served.paths[path]?.get, `GET ${path}`).toEqual(operations.get)
    }
    for (const [name, schema] of Object.entries(COMMITTED.components.schemas)) expect(served.components.schemas[name], name).toEqual(schema)
    for (const [type, webhook] of Object.entries(COMMITTED.webhooks)) expect(served.webhooks[type], type).toEqual(webhook)

    const writes = Object.entries(RELEASED.paths).flatMap(([path, operations]) =>
      Object.keys(operations)
        .filter((method) => ['post', 'patch', 'put', 'delete'].includes(method))
        .map((method) => `removed operation ${method.toUpperCase()} ${path}`),
    )
    expect(writes.length).toBeGreaterThan(0)
    const { breaking, additions } = compareDocuments(RELEASED, served)
    expect(breaking.map((change) => change.message).sort()).toEqual(writes.sort())
    expect(additions.map((change) => change.message)).toEqual(expect.arrayContaining(['added operation GET /v1/teams', 'added operation GET /v1/teams/{id}']))
  })
})

describe('the teams resource beside the contract with writes: the document only grows', () => {
  let db: Kysely<HostDatabase>
  let app: FastifyInstance

  beforeEach(async () => {
    db = (await openHostDatabase(':memory:')).db
    await importDataset(db, generateDataset())
    const adapter = createMemoryAdapter()
    app = withResponseChecks(Fastify())
    await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter), resources: [teamsResource(new TeamReader(db))] })
  })

  afterEach(async () => {
    await app.close()
    await db.destroy()
  })

  it('compareDocuments(released, served) finds no breaking change, and the teams operations and events as the only additions beyond the committed document', async () => {
    const origin = await app.listen({ host: '127.0.0.1', port: 0 })
    const served = (await (await fetch(`${origin}/api/public/openapi.json`)).json()) as OpenApi
    expect(await validate(structuredClone(served) as never)).toMatchObject({ valid: true, warnings: [] })

    // The contract's nine resources are unchanged: every path, schema and webhook of the committed document.
    expect(served.paths['/v1/todos']).toEqual(COMMITTED.paths['/v1/todos'])
    for (const [path, operations] of Object.entries(COMMITTED.paths)) expect(served.paths[path], path).toEqual(operations)
    for (const [name, schema] of Object.entries(COMMITTED.components.schemas)) expect(served.components.schemas[name], name).toEqual(schema)
    for (const [type, webhook] of Object.entries(COMMITTED.webhooks)) expect(served.webhooks[type], type).toEqual(webhook)

    const withTeams = compareDocuments(RELEASED, served)
    expect(withTeams.breaking).toEqual([])
    const committed = new Set(compareDocuments(RELEASED, COMMITTED).additions.map((change) => change.message))
    expect(withTeams.additions.map((change) => change.message).filter((message) => !committed.has(message))).toEqual([
      'added operation GET /v1/teams',
      'added operation GET /v1/teams/{id}',
      'added webhook event teams.created',
      'added webhook event teams.updated',
      'added webhook event teams.deleted',
    ])
  })
})
