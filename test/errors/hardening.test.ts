import Fastify from 'fastify'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { workforceApi, workforceFrameworkErrors } from '../../src/index.js'
import { bearer, buildWriteApp, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'
import { exclusiveMemberIds, expectError, expectInvalid, listIds, todosOf } from '../helpers/seed-facts.js'
import { withResponseChecks } from '../helpers/response-checks.js'

/**
 * Regressions found by an adversarial review: each input below once produced a 500, a silent
 * change of data, a blocked event loop, or a write invisible to an updated_since sync.
 */
describe.each(WRITE_ADAPTERS)('hardening ($name)', (adapter) => {
  let t: WriteTestApp
  let key: string
  const todoBody = (extra: Record<string, unknown> = {}) => ({ title: 'Check', list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0], ...extra })

  beforeEach(async () => {
    t = await buildWriteApp({ adapter })
    key = await t.keyFor(1)
  })
  afterEach(() => t.close())

  it('rejects a query parameter named __proto__ like any unknown parameter', async () => {
    const res = await t.get('/v1/users?__proto__=1', key)
    expect(expectInvalid(res, ['__proto__'])[0]?.message).toBe('is not a recognised parameter')
  })

  it('rejects unknown query parameters on write routes', async () => {
    expectInvalid(await t.post('/v1/todos?bogus=1', todoBody(), key), ['bogus'])
    expectInvalid(await t.post(`/v1/users/${exclusiveMemberIds(1)[0]}/deactivate?force=true`, {}, key), ['force'])
    expect(await t.events()).toEqual([])
  })

  it('refuses NUL characters and unpaired surrogates with a 422 instead of storing changed text', async () => {
    expectInvalid(await t.post('/v1/todos', todoBody({ title: 'a\u0000b' }), key), ['title'])
    expectInvalid(await t.post('/v1/todos', todoBody({ notes: '\ud800x' }), key), ['notes'])
    expectInvalid(await t.get('/v1/users?email=a%00b%40example.com', key), ['email'])
    expectInvalid(await t.post('/v1/users', { email: 'x@example.com', first_name: 'A\u0000', last_name: 'B' }, key), ['first_name'])
    expect(await t.events()).toEqual([])
  })

  it('accepts only instants and days from year 0001 to 9999, and keeps 9999-12-31 as an open end', async () => {
    expectInvalid(await t.get('/v1/users?updated_since=0000-01-01T00:00:00Z', key), ['updated_since'])
    expectInvalid(await t.get('/v1/absences?date_from=0000-01-01', key), ['date_from'])
    expectInvalid(await t.post('/v1/todos', todoBody({ due_date: '9999-12-31T23:59:59.999-23:59' }), key), ['due_date'])
    expectInvalid(await t.post('/v1/todos', todoBody({ due_date: '0000-01-01', due_is_all_day: true }), key), ['due_date'])
    const key2 = await t.keyFor(2)
    const open = await t.get('/v1/todos?due_from=2026-01-01&due_to=9999-12-31&per_page=1', key2)
    expect(open.statusCode, open.body).toBe(200)
    const shifts = await t.get('/v1/shifts?date_to=9999-12-31&per_page=1', key2)
    expect(shifts.statusCode, shifts.body).toBe(200)
    expect(shifts.json().pagination.total).toBe(45)
  })

  it('answers a deeply nested body with a 422, also when an Idempotency-Key is sent', async () => {
    const deep = `{"title":${'['.repeat(3_300)}${']'.repeat(3_300)}}`
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/public/v1/todos',
      headers: { ...bearer(key, 'deep'), 'content-type': 'application/json' },
      payload: deep,
    })
    expectInvalid(res, ['body'])
  })

  it('treats "bearer" and "Bearer" as one credential: one idempotency slot', async () => {
    const first = await t.post('/v1/todos', todoBody(), bearer(key, 'case'))
    expect(first.statusCode).toBe(201)
    const retry = await t.post('/v1/todos', todoBody(), { authorization: `bearer ${key}`, 'idempotency-key': 'case' })
    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replay']).toBe('true')
    expect(retry.body).toBe(first.body)
  })

  it('checks an email of 200,000 characters in linear time (no regex backtracking)', async () => {
    const started = performance.now()
    const res = await t.post('/v1/users', { email: `a@${'.'.repeat(200_000)} `, first_name: 'A', last_name: 'B' }, key)
    const elapsed = performance.now() - started
    expectInvalid(res, ['email'])
    // The old pattern took 2.4 s at 60,000 characters and grows quadratically (~27 s here).
    expect(elapsed).toBeLessThan(2_000)
  })

  it('stamps a write that waited for another one after the wait, so an updated_since sync in between sees it later', async () => {
    const id = todosOf(1)[0]?.id as number
    const held = t.writes.holdNext()
    const pending = t.patch(`/v1/todos/${id}`, { title: 'Late' }, key)
    await held.arrived
    t.clock.advance(60_000)
    const syncStart = new Date(t.clock.now()).toISOString()
    const during = await t.get(`/v1/todos?updated_since=${encodeURIComponent(syncStart)}`, key)
    expect(during.json().data.map((todo: { id: number }) => todo.id)).not.toContain(id)
    held.release()
    expect((await pending).statusCode).toBe(200)
    const next = await t.get(`/v1/todos?updated_since=${encodeURIComponent(syncStart)}`, key)
    expect(next.json().data.map((todo: { id: number }) => todo.id)).toContain(id)
  })
})

describe('workforceFrameworkErrors', () => {
  it('renders a malformed URL, which Fastify refuses before any plugin runs, in the error envelope', async () => {
    const adapter = createMemoryAdapter()
    const app = withResponseChecks(Fastify({ frameworkErrors: workforceFrameworkErrors }))
    await app.register(workforceApi, { prefix: '/api/public', storage: adapter.storage, keyStore: adapter.keyStore, modules: adapter.modules })
    const res = await app.inject({ method: 'GET', url: '/api/public/v1/users/%E0%A4%A' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ error: { code: 'bad_request', status: 400 } })
    expectError(res as never, 400, 'bad_request')
    await app.close()
  })
})
