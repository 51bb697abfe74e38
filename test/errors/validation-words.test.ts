// Every 422 detail is worded for people (issue 26): no validator jargon (`must NOT have fewer
// than 1 characters`, `must match pattern "\S"`), and a repeated query parameter says so. The
// keywords, patterns and formats are read from the routes' own schemas as Fastify registers
// them, so a schema that starts using a new one fails here until it has a sentence and a case.
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { WORDED_KEYWORDS } from '../../src/corridor/validate.js'
import { portsOf, workforceAdmin, workforceApi } from '../../src/index.js'
import { MAX_ROLES_PER_USER } from '../../src/api/users/schema.js'
import { ADMIN, API, SECRET_KEY, testAuthorize } from '../admin/admin-app.js'
import { seedDataset } from '../helpers/build.js'

/** Schema words that hold no rule of their own (annotations, and applicators whose sub-schemas are walked). */
const NOT_RULES = new Set(['properties', 'items', 'title', 'description', 'examples', 'example', 'default', '$id', 'readOnly', 'deprecated'])

interface Used {
  keywords: Map<string, string[]>
  patterns: Map<string, string[]>
  formats: Map<string, string[]>
}

function note(map: Map<string, string[]>, key: string, where: string): void {
  map.set(key, [...(map.get(key) ?? []), where])
}

/** Every rule of `schema`, recursively, with where it is (for the failure message). */
function collect(schema: unknown, where: string, used: Used): void {
  if (schema === null || typeof schema !== 'object') return
  if (Array.isArray(schema)) return schema.forEach((child) => collect(child, where, used))
  for (const [keyword, value] of Object.entries(schema)) {
    if (!NOT_RULES.has(keyword)) note(used.keywords, keyword, where)
    if (keyword === 'pattern') note(used.patterns, value as string, where)
    if (keyword === 'format') note(used.formats, value as string, where)
    if (keyword === 'properties') for (const [name, child] of Object.entries(value as object)) collect(child, `${where}.${name}`, used)
    else if (keyword === 'items' || keyword === 'anyOf' || keyword === 'oneOf' || keyword === 'allOf' || keyword === 'not') collect(value, where, used)
  }
}

interface Case {
  /** The rule the request breaks: a keyword, `pattern <source>`, `format <name>`, or `repeated`. */
  rule: string
  request: InjectOptions
  field: string
  message: string | RegExp
}

const KEY_HEADER = 'x-api-key'
let key = ''
const pub = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown): InjectOptions => ({
  method,
  url: `${API}${url}`,
  headers: { [KEY_HEADER]: key, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
  ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
})
const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown): InjectOptions => ({
  method,
  url: `${ADMIN}${url}`,
  headers: {
    'x-test-session': '1:u1:Ada Admin',
    ...(method === 'GET' ? {} : { 'content-type': 'application/json', 'x-requested-with': 'workforce-admin' }),
  },
  ...(method === 'GET' ? {} : { payload: JSON.stringify(payload ?? {}) }),
})

const USER = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' }
const TODO = { title: 'Check the crane', list_id: 1 }
const KEY = { name: 'sync', scopes: ['users:read'] }
const ENDPOINT = 'we_' + 'a'.repeat(24)
const DATE_TIME = 'must be an ISO 8601 timestamp with Z or an offset (URL-encode + as %2B)'

/** One request per rule (several where a rule reads differently by context). Built lazily: `key` is made in beforeAll. */
const cases = (): Case[] => [
  { rule: 'additionalProperties', request: pub('GET', '/v1/users?foo=1'), field: 'foo', message: 'is not a recognised parameter' },
  { rule: 'additionalProperties', request: pub('POST', '/v1/users', { ...USER, nickname: 'A' }), field: 'nickname', message: 'is not a recognised field' },
  { rule: 'required', request: pub('POST', '/v1/users', { first_name: 'Ada', last_name: 'Lovelace' }), field: 'email', message: 'is required' },
  { rule: 'type', request: pub('GET', '/v1/users?page=two'), field: 'page', message: 'must be an integer' },
  { rule: 'type', request: pub('GET', '/v1/users?active=yes'), field: 'active', message: 'must be true or false' },
  { rule: 'type', request: pub('POST', '/v1/users', { ...USER, first_name: null }), field: 'first_name', message: 'must not be null' },
  { rule: 'type', request: pub('POST', '/v1/todos', { ...TODO, notes: 5 }), field: 'notes', message: 'must be a string or null' },
  { rule: 'type', request: pub('POST', '/v1/users', { ...USER, role_ids: 'r1' }), field: 'role_ids', message: 'must be an array' },
  { rule: 'repeated', request: pub('GET', '/v1/users?page=1&page=2'), field: 'page', message: 'was given more than once; give it once' },
  { rule: 'repeated', request: pub('GET', '/v1/projects?status=active&status=archived'), field: 'status', message: 'was given more than once; give it once' },
  { rule: 'enum', request: pub('GET', '/v1/projects?status=sleeping'), field: 'status', message: /^must be one of: [a-z_]+(, [a-z_]+)+$/ },
  { rule: 'format date', request: pub('GET', '/v1/shifts?date_from=2026-02-30'), field: 'date_from', message: 'must be an existing calendar day (YYYY-MM-DD)' },
  { rule: 'format date-time', request: pub('GET', '/v1/users?updated_since=yesterday'), field: 'updated_since', message: DATE_TIME },
  { rule: 'pattern \\S', request: pub('POST', '/v1/users', { ...USER, first_name: '   ' }), field: 'first_name', message: 'must contain a non-space character' },
  { rule: 'pattern \\S', request: pub('POST', '/v1/todos', { ...TODO, title: '\t' }), field: 'title', message: 'must contain a non-space character' },
  {
    rule: 'pattern ^[^\\s@]+@[^\\s@.]+(\\.[^\\s@.]+)+$',
    request: pub('POST', '/v1/users', { ...USER, email: 'ada at example.com' }),
    field: 'email',
    message: 'must be an email address such as ada@example.com',
  },
  { rule: 'minimum', request: pub('GET', '/v1/users?page=0'), field: 'page', message: 'must be >= 1' },
  { rule: 'maximum', request: pub('GET', '/v1/users?per_page=101'), field: 'per_page', message: 'must be <= 100' },
  { rule: 'minLength', request: pub('POST', '/v1/users', { ...USER, first_name: '' }), field: 'first_name', message: 'must not be empty' },
  { rule: 'minLength', request: pub('GET', '/v1/users?email='), field: 'email', message: 'must not be empty' },
  { rule: 'minLength', request: pub('POST', '/v1/users', { ...USER, email: 'a@' }), field: 'email', message: 'must be at least 3 characters long' },
  { rule: 'maxLength', request: pub('POST', '/v1/users', { ...USER, last_name: 'x'.repeat(101) }), field: 'last_name', message: 'must be at most 100 characters long' },
  {
    rule: 'maxItems',
    request: pub('POST', '/v1/users', { ...USER, role_ids: Array.from({ length: MAX_ROLES_PER_USER + 1 }, (_, i) => i + 1) }),
    field: 'role_ids',
    message: `must list at most ${MAX_ROLES_PER_USER} items`,
  },
  { rule: 'uniqueItems', request: pub('POST', '/v1/users', { ...USER, role_ids: [3, 1, 3] }), field: 'role_ids', message: 'must not list the same item twice (3 appears more than once)' },
  { rule: 'minProperties', request: pub('PATCH', '/v1/todos/1', {}), field: 'body', message: 'must contain at least one field' },
  { rule: 'minProperties', request: admin('PATCH', `/webhooks/endpoints/${ENDPOINT}`, {}), field: 'body', message: 'must contain at least one field' },
  { rule: 'minItems', request: admin('POST', '/keys', { ...KEY, scopes: [] }), field: 'scopes', message: 'must list at least one item' },
  { rule: 'anyOf', request: admin('POST', '/keys', { ...KEY, rate_limit: 0 }), field: 'rate_limit', message: 'must be >= 1' },
  { rule: 'anyOf', request: admin('POST', '/keys', { ...KEY, rate_limit: 'fast' }), field: 'rate_limit', message: 'must be an integer or null' },
  { rule: 'anyOf', request: admin('POST', '/keys', { ...KEY, expires_at: 'soon' }), field: 'expires_at', message: DATE_TIME },
  { rule: 'anyOf', request: admin('POST', '/keys', { ...KEY, expires_at: 5 }), field: 'expires_at', message: 'must be a string or null' },
  {
    rule: 'anyOf',
    request: admin('POST', '/webhooks/endpoints', { url: 'https://example.com/hook', events: ['*'], description: 'x'.repeat(501) }),
    field: 'description',
    message: 'must be at most 500 characters long',
  },
  { rule: 'const', request: admin('GET', `/webhooks/endpoints/${ENDPOINT}/deliveries?status=lost`), field: 'status', message: 'must be one of: pending, delivered, failed' },
  { rule: 'pattern ^[a-z_]+\\.[a-z_]+$', request: admin('GET', `/webhooks/endpoints/${ENDPOINT}/deliveries?event_type=todos`), field: 'event_type', message: 'must be an event type such as todos.created' },
  { rule: 'pattern ^aud_[a-z2-7]{24}$', request: admin('GET', '/audit?before=42'), field: 'before', message: 'must be an audit entry id (aud_ and 24 letters and digits)' },
]

/** Ajv's own phrasing, which must never reach a client. */
const VALIDATOR_WORDS = /must NOT|must match|must have|must be equal|must pass|should |is invalid|expected form|\bformat\b|,null/

let app: FastifyInstance
const used: Used = { keywords: new Map(), patterns: new Map(), formats: new Map() }

beforeAll(async () => {
  const adapter = createMemoryAdapter(seedDataset())
  app = Fastify()
  app.addHook('onRoute', (route) => {
    const schema = (route.schema ?? {}) as Record<string, unknown>
    // Path parameters are left out: a path id that fails its schema is a 404, never worded.
    for (const part of ['querystring', 'body', 'headers']) collect(schema[part], `${route.method} ${route.url} ${part}`, used)
  })
  await app.register(workforceApi, { prefix: API, ...portsOf(adapter), rateLimit: false, webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, dispatcher: false } })
  await app.register(workforceAdmin, { prefix: ADMIN, authorize: testAuthorize })
  await app.ready()
  key = (await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })).key
})

afterAll(async () => {
  await app?.close()
})

describe('validation messages (issue 26)', () => {
  it('covers every rule the query and body schemas use: each keyword is worded, and has a case here', () => {
    expect(used.keywords.size, 'the routes were collected').toBeGreaterThan(5)
    const covered = new Set(cases().map((c) => c.rule.split(' ')[0]))
    const unworded = [...used.keywords.keys()].filter((keyword) => !(WORDED_KEYWORDS as readonly string[]).includes(keyword))
    const untested = [...used.keywords.keys()].filter((keyword) => keyword !== 'items' && !covered.has(keyword))
    expect(unworded, 'keywords the validator has no sentence for').toEqual([])
    expect(untested, 'keywords without a case in this file').toEqual([])
  })

  it('has a case for every pattern and every format the query and body schemas use', () => {
    const rules = new Set(cases().map((c) => c.rule))
    const missing = [...[...used.patterns.keys()].map((p) => `pattern ${p}`), ...[...used.formats.keys()].map((f) => `format ${f}`)].filter((rule) => !rules.has(rule))
    expect(missing, [...used.patterns].map(([p, where]) => `${p}: ${where[0]}`).join('\n')).toEqual([])
  })

  it.each(cases().map((c, index) => [`${c.rule}: ${String(c.request.method)} ${String(c.request.url)}`, index] as const))('%s', async (_name, index) => {
    // Built again here: the key exists only once beforeAll has run.
    const c = cases()[index]!
    const res = await app.inject(c.request)
    expect(res.statusCode, res.body).toBe(422)
    const body = res.json() as { error: { code: string; details: { field: string; message: string }[] } }
    expect(body.error.code).toBe('validation_error')
    const detail = body.error.details.find((d) => d.field === c.field)
    expect(detail, res.body).toBeDefined()
    if (typeof c.message === 'string') expect(detail!.message).toBe(c.message)
    else expect(detail!.message).toMatch(c.message)
    for (const d of body.error.details) expect(d.message, `${d.field}: ${d.message}`).not.toMatch(VALIDATOR_WORDS)
  })
})
