import { readFileSync } from 'node:fs'
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { workforceApi } from '../../src/plugin.js'
import { build, seedDataset, type TestApp } from './build.js'
import { checkResponse, COMMITTED_DOCUMENT_FILE, type Exchange, type OpenApiDocument } from './openapi-responses.js'
import { withResponseChecks } from './response-checks.js'
import { takeResponseProblems } from './response-problems.js'

// The checker must be able to fail: each case below is a response the document does not
// describe, and each must be reported. Without these, a checker that accepts everything
// would make every suite pass.

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' }
const RATE_LIMIT = { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '599', 'x-ratelimit-reset': '60' }
/** Every read's 200 and 304 carry the answer's tag (issue 25). */
const ETAG = { etag: '"q1XhZr6vNw3kTtYb0mJc8A"' }
const COMPANY = { id: 1, name: 'Rossi', timezone: 'Europe/Rome', country: 'IT', created_at: '2025-10-07T08:01:00.000Z', updated_at: '2025-10-08T08:01:00.000Z' }
const envelope = (code: string, status: number) => JSON.stringify({ error: { code, message: 'm', status } })

const company = (overrides: Partial<Exchange> = {}): Exchange => ({
  method: 'GET',
  url: '/api/public/v1/company',
  status: 200,
  headers: { ...JSON_TYPE, ...RATE_LIMIT, ...ETAG },
  body: JSON.stringify({ data: COMPANY }),
  ...overrides,
})

describe('checkResponse', () => {
  it('accepts a response as documented', () => {
    expect(checkResponse(company())).toEqual([])
  })

  it('reports a read answered without its ETag', () => {
    expect(checkResponse(company({ headers: { ...JSON_TYPE, ...RATE_LIMIT } }))).toEqual([expect.stringContaining('required header ETag is missing')])
  })

  it('accepts every example the document gives for its own operations', () => {
    const document = JSON.parse(readFileSync(COMMITTED_DOCUMENT_FILE, 'utf8')) as OpenApiDocument
    let checked = 0
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods as Record<string, { responses: Record<string, { content?: Record<string, { example?: unknown }> }> }>)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const example = response.content?.['application/json']?.example
          if (example === undefined) continue
          const headers = { ...JSON_TYPE, ...RATE_LIMIT, ...(status === '201' ? { location: '/api/public/v1/x/1' } : {}), ...(method === 'get' && status === '200' ? ETAG : {}) }
          expect(checkResponse({ method, path, status: Number(status), headers, body: JSON.stringify(example) })).toEqual([])
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(20)
  })

  it('reports a status no operation documents', () => {
    expect(checkResponse(company({ status: 418 }))).toEqual([expect.stringMatching(/^GET \/v1\/company: status 418 is not documented/)])
  })

  it("reports a status documented elsewhere but not for this operation (a list has no 404, a read no 409)", () => {
    const notFound = checkResponse({ method: 'GET', url: '/api/public/v1/users', status: 404, headers: JSON_TYPE, body: envelope('not_found', 404) })
    expect(notFound).toEqual([expect.stringContaining('status 404 is not documented')])
    const conflict = checkResponse({ method: 'GET', url: '/api/public/v1/todos/3', status: 409, headers: JSON_TYPE, body: envelope('conflict', 409) })
    expect(conflict).toEqual([expect.stringMatching(/^GET \/v1\/todos\/\{id\}: status 409 is not documented/)])
  })

  it('reports an extra success status: 201 from a read, 204 from a change', () => {
    expect(checkResponse(company({ status: 201 }))).toEqual([expect.stringContaining('status 201 is not documented')])
    const patch = { method: 'PATCH', path: '/v1/todos/{id}', status: 204, headers: {}, body: '' }
    expect(checkResponse(patch)).toEqual([expect.stringContaining('status 204 is not documented')])
  })

  it('reports a body without a required field, naming the field', () => {
    const { name: _name, ...nameless } = COMPANY
    const problems = checkResponse(company({ body: JSON.stringify({ data: nameless }) }))
    expect(problems).toEqual([expect.stringContaining("at /data must have required property 'name'")])
  })

  it('reports a body of the wrong type, a malformed date-time and a body that is not JSON', () => {
    expect(checkResponse(company({ body: JSON.stringify({ data: { ...COMPANY, id: '1' } }) }))).toEqual([expect.stringContaining('at /data/id must be integer')])
    expect(checkResponse(company({ body: JSON.stringify({ data: { ...COMPANY, created_at: 'yesterday' } }) }))).toEqual([
      expect.stringContaining('at /data/created_at must match format "date-time"'),
    ])
    expect(checkResponse(company({ body: '{"data":' }))).toEqual([expect.stringContaining('the body is not JSON')])
  })

  it('reports an error body that is not the envelope', () => {
    const problems = checkResponse(company({ status: 403, body: JSON.stringify({ message: 'Forbidden' }) }))
    expect(problems).toEqual([expect.stringContaining("must have required property 'error'")])
  })

  it('reports an empty body, and a content type the document does not name', () => {
    expect(checkResponse(company({ body: '' }))).toEqual([expect.stringContaining('the body is empty')])
    expect(checkResponse(company({ headers: { ...RATE_LIMIT, ...ETAG, 'content-type': 'text/plain' } }))).toEqual([
      expect.stringContaining('content type text/plain is not documented'),
    ])
  })

  it('reports a header of the wrong type, and never reads 1.5 or 12abc as an integer', () => {
    for (const value of ['many', '1.5', '12abc', '-1']) {
      const problems = checkResponse(company({ headers: { ...JSON_TYPE, ...RATE_LIMIT, ...ETAG, 'x-ratelimit-remaining': value } }))
      expect(problems, value).toEqual([expect.stringContaining(`header X-RateLimit-Remaining: "${value}"`)])
    }
    const replay = { method: 'POST', path: '/v1/todos', status: 201, headers: { ...JSON_TYPE, location: '/x', 'idempotent-replay': 'yes' }, body: '{}' }
    expect(checkResponse(replay)).toContainEqual(expect.stringContaining('header Idempotent-Replay: "yes" must be equal to one of the allowed values'))
  })

  it('reports a missing required header: Retry-After on a 429 and a 503, WWW-Authenticate on a 401, Location on a 201', () => {
    expect(checkResponse(company({ status: 429, body: envelope('rate_limited', 429) }))).toEqual([expect.stringContaining('required header Retry-After is missing')])
    expect(checkResponse(company({ status: 503, headers: JSON_TYPE, body: envelope('service_unavailable', 503) }))).toEqual([
      expect.stringContaining('required header Retry-After is missing'),
    ])
    expect(checkResponse(company({ status: 401, headers: JSON_TYPE, body: envelope('unauthorized', 401) }))).toEqual([
      expect.stringContaining('required header WWW-Authenticate is missing'),
    ])
    const created = checkResponse({ method: 'POST', url: '/api/public/v1/users', status: 201, headers: JSON_TYPE, body: '{"data":{}}' })
    expect(created).toContainEqual(expect.stringContaining('required header Location is missing'))
  })

  it('matches concrete URLs to templates, without the prefix or the query', () => {
    const problems = checkResponse({ method: 'POST', url: 'http://127.0.0.1:3000/api/public/v1/users/42/deactivate?x=1', status: 201, headers: {}, body: '' })
    expect(problems).toEqual([expect.stringMatching(/^POST \/v1\/users\/\{id\}\/deactivate: status 201 is not documented/)])
  })

  it('skips what is not an operation: unknown paths, the document itself, HEAD, a method the path lacks', () => {
    const teapot = { status: 418, headers: {}, body: 'x' }
    expect(checkResponse({ method: 'GET', url: '/api/public/v1/nowhere', ...teapot })).toEqual([])
    expect(checkResponse({ method: 'GET', url: '/api/public/openapi.json', ...teapot })).toEqual([])
    expect(checkResponse({ method: 'GET', url: '/health', ...teapot })).toEqual([])
    expect(checkResponse({ method: 'GET', url: '/v1/company', ...teapot }), 'outside the prefix').toEqual([])
    expect(checkResponse({ method: 'HEAD', url: '/api/public/v1/company', ...teapot })).toEqual([])
    expect(checkResponse({ method: 'DELETE', url: '/api/public/v1/company', ...teapot })).toEqual([])
  })

  it('reports a mounted route that the document lacks', () => {
    const teapot = { status: 200, headers: {}, body: '' }
    expect(checkResponse({ method: 'DELETE', path: '/v1/company', mounted: true, ...teapot })).toEqual(['DELETE /v1/company: the operation is not in the document'])
    expect(checkResponse({ method: 'GET', path: '/v1/payroll', mounted: true, ...teapot })).toEqual(['GET /v1/payroll: the path is not in the document'])
  })
})

describe('withResponseChecks', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('records what a real API response lacks, over inject and real HTTP, with method, url and status', async () => {
    // Seeded: a key is made only for a company the storage holds.
    const adapter = createMemoryAdapter(seedDataset())
    const app = Fastify()
    // Registered before the check, so the check sees the body as this hook leaves it: one the
    // document does not describe.
    app.addHook('onSend', (request, _reply, payload, done) => done(null, request.url.includes('/v1/company') ? '{"data":{"id":1}}' : payload))
    withResponseChecks(app)
    await app.register(workforceApi, { prefix: '/api/public', storage: adapter.storage, keyStore: adapter.keyStore, modules: adapter.modules })
    try {
      const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'], expiresAt: null, name: null })
      const injected = await app.inject({ method: 'GET', url: '/api/public/v1/company?x=1', headers: { 'x-api-key': key } })
      const address = await app.listen({ host: '127.0.0.1', port: 0 })
      await fetch(`${address}/api/public/v1/company`, { headers: { 'x-api-key': key } })
      const { problems } = takeResponseProblems()
      expect(problems).toHaveLength(2)
      expect(problems[0]).toMatchObject({ method: 'GET', url: '/api/public/v1/company?x=1', status: injected.statusCode })
      expect(problems[0]?.problem).toMatch(/must have required property/)
      expect(problems[1]).toMatchObject({ method: 'GET', url: '/api/public/v1/company' })
    } finally {
      await app.close()
    }
  })

  it("checks what Fastify's router answers before any hook (a malformed URL), by URL, over inject and real HTTP", async () => {
    const adapter = createMemoryAdapter()
    // A framework error handler that answers with a status no operation documents.
    const teapot = JSON.stringify({ error: { code: 'teapot', message: 'm', status: 418 } })
    const app = withResponseChecks(Fastify({ frameworkErrors: (_error, _request, reply) => void reply.code(418 as never).type('application/json').send(teapot as never) }))
    await app.register(workforceApi, { prefix: '/api/public', storage: adapter.storage, keyStore: adapter.keyStore, modules: adapter.modules })
    try {
      expect((await app.inject({ method: 'GET', url: '/api/public/v1/roles/%zz' })).statusCode).toBe(418)
      const address = await app.listen({ host: '127.0.0.1', port: 0 })
      expect((await fetch(`${address}/api/public/v1/todos/%zz`)).status).toBe(418)
      // None of the document's business: outside its paths, and an operation this read-only
      // app does not have (its own document has no PATCH, though docs/openapi.json has).
      expect((await app.inject({ method: 'GET', url: '/elsewhere/%zz' })).statusCode).toBe(418)
      expect((await app.inject({ method: 'PATCH', url: '/api/public/v1/todos/%zz' })).statusCode).toBe(418)
      const { problems } = takeResponseProblems()
      expect(problems.map((p) => p.problem)).toEqual([
        expect.stringMatching(/^GET \/v1\/roles\/\{id\}: status 418 is not documented/),
        expect.stringMatching(/^GET \/v1\/todos\/\{id\}: status 418 is not documented/),
      ])
    } finally {
      await app.close()
    }
  })

  it('records nothing for responses as documented', async () => {
    t = await build()
    const key = await t.keyFor(1)
    expect((await t.get('/v1/company', key)).statusCode).toBe(200)
    expect((await t.get('/v1/todos/999999', key)).statusCode).toBe(404)
    expect((await t.get('/v1/nowhere', key)).statusCode).toBe(404)
    expect(takeResponseProblems().problems).toEqual([])
  })
})
