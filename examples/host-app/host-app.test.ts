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
  // The host serves the read API only: it has no write or idempotency ports (yet).
  supports: { writes: false, idempotency: false, events: false },
})

describe('host app: its own routes are unaffected by the plugin', () => {
  let db: Kysely<HostDatabase>
  let app: FastifyInstance

  beforeEach(async () => {
    db = (await openHostDatabase(':memory:')).db
    await importDataset(db, generateDataset())
    app = await buildHostServer({ db })
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
