import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { mountRoute, type RouteSpec } from '../../src/api/route-spec.js'
import { registerCorridor, type RouteTableEntry } from '../../src/corridor/index.js'
import type { CorridorStage } from '../../src/corridor/stage.js'
import { UNAUTHORIZED_MESSAGE } from '../../src/errors.js'
import { bearer, buildWriteApp, PREFIX, type WriteTestApp } from '../helpers/write-app.js'

/** Every endpoint of spec 4.1, written out from the spec's table (not from our code). */
const SPEC_ENDPOINTS = [
  'GET /v1/users',
  'GET /v1/users/:id',
  'POST /v1/users',
  'POST /v1/users/:id/deactivate',
  'POST /v1/users/:id/activate',
  'GET /v1/employees',
  'GET /v1/employees/:id',
  'GET /v1/roles',
  'GET /v1/roles/:id',
  'GET /v1/company',
  'GET /v1/projects',
  'GET /v1/projects/:id',
  'GET /v1/shifts',
  'GET /v1/shifts/:id',
  'GET /v1/absences',
  'GET /v1/absences/:id',
  'GET /v1/expenses',
  'GET /v1/expenses/:id',
  'GET /v1/todos',
  'GET /v1/todos/:id',
  'POST /v1/todos',
  'PATCH /v1/todos/:id',
]

const READ_ONLY = new Set(['GET', 'HEAD'])
const concrete = (url: string) => url.replaceAll(':id', '1')

describe('the corridor on every route of the API', () => {
  let t: WriteTestApp
  afterEach(() => t.close())

  it('mounts exactly the endpoints of spec 4.1 (plus HEAD for each GET)', async () => {
    t = await buildWriteApp()
    const mounted = t.app.workforceApi.routes.map((route) => `${route.method} ${route.url.slice(PREFIX.length)}`)
    const heads = SPEC_ENDPOINTS.filter((endpoint) => endpoint.startsWith('GET ')).map((endpoint) => endpoint.replace('GET', 'HEAD'))
    expect([...mounted].sort()).toEqual([...SPEC_ENDPOINTS, ...heads].sort())
  })

  it('guards every route with authenticate then authorize, and every mutation with idempotency after them', async () => {
    t = await buildWriteApp()
    for (const route of t.app.workforceApi.routes) {
      const expected = READ_ONLY.has(route.method) ? ['authenticate', 'authorize'] : ['authenticate', 'authorize', 'idempotency']
      expect({ route: `${route.method} ${route.url}`, stages: route.stages }).toEqual({ route: `${route.method} ${route.url}`, stages: expected })
    }
  })

  it('a read-only API (no writes) mounts no write route and no idempotency stage', async () => {
    t = await buildWriteApp({ options: { writes: undefined, idempotency: undefined } })
    const routes = t.app.workforceApi.routes
    expect(routes.filter((route) => !READ_ONLY.has(route.method))).toEqual([])
    expect(routes.every((route) => !route.stages.includes('idempotency'))).toBe(true)
  })

  it('every route answers 401 in the envelope without a key', async () => {
    t = await buildWriteApp()
    for (const route of t.app.workforceApi.routes) {
      const response = await t.app.inject({ method: route.method as 'GET', url: concrete(route.url), ...(READ_ONLY.has(route.method) ? {} : { payload: {} }) })
      expect({ route: `${route.method} ${route.url}`, status: response.statusCode }).toEqual({ route: `${route.method} ${route.url}`, status: 401 })
      if (route.method !== 'HEAD') expect(response.json().error.message).toBe(UNAUTHORIZED_MESSAGE)
    }
  })

  it('every route answers 403 to a key without its scope', async () => {
    t = await buildWriteApp()
    const key = await t.keyFor(1, ['company:read'])
    for (const route of t.app.workforceApi.routes.filter((entry) => entry.scope !== 'company:read' && entry.method !== 'HEAD')) {
      const response = await t.app.inject({
        method: route.method as 'GET',
        url: concrete(route.url),
        headers: { 'x-api-key': key },
        ...(READ_ONLY.has(route.method) ? {} : { payload: {} }),
      })
      expect({ route: route.url, status: response.statusCode, message: response.json().error.message }).toEqual({
        route: route.url,
        status: 403,
        message: `This API key lacks the ${route.scope} scope`,
      })
    }
  })

  it('every mutating route replays a retried Idempotency-Key (Bearer)', async () => {
    t = await buildWriteApp()
    const key = await t.keyFor(1)
    for (const route of t.app.workforceApi.routes.filter((entry) => !READ_ONLY.has(entry.method))) {
      const send = () => t.app.inject({ method: route.method as 'POST', url: concrete(route.url), headers: bearer(key, `retry-${route.operationId}`), payload: {} })
      const first = await send()
      const retry = await send()
      expect({ route: route.url, replay: retry.headers['idempotent-replay'], body: retry.body }).toEqual({ route: route.url, replay: 'true', body: first.body })
      expect(first.headers['idempotent-replay']).toBeUndefined()
    }
  })
})

describe('registerCorridor', () => {
  const stage = (name: string, log: string[]): CorridorStage => ({
    name,
    hooksFor: () => ({
      onRequest: async () => void log.push(`${name}:onRequest`),
      preValidation: async () => void log.push(`${name}:preValidation`),
      onSend: async (_request, _reply, payload) => {
        log.push(`${name}:onSend`)
        return payload
      },
    }),
  })
  const route = (log: string[]): RouteSpec => ({
    method: 'POST',
    url: '/thing',
    operationId: 'createThing',
    summary: 'Create a thing',
    tag: 'things',
    scope: 'todos:write',
    schema: { response: { 200: Type.Object({ ok: Type.Boolean() }) } },
    handler: async () => {
      log.push('handler')
      return { ok: true }
    },
  })

  it('runs the stages in the order given, before the route handler, and their onSend after it', async () => {
    const log: string[] = []
    const app = Fastify()
    const table: RouteTableEntry[] = []
    registerCorridor(app, [stage('a', log), stage('b', log), stage('c', log)], table)
    mountRoute(app, route(log))
    const response = await app.inject({ method: 'POST', url: '/thing', payload: {} })
    expect(response.statusCode).toBe(200)
    expect(log).toEqual([
      'a:onRequest',
      'b:onRequest',
      'c:onRequest',
      'a:preValidation',
      'b:preValidation',
      'c:preValidation',
      'handler',
      'a:onSend',
      'b:onSend',
      'c:onSend',
    ])
    expect(table).toEqual([{ method: 'POST', url: '/thing', operationId: 'createThing', scope: 'todos:write', stages: ['a', 'b', 'c'] }])
    await app.close()
  })

  it('refuses a route in the API context that was not declared through mountRoute', async () => {
    const app = Fastify()
    registerCorridor(app, [], [])
    expect(() => app.get('/unguarded', async () => ({}))).toThrow(/GET \/unguarded was not declared with mountRoute\(\)/)
    await app.close()
  })
})
