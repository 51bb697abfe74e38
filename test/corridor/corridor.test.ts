import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { mountRoute, type RouteSpec } from '../../src/api/route-spec.js'
import { apiRoutes, CONTRACT } from '../../src/api/index.js'
import { eventFeedRoutes } from '../../src/api/events-feed.js'
import { CORRIDOR, registerCorridor, type RouteTableEntry } from '../../src/corridor/index.js'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
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

/** Additive to `/v1` beside spec 4.1 (issue 24): the events feed, mounted with a `webhooks` port. */
const ADDED_ENDPOINTS = ['GET /v1/events', 'GET /v1/events/cursor']

const READ_ONLY = new Set(['GET', 'HEAD'])

/** A body each mutating route accepts, so a query-string problem is the only one left. */
const VALID_BODIES: Record<string, object | undefined> = {
  createUser: { email: 'someone@example.com', first_name: 'Some', last_name: 'One' },
  activateUser: undefined,
  deactivateUser: undefined,
  createTodo: { title: 'A to-do', list_id: 1, assigned_to: 1 },
  updateTodo: { title: 'Renamed' },
}
const concrete = (url: string) => url.replaceAll(':id', '1')

describe('the corridor on every route of the API', () => {
  let t: WriteTestApp
  afterEach(() => t.close())

  it('mounts exactly the endpoints of spec 4.1 and the events feed (plus HEAD for each GET)', async () => {
    t = await buildWriteApp()
    const mounted = t.app.workforceApi.routes.map((route) => `${route.method} ${route.url.slice(PREFIX.length)}`)
    const endpoints = [...SPEC_ENDPOINTS, ...ADDED_ENDPOINTS]
    const heads = endpoints.filter((endpoint) => endpoint.startsWith('GET ')).map((endpoint) => endpoint.replace('GET', 'HEAD'))
    expect([...mounted].sort()).toEqual([...endpoints, ...heads].sort())
  })

  it('guards every route in corridor order: failed-auth limit, authenticate, rate limit, authorize, and idempotency on mutations', async () => {
    t = await buildWriteApp()
    const guards = ['failed-auth-limit', 'authenticate', 'rate-limit', 'authorize']
    for (const route of t.app.workforceApi.routes) {
      // The events feed has no scope: it narrows what each key sees itself.
      const read = route.scope === null ? guards.filter((stage) => stage !== 'authorize') : guards
      const expected = READ_ONLY.has(route.method) ? read : [...guards, 'idempotency']
      expect({ route: `${route.method} ${route.url}`, stages: route.stages }).toEqual({ route: `${route.method} ${route.url}`, stages: expected })
    }
  })

  it('runs its stages in the order of CORRIDOR, which declares what each one answers on exactly the routes it guards', async () => {
    t = await buildWriteApp()
    const adapter = createMemoryAdapter()
    const specs = new Map(
      [
        ...apiRoutes({
          storage: adapter.storage,
          writes: { writes: adapter.writes, clock: { now: () => Date.now() }, events: CONTRACT, invites: { sendInvite: async () => {} }, locationOf: (path) => path },
        }),
        // Declared only: their handlers, which ask the module cache, never run here.
        ...eventFeedRoutes({ store: adapter.webhooks, catalogue: CONTRACT, modules: undefined as never }),
      ].map((spec) => [spec.operationId, spec]),
    )
    const hooked = new Set(t.app.workforceApi.routes.flatMap((route) => route.stages))
    const places = CORRIDOR.filter((place) => hooked.has(place.stage))
    expect(places.map((place) => place.stage).sort()).toEqual([...hooked].sort())
    for (const route of t.app.workforceApi.routes.filter((candidate) => candidate.method !== 'HEAD')) {
      const spec = specs.get(route.operationId) as RouteSpec
      expect(route.stages, route.operationId).toEqual(places.map((place) => place.stage).filter((name) => route.stages.includes(name)))
      for (const place of places) {
        const conditions = [...place.responses.map((response) => response.when), ...(place.stamps ?? []).map((stamp) => stamp.when)]
        const declares = conditions.some((when) => when?.(spec) ?? true)
        expect({ route: route.operationId, stage: place.stage, declares }).toEqual({ route: route.operationId, stage: place.stage, declares: route.stages.includes(place.stage) })
      }
    }
  })

  it('a read-only API (no writes) mounts no write route and no idempotency stage', async () => {
    t = await buildWriteApp({ options: { writes: undefined, idempotency: undefined } })
    const routes = t.app.workforceApi.routes
    expect(routes.filter((route) => !READ_ONLY.has(route.method))).toEqual([])
    expect(routes.every((route) => !route.stages.includes('idempotency'))).toBe(true)
  })

  it('rateLimit: false mounts neither rate-limit stage', async () => {
    t = await buildWriteApp({ options: { rateLimit: false } })
    for (const route of t.app.workforceApi.routes) {
      expect(route.stages.filter((stage) => stage.includes('limit'))).toEqual([])
    }
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
    // The events feed has no scope: any valid key may read it (its 403 is for `types` the key cannot read).
    for (const route of t.app.workforceApi.routes.filter((entry) => entry.scope !== 'company:read' && entry.scope !== null && entry.method !== 'HEAD')) {
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

describe('what every route refuses and sends', () => {
  let t: WriteTestApp
  afterEach(() => t.close())

  it('every route refuses an unknown query parameter and a NUL in one with a 422 naming it', async () => {
    t = await buildWriteApp()
    const key = await t.keyFor(1)
    for (const route of t.app.workforceApi.routes) {
      if (!READ_ONLY.has(route.method)) expect(Object.keys(VALID_BODIES), 'add a valid body for the new route').toContain(route.operationId)
      const payload = VALID_BODIES[route.operationId]
      for (const [query, field] of [['foo=bar', 'foo'], ['x=%00', 'x']]) {
        const response = await t.app.inject({
          method: route.method as 'GET',
          url: `${concrete(route.url)}?${query}`,
          headers: { 'x-api-key': key },
          ...(payload === undefined ? {} : { payload }),
        })
        const label = `${route.method} ${route.url}?${query}`
        expect({ label, status: response.statusCode }).toEqual({ label, status: 422 })
        if (route.method !== 'HEAD') expect(response.json().error.details, label).toContainEqual(expect.objectContaining({ field }))
      }
    }
  })

  it('every response says no-store and nosniff: success, refusal, validation error, unknown route, replay', async () => {
    t = await buildWriteApp()
    const key = await t.keyFor(1)
    const responses = [
      await t.get('/v1/users', key),
      await t.get('/v1/users', 'owk_nope'),
      await t.get('/v1/users?per_page=500', key),
      await t.get('/v1/nothing-here', key),
      await t.post('/v1/todos', { title: 'x' }, bearer(key, 'headers')),
      await t.post('/v1/todos', { title: 'x' }, bearer(key, 'headers')),
    ]
    expect(responses.map((response) => response.statusCode)).toEqual([200, 401, 422, 404, 422, 422])
    expect(responses[5]?.headers['idempotent-replay']).toBe('true')
    for (const response of responses) {
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.headers['x-content-type-options']).toBe('nosniff')
    }
  })

  it('sends no CORS headers: a browser on another origin cannot read a response (docs/decisions.md)', async () => {
    t = await buildWriteApp()
    const key = await t.keyFor(1)
    const simple = await t.app.inject({ method: 'GET', url: `${PREFIX}/v1/users`, headers: { 'x-api-key': key, origin: 'https://evil.example' } })
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: `${PREFIX}/v1/users`,
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' },
    })
    expect(simple.statusCode).toBe(200)
    expect(preflight.statusCode).toBe(404)
    for (const response of [simple, preflight]) {
      expect(Object.keys(response.headers).filter((name) => name.startsWith('access-control-'))).toEqual([])
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
    await registerCorridor(app, [stage('a', log), stage('b', log), stage('c', log)], table)
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
    await registerCorridor(app, [], [])
    expect(() => app.get('/unguarded', async () => ({}))).toThrow(/GET \/unguarded was not declared with mountRoute\(\)/)
    await app.close()
  })
})
