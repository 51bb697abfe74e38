import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { describeStorageConformance } from '../../src/conformance/index.js' // 'fastify-workforce-api/conformance' in a host
import { generateDataset } from '../../src/seed/generate.js'
import { openHostDatabase, type HostDatabase } from './database.js'
import { HostKeyStore } from './host-key-store.js'
import { HostModuleRegistry } from './host-module-registry.js'
import { HostStorage } from './host-storage.js'
import { importDataset } from './import-dataset.js'
import { buildHostServer } from './server.js'
import { verifyWebhook } from '../../src/index.js' // 'fastify-workforce-api' in a host
import { startReceiver, type Receiver } from '../../test/webhooks/receiver.js'
// Every API response is checked against the OpenAPI document, as in the plugin's own suites.
import { withResponseChecks } from '../../test/helpers/response-checks.js'

// The host proves its own ports pass the same suite as ours, on its own schema.
describeStorageConformance({
  name: 'host app (own schema: accounts, staff_members, work_shifts, costs, tasks…)',
  create: async () => {
    const { db } = await openHostDatabase(':memory:')
    return {
      storage: new HostStorage(db),
      keyStore: new HostKeyStore(db),
      modules: new HostModuleRegistry(db),
      loadDataset: (dataset) => importDataset(db, dataset),
      close: () => db.destroy(),
    }
  },
  // The host serves the read API only: it has no write or idempotency ports (yet), and no
  // admin API (audit trail, key usage).
  supports: { writes: false, idempotency: false, events: false, audit: false, usage: false },
})

describe('host app: its own routes are unaffected by the plugin', () => {
  let db: Kysely<HostDatabase>
  let app: FastifyInstance

  beforeEach(async () => {
    db = (await openHostDatabase(':memory:')).db
    await importDataset(db, generateDataset())
    app = withResponseChecks(await buildHostServer({ db }))
    await app.ready()
  })

  afterEach(async () => {
    await app.close()
    await db.destroy()
  })

  it('GET /health answers without an API key', async () => {
    const response = await app.inject({ method: 'GET', url: '/health' })
    expect({ status: response.statusCode, body: response.json() }).toEqual({ status: 200, body: { status: 'ok' } })
  })

  it("GET /internal/staff answers in the host's own shape, without an API key or the API's list envelope", async () => {
    const response = await app.inject({ method: 'GET', url: '/internal/staff?org=1' })
    expect(response.statusCode).toBe(200)
    const body = response.json() as { org: number; staff: Array<Record<string, unknown>> }
    expect(Object.keys(body).sort()).toEqual(['org', 'staff'])
    expect(body.staff).toHaveLength(40)
    expect(body.staff[0]).toEqual({ staff_member_id: 1, payroll_code: 'E-0001', position_title: 'Capocantiere', hours_per_week: 40 })
  })

  it("a host route's 404 and validation error keep the host's and Fastify's formats, not the API envelope", async () => {
    const missing = await app.inject({ method: 'GET', url: '/internal/staff/99999' })
    expect({ status: missing.statusCode, body: missing.json() }).toEqual({ status: 404, body: { message: 'No such staff member' } })

    // Fastify's own validator and error handler: 400, not the API's strict 422 validation_error.
    const invalid = await app.inject({ method: 'GET', url: '/internal/staff?org=abc' })
    expect(invalid.statusCode).toBe(400)
    expect(invalid.json()).toMatchObject({ statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request' })
    expect(invalid.json()).not.toHaveProperty('error.code')
  })

  it("an unknown path outside the prefix gets Fastify's 404; inside the prefix, the API's envelope", async () => {
    const outside = await app.inject({ method: 'GET', url: '/nowhere' })
    expect({ status: outside.statusCode, body: outside.json() }).toEqual({
      status: 404,
      body: { statusCode: 404, error: 'Not Found', message: 'Route GET:/nowhere not found' },
    })
    const inside = await app.inject({ method: 'GET', url: '/api/public/v1/nowhere' })
    expect({ status: inside.statusCode, body: inside.json() }).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'No route GET /api/public/v1/nowhere', status: 404 } },
    })
  })

  it('the API routes still demand a key, and a key made with app.workforceApi.keys lives in the host table and works', async () => {
    const anonymous = await app.inject({ method: 'GET', url: '/api/public/v1/users' })
    expect({ status: anonymous.statusCode, body: anonymous.json() }).toEqual({
      status: 401,
      body: { error: { code: 'unauthorized', message: 'Invalid or missing API key', status: 401 } },
    })

    const { key, info } = await app.workforceApi.keys.create({ companyId: 2, scopes: ['users:read', 'company:read'] })
    const stored = await db.selectFrom('api_credentials').selectAll().where('key_id', '=', info.key_id).executeTakeFirst()
    expect(stored).toMatchObject({ org_id: 2, scope_list: 'users:read company:read', state: 'active' })

    const company = await app.inject({ method: 'GET', url: '/api/public/v1/company', headers: { 'x-api-key': key } })
    expect(company.statusCode).toBe(200)
    expect(company.json()).toMatchObject({ data: { id: 2, name: 'Hudson Staffing Inc.', timezone: 'America/New_York' } })
  })
})

describe('host app: events published in its own transactions', () => {
  let db: Kysely<HostDatabase>
  let app: FastifyInstance
  let receiver: Receiver
  let key: string
  let secret: string

  beforeEach(async () => {
    db = (await openHostDatabase(':memory:')).db
    await importDataset(db, generateDataset())
    receiver = await startReceiver()
    app = withResponseChecks(await buildHostServer({
      db,
      webhookOptions: { secretKey: randomBytes(32).toString('base64'), allowPrivateDestinations: true, pollIntervalMs: 50 },
    }))
    await app.ready()
    ;({ secret } = await app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['shifts.updated'] }))
    ;({ key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] }))
  })

  afterEach(async () => {
    await app.close()
    await receiver.close()
    await db.destroy()
  })

  const firstShiftOf = async (org: number) =>
    (await db.selectFrom('work_shifts').select('shift_id').where('org_id', '=', org).orderBy('shift_id').executeTakeFirstOrThrow()).shift_id

  it('a host route moves a shift and publishes shifts.updated in the same transaction: data is GET /v1/shifts/:id', async () => {
    const id = await firstShiftOf(1)
    const moved = await app.inject({
      method: 'POST',
      url: `/internal/shifts/${id}/move`,
      payload: { org: 1, begins_at: '2031-03-03T07:00:00.000Z', finishes_at: '2031-03-03T15:30:00.000Z' },
    })
    expect(moved.statusCode, moved.body).toBe(200)
    const [delivery] = await receiver.waitFor(1)
    const payload = verifyWebhook(secret, delivery!.headers as Record<string, string>, delivery!.body) as { type: string; company_id: number; data: unknown }
    const get = await app.inject({ method: 'GET', url: `/api/public/v1/shifts/${id}`, headers: { 'x-api-key': key } })
    expect(payload).toMatchObject({ type: 'shifts.updated', company_id: 1, data: get.json().data })
    expect(get.json().data).toMatchObject({ id, starts_at: '2031-03-03T07:00:00.000Z', ends_at: '2031-03-03T15:30:00.000Z' })
  })

  it('a shift of another organisation is not moved and publishes nothing', async () => {
    const foreign = await firstShiftOf(2)
    const moved = await app.inject({
      method: 'POST',
      url: `/internal/shifts/${foreign}/move`,
      payload: { org: 1, begins_at: '2031-03-03T07:00:00.000Z', finishes_at: '2031-03-03T15:30:00.000Z' },
    })
    expect(moved.statusCode).toBe(404)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.received).toHaveLength(0)
  })

  it('a host transaction that rolls back takes its event with it: nothing is recorded or sent', async () => {
    const id = await firstShiftOf(1)
    const shift = await new HostStorage(db).shifts.get(1, id)
    const outcome = await db
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable('work_shifts').set({ break_mins: 99 }).where('shift_id', '=', id).execute()
        await app.workforceApi.events.publish(trx, { type: 'shifts.updated', companyId: 1, record: shift! })
        throw new Error('the planner cancelled')
      })
      .catch((error: Error) => error.message)
    expect(outcome).toBe('the planner cancelled')
    expect((await new HostStorage(db).shifts.get(1, id))!.break_minutes).toBe(shift!.break_minutes)
    const events = await db.selectFrom('wfa_change_events' as never).selectAll().execute()
    expect(events).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.received).toHaveLength(0)
  })
})
