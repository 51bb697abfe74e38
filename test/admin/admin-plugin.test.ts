import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { workforceAdmin } from '../../src/admin/plugin.js'
import { portsOf } from '../../src/ports/index.js'
import { workforceApi } from '../../src/plugin.js'
import { validate } from '@readme/openapi-parser'
import { ADMIN, API, buildAdminApp, testAuthorize, type AdminTestApp } from './admin-app.js'

describe('workforceAdmin registration', () => {
  const apps: Array<{ close(): Promise<unknown> }> = []
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close()
  })

  const register = async (admin: Record<string, unknown>, api: Record<string, unknown> | null = {}) => {
    const app = Fastify()
    apps.push(app)
    const adapter = createMemoryAdapter()
    if (api !== null) await app.register(workforceApi, { prefix: API, ...portsOf(adapter), ...api })
    await app.register(workforceAdmin, admin as never)
    await app.ready()
  }

  it('needs workforceApi first, with the audit and idempotency ports', async () => {
    await expect(register({ authorize: testAuthorize }, null)).rejects.toThrow(/fastify-workforce-api/)
    await expect(register({ authorize: testAuthorize }, { audit: undefined })).rejects.toThrow(/"audit"/)
    await expect(register({ authorize: testAuthorize }, { writes: undefined, idempotency: undefined })).rejects.toThrow(/"idempotency"/)
  })

  it('refuses a missing authorize, unknown options and options of the wrong shape, by name', async () => {
    await expect(register({})).rejects.toMatchObject({ code: 'WFA_ERR_OPTION_MISSING', message: expect.stringContaining('"authorize"') })
    await expect(register({ authorize: testAuthorize, portl: true })).rejects.toMatchObject({
      code: 'WFA_ERR_OPTION_UNKNOWN',
      message: expect.stringContaining('is not an option of workforceAdmin; did you mean "portal"?'),
    })
    await expect(register({ authorize: testAuthorize, portal: 'yes' })).rejects.toThrow(/"portal"/)
    await expect(register({ authorize: testAuthorize, onAudit: 'log' })).rejects.toThrow(/"onAudit"/)
    await expect(register({ authorize: testAuthorize, prefix: 'settings/' })).rejects.toThrow(/"prefix"/)
  })

  it('answers 500 in the envelope, not a session, when authorize returns a malformed session', async () => {
    const t = await buildAdminApp(createMemoryAdapter(), { admin: { authorize: () => ({ companyId: 0 }) as never } })
    apps.push(t)
    const res = await t.admin('GET', '/keys')
    expect(res.statusCode).toBe(500)
    expect(res.json().error.code).toBe('internal_error')
  })
})

describe('the admin OpenAPI document', () => {
  let t: AdminTestApp
  afterEach(() => t.close())

  it('is valid, needs no session, and documents every admin route with its schemas', async () => {
    t = await buildAdminApp(createMemoryAdapter())
    const res = await t.app.inject({ method: 'GET', url: `${ADMIN}/openapi.json` })
    expect(res.statusCode).toBe(200)
    const document = res.json()
    const result = await validate(structuredClone(document) as never)
    expect(result.valid, JSON.stringify(result)).toBe(true)
    const operations = Object.entries(document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    )
    for (const expected of ['POST /keys', 'POST /keys/{key_id}/rotate', 'DELETE /webhooks/endpoints/{id}', 'GET /webhooks/endpoints/{id}/deliveries', 'POST /webhooks/endpoints/{id}/replay', 'GET /audit', 'GET /usage', 'GET /settings']) {
      expect(operations).toContain(expected)
    }
    expect(operations).toHaveLength(27)
    expect(document.paths['/keys'].post.responses['201']).toBeDefined()
    expect(document.paths['/keys'].post.responses['4XX']).toBeDefined()
  })
})
