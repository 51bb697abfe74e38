import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { validate } from '@readme/openapi-parser'
import fastifySwagger from '@fastify/swagger'
import Fastify from 'fastify'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildDocument, DOCUMENT_FILE, EXAMPLES_FILE, examplesModule, recordExamples } from '../../scripts/openapi.js'
import { OPTION_ERROR_CODES } from '../../src/errors.js'
import { errorStatusesOf } from '../../src/openapi/responses.js'
import type { RouteSpec } from '../../src/api/route-spec.js'
import { apiRoutes, CONTRACT, EVENT_TYPES, type EventType } from '../../src/api/index.js'
import { eventFeedRoutes } from '../../src/api/events-feed.js'
import { workforceApi } from '../../src/plugin.js'
import { generateDataset } from '../../src/seed/generate.js'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { build, PREFIX, type TestApp } from '../helpers/build.js'
import { schemaValidators } from '../helpers/openapi-responses.js'

type Json = Record<string, any>

const committed = (): Json => JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Json

/** Validates a value against the schema at a JSON pointer of `document`; the problems, or none. */
function schemaChecker(document: Json) {
  const validatorAt = schemaValidators(document)
  return (pointer: string, value: unknown): string[] => {
    const check = validatorAt(pointer)
    return check(value) ? [] : (check.errors ?? []).map((error) => `${pointer}${error.instancePath} ${error.message}`)
  }
}

const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1')

/** The declared routes of an API with writes: what the document must describe. */
function declaredRoutes(): RouteSpec[] {
  const adapter = createMemoryAdapter()
  return [
    ...apiRoutes({
      storage: adapter.storage,
      writes: { writes: adapter.writes, clock: { now: () => Date.now() }, events: CONTRACT, invites: { sendInvite: async () => {} }, locationOf: (path) => path },
    }),
    // The events feed, mounted with a webhooks port; declared only (its handlers never run here).
    ...eventFeedRoutes({ store: adapter.webhooks, catalogue: CONTRACT, modules: undefined as never }),
  ]
}

describe('the committed OpenAPI document', () => {
  it('is what npm run openapi writes today (run it after changing a route, a schema or the seed)', async () => {
    expect(await buildDocument()).toBe(readFileSync(DOCUMENT_FILE, 'utf8'))
  })

  it("has examples recorded from today's API over the seed data", async () => {
    expect(examplesModule(await recordExamples())).toBe(readFileSync(EXAMPLES_FILE, 'utf8'))
  })

  it("gives the sync client's generated types from today's document", () => {
    const directory = mkdtempSync(join(tmpdir(), 'wfa-openapi-types-'))
    try {
      const output = join(directory, 'api-types.ts')
      execFileSync(process.execPath, ['node_modules/openapi-typescript/bin/cli.js', DOCUMENT_FILE, '--output', output], { stdio: 'pipe' })
      expect(readFileSync(output, 'utf8')).toBe(readFileSync('examples/sync-client/api-types.ts', 'utf8'))
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  })

  it('is a valid OpenAPI 3.1 document, without warnings', async () => {
    const document = committed()
    expect(document.openapi).toBe('3.1.0')
    const result = await validate(structuredClone(document) as never)
    expect(result).toMatchObject({ valid: true, warnings: [] })
  })

  it('refuses a document with a mistake (the validator can fail)', async () => {
    const broken = committed()
    broken.paths['/v1/users'].get.responses['200'].content['application/json'].schema.properties.data.items = { $ref: '#/components/schemas/Nobody' }
    const result = await validate(broken as never)
    expect(result.valid).toBe(false)
  })
})

describe('what the document says of each operation', () => {
  const document = committed()
  const routes = declaredRoutes()
  const operations = new Map<string, { path: string; method: string; operation: Json }>()
  for (const [path, methods] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(methods as Json)) operations.set(operation.operationId, { path, method, operation })
  }

  it('describes every route once, and nothing else', () => {
    expect([...operations.keys()].sort()).toEqual(routes.map((route) => route.operationId).sort())
    for (const route of routes) {
      const found = operations.get(route.operationId)
      expect(found?.method).toBe(route.method.toLowerCase())
      expect(found?.path).toBe(route.url.replace(/:(\w+)/g, '{$1}'))
    }
  })

  it.each(declaredRoutes().map((route) => [route.operationId, route] as const))('%s: tag, summary, scope on both security schemes, errors, headers', (operationId, route) => {
    const { operation } = operations.get(operationId) as { operation: Json }
    expect(operation.tags).toEqual([route.tag])
    expect(operation.summary).toBe(route.summary)
    if (route.scope === undefined) {
      // The events feed: any valid key, no scope to name.
      expect(operation.description).toContain('Any valid key may call it')
      expect(operation.security).toEqual([{ ApiKey: [] }, { Bearer: [] }])
      expect(operation['x-required-scope']).toBeUndefined()
    } else {
      expect(operation.description).toContain(`\`${route.scope}\``)
      expect(operation.security).toEqual([{ ApiKey: [route.scope] }, { Bearer: [route.scope] }])
    }
    const statuses = Object.keys(operation.responses).map(Number)
    const success = Object.keys(route.schema.response).map(Number)
    // A read also answers 304 to a client holding its tag (src/api/conditional.ts).
    const notModified = route.method === 'GET' ? [304] : []
    expect(statuses.sort()).toEqual([...success, ...notModified, ...errorStatusesOf(route)].sort())
    for (const status of errorStatusesOf(route)) expect(operation.responses[status].$ref).toMatch(/^#\/components\/responses\/\w+$/)
    const [status] = success
    const headers = Object.keys(operation.responses[String(status)].headers)
    expect(headers).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']))
    expect(headers.includes('Location')).toBe(status === 201)
    const idempotencyKey = (operation.parameters ?? []).some((parameter: Json) => parameter.$ref === '#/components/parameters/Idempotency-Key')
    expect(idempotencyKey).toBe(route.method !== 'GET')
    expect(headers.includes('Idempotent-Replay')).toBe(route.method !== 'GET')
    expect(headers.includes('ETag')).toBe(route.method === 'GET')
    const ifNoneMatch = (operation.parameters ?? []).some((parameter: Json) => parameter.$ref === '#/components/parameters/If-None-Match')
    expect(ifNoneMatch).toBe(route.method === 'GET')
    if (route.method === 'GET') {
      expect(Object.keys(operation.responses['304'].headers)).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'ETag'])
      expect(operation.responses['304'].content).toBeUndefined()
    }
  })

  it('lists every query parameter of a route with the constraints its schema validates with', () => {
    for (const route of routes) {
      const { operation } = operations.get(route.operationId) as { operation: Json }
      const declared = (route.schema.querystring as Json | undefined)?.properties ?? {}
      const documented = Object.fromEntries((operation.parameters ?? []).filter((p: Json) => p.in === 'query').map((p: Json) => [p.name, p]))
      expect(Object.keys(documented).sort(), route.operationId).toEqual(Object.keys(declared).sort())
      for (const [name, schema] of Object.entries(declared as Json)) {
        const parameter = documented[name] as Json
        expect(parameter.required, `${route.operationId} ${name}`).toBe(false)
        for (const keyword of ['type', 'enum', 'minimum', 'maximum', 'format', 'minLength', 'maxLength', 'default']) {
          expect(parameter.schema[keyword], `${route.operationId} ${name} ${keyword}`).toEqual((schema as Json)[keyword])
        }
        expect(parameter.description, `${route.operationId} ${name}`).toMatch(/\w/)
      }
    }
  })

  it('names the path parameter id as a positive integer on every by-id route', () => {
    for (const route of routes.filter((candidate) => candidate.url.includes(':id'))) {
      const { operation } = operations.get(route.operationId) as { operation: Json }
      const id = operation.parameters.find((parameter: Json) => parameter.in === 'path')
      expect(id).toMatchObject({ name: 'id', required: true, schema: { type: 'integer', minimum: 1 } })
    }
  })

  it('documents the 422 details shape and the envelope once, as components', () => {
    expect(document.components.schemas.ErrorEnvelope.properties.error.properties.details.items.required).toEqual(['field', 'message'])
    expect(document.components.responses.ValidationFailed.content['application/json'].example.error.details[0]).toEqual({ field: 'per_page', message: 'must be <= 100' })
    expect(document.components.responses.RateLimited.headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' })
    expect(document.components.securitySchemes).toMatchObject({ ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' }, Bearer: { type: 'http', scheme: 'bearer' } })
  })
})

describe('the examples in the document', () => {
  const document = committed()
  const check = schemaChecker(document)

  it('are present for every operation, and each validates against its schema', () => {
    let checked = 0
    for (const [path, methods] of Object.entries(document.paths as Json)) {
      for (const [method, operation] of Object.entries(methods as Json)) {
        const at = `/paths/${escape(path)}/${method}`
        const [status, response] = Object.entries(operation.responses as Json).find(([code]) => code.startsWith('2')) as [string, Json]
        const media = response.content['application/json']
        expect(media.example, `${operation.operationId} has a response example`).toBeDefined()
        expect(check(`${at}/responses/${status}/content/application~1json/schema`, media.example)).toEqual([])
        checked += 1
        const body = operation.requestBody?.content['application/json']
        if (body !== undefined) {
          expect(body.example, `${operation.operationId} has a request example`).toBeDefined()
          expect(check(`${at}/requestBody/content/application~1json/schema`, body.example)).toEqual([])
          checked += 1
        }
        for (const [index, parameter] of (operation.parameters ?? []).entries()) {
          if (parameter.example === undefined) continue
          expect(check(`${at}/parameters/${index}/schema`, parameter.example)).toEqual([])
          checked += 1
        }
      }
    }
    for (const [name, response] of Object.entries(document.components.responses as Json)) {
      expect(check('/components/schemas/ErrorEnvelope', response.content['application/json'].example), name).toEqual([])
      checked += 1
    }
    expect(checked).toBeGreaterThan(40)
  })

  it('a wrong example is caught (the check can fail)', () => {
    const pointer = `/paths/${escape('/v1/todos')}/post/requestBody/content/application~1json/schema`
    expect(check(pointer, { title: 'no list' })).not.toEqual([])
    expect(check('/components/schemas/Todo', { id: 1 })).not.toEqual([])
  })
})

describe('the webhooks in the document', () => {
  const document = committed()
  const check = schemaChecker(document)

  it('has one entry per event type, each with the signature headers', () => {
    expect(Object.keys(document.webhooks).sort()).toEqual([...EVENT_TYPES].sort())
    for (const type of EVENT_TYPES) {
      const names = document.webhooks[type].post.parameters.map((parameter: Json) => parameter.$ref.split('/').pop())
      expect(names).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-Service-Signature'])
    }
  })

  it('describes the payload a real event of every type carries', () => {
    const data = generateDataset()
    const records: Record<string, unknown> = {
      users: { ...data.people[0], ...data.memberships[0], id: data.memberships[0]?.user_id, invited: null },
      employees: data.employees[0],
      projects: data.projects[0],
      shifts: data.shifts[0],
      absences: data.absences[0],
      expenses: data.expenses[0],
      todos: data.todos[0],
      company: data.companies[0],
    }
    for (const type of EVENT_TYPES) {
      const record = records[type.split('.')[0] as string]
      const event = CONTRACT.renderEvent({ type, companyId: 1, record }, new Date('2026-10-01T09:30:00.000Z'))
      const pointer = `/webhooks/${escape(type)}/post/requestBody/content/application~1json/schema`
      expect(check(pointer, JSON.parse(event.payload)), type).toEqual([])
      const other = EVENT_TYPES.find((candidate) => candidate !== type) as EventType
      expect(check(pointer, { ...JSON.parse(event.payload), type: other }), `${type} refuses another type`).not.toEqual([])
    }
  })
})

describe('serving the document', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('answers GET <prefix>/openapi.json without an API key, the same document as docs/openapi.json describes', async () => {
    t = await build()
    const response = await t.app.inject(`${PREFIX}/openapi.json`)
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.headers['cache-control']).toBe('public, max-age=300')
    const served = response.json() as Json
    // A read-only app: the write operations are not mounted, so not described.
    expect(served.paths['/v1/users'].post).toBeUndefined()
    expect(served.paths['/v1/users'].get).toEqual(committed().paths['/v1/users'].get)
    expect(served.servers).toEqual([{ url: PREFIX }])
  })

  it('is not an API route: it needs no key, passes no corridor stage and is not in the route table', async () => {
    t = await build()
    const listed = t.app.workforceApi.routes.map((route) => route.url)
    expect(listed.some((url) => url.includes('openapi') || url.includes('/docs'))).toBe(false)
    const response = await t.app.inject({ url: `${PREFIX}/openapi.json`, headers: { 'x-api-key': 'owk_0000000000000000_' + '0'.repeat(64) } })
    expect(response.statusCode).toBe(200)
    expect(response.headers['x-ratelimit-limit']).toBeUndefined()
  })

  it('serves neither the document nor the page with openapi: false', async () => {
    t = await build({ options: { openapi: false } })
    expect((await t.app.inject(`${PREFIX}/openapi.json`)).statusCode).toBe(404)
    expect((await t.app.inject(`${PREFIX}/docs`)).statusCode).toBe(404)
    expect((await t.get('/v1/company', await t.keyFor(1))).statusCode).toBe(200)
  })

  it('serves the reference page only when asked to', async () => {
    t = await build()
    expect((await t.app.inject(`${PREFIX}/docs`)).statusCode).toBe(404)
    await t.close()
    t = await build({ options: { openapi: { referencePage: true, title: 'Acme HR API' } } })
    const page = await t.app.inject(`${PREFIX}/docs`)
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toContain('text/html')
    expect(page.body).toContain(`${PREFIX}/docs/static/swagger-ui-bundle.js`)
    const specification = (await t.app.inject(`${PREFIX}/docs/json`)).json() as Json
    expect(specification.info.title).toBe('Acme HR API')
  })

  it("leaves a host's own @fastify/swagger alone, and shows ours on the page", async () => {
    const adapter = createMemoryAdapter(generateDataset())
    const app = Fastify()
    try {
      await app.register(fastifySwagger, { openapi: { info: { title: 'Host app', version: '1' } } })
      app.get('/health', { schema: { tags: ['host'] } }, async () => ({ ok: true }))
      await app.register(workforceApi, { prefix: PREFIX, storage: adapter.storage, keyStore: adapter.keyStore, modules: adapter.modules, openapi: { referencePage: true } })
      await app.ready()
      expect((app.swagger() as Json).info.title).toBe('Host app')
      const ours = (await app.inject(`${PREFIX}/docs/json`)).json() as Json
      expect(ours.info.title).toBe('Workforce public API')
      expect(ours.paths['/health']).toBeUndefined()
      expect((await app.inject(`${PREFIX}/openapi.json`)).json()).toEqual(ours)
    } finally {
      await app.close()
    }
  })

  it.each([
    [{ openapi: 'yes' }, OPTION_ERROR_CODES.invalid, 'openapi'],
    [{ openapi: { referencePage: 'yes' } }, OPTION_ERROR_CODES.invalid, 'openapi.referencePage'],
    [{ openapi: { title: '' } }, OPTION_ERROR_CODES.invalid, 'openapi.title'],
    [{ openapi: { referncePage: true } }, OPTION_ERROR_CODES.unknown, 'openapi.referncePage'],
  ])('refuses %j at registration', async (options, code, option) => {
    await expect(build({ options: options as never })).rejects.toMatchObject({ code, option })
  })
})

describe('an app without writes and with an empty prefix', () => {
  let served: Json
  beforeAll(async () => {
    const adapter = createMemoryAdapter()
    const app = Fastify()
    await app.register(workforceApi, { storage: adapter.storage, keyStore: adapter.keyStore, modules: adapter.modules })
    served = (await app.inject('/openapi.json')).json() as Json
    await app.close()
  })

  it('describes its server as / and still lists every webhook', () => {
    expect(served.servers).toEqual([{ url: '/' }])
    expect(Object.keys(served.webhooks)).toHaveLength(22)
    expect(served.paths['/v1/todos'].patch).toBeUndefined()
  })
})
