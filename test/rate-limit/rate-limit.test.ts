import { afterEach, describe, expect, it, vi } from 'vitest'
import { UNAUTHORIZED_MESSAGE } from '../../src/errors.js'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { bearer, buildWriteApp, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'

const WINDOW_MS = 60_000

function expectRateLimited(response: { statusCode: number; headers: Record<string, unknown>; json(): any }): void {
  expect(response.statusCode).toBe(429)
  expect(response.json()).toEqual({ error: { code: 'rate_limited', message: expect.any(String), status: 429 } })
  const retryAfter = Number(response.headers['retry-after'])
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW_MS / 1000).toBe(true)
}

// Spec 7 and 8: rate limiting with Retry-After and X-RateLimit-* (names and budgets: docs/decisions.md).
describe.each(READ_ADAPTERS)('rate limiting per key ($name)', (adapter) => {
  let t: TestApp
  afterEach(async () => {
    vi.useRealTimers()
    await t.close()
  })

  it('counts down X-RateLimit-Remaining, then answers 429 rate_limited with Retry-After', async () => {
    t = await build({ adapter, options: { rateLimit: { max: 5, timeWindow: WINDOW_MS } } })
    const key = await t.keyFor(1, ['users:read'])
    const remaining: string[] = []
    for (let i = 0; i < 5; i++) {
      const response = await t.get('/v1/users', key)
      expect(response.statusCode).toBe(200)
      expect(response.headers['x-ratelimit-limit']).toBe('5')
      const reset = Number(response.headers['x-ratelimit-reset'])
      expect(reset >= 1 && reset <= 60).toBe(true)
      remaining.push(String(response.headers['x-ratelimit-remaining']))
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0'])
    const refused = await t.get('/v1/users', key)
    expectRateLimited(refused)
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
    expect(refused.json().error.message).toContain('5 requests per 60 s')
  })

  it('budgets are per key: another key, even of the same company, has its own', async () => {
    t = await build({ adapter, options: { rateLimit: { max: 2 } } })
    const first = await t.keyFor(1, ['users:read'])
    const second = await t.keyFor(1, ['users:read'])
    await t.get('/v1/users', first)
    await t.get('/v1/users', first)
    expectRateLimited(await t.get('/v1/users', first))
    const other = await t.get('/v1/users', second)
    expect(other.statusCode).toBe(200)
    expect(other.headers['x-ratelimit-remaining']).toBe('1')
  })

  it("a key's own rate_limit overrides the default budget, up or down", async () => {
    t = await build({ adapter, options: { rateLimit: { max: 3 } } })
    const tight = await t.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'], rateLimit: 1 })
    const generous = await t.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'], rateLimit: 5 })
    expect(tight.info.rate_limit).toBe(1)
    const first = await t.get('/v1/users', tight.key)
    expect(first.headers['x-ratelimit-limit']).toBe('1')
    expectRateLimited(await t.get('/v1/users', tight.key))
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await t.get('/v1/users', generous.key)).statusCode)
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect((await t.app.workforceApi.keys.list({ companyId: 1 })).find((info) => info.key_id === generous.info.key_id)?.rate_limit).toBe(5)
  })

  it('4xx answers count like any request, and 429 comes before 403 and 422 (decided order)', async () => {
    t = await build({ adapter, options: { rateLimit: { max: 2 } } })
    const key = await t.keyFor(1, ['users:read'])
    expect((await t.get('/v1/users?per_page=500', key)).statusCode).toBe(422)
    expect((await t.get('/v1/company', key)).statusCode).toBe(403)
    expectRateLimited(await t.get('/v1/users?per_page=500', key))
    expectRateLimited(await t.get('/v1/company', key))
    // A bad key is still the generic 401, never a 429 of the key budget.
    const unauthorized = await t.get('/v1/users', 'owk_nope')
    expect(unauthorized.statusCode).toBe(401)
    expect(unauthorized.json().error.message).toBe(UNAUTHORIZED_MESSAGE)
  })

  it('the window resets: a new window gives the full budget back (fake Date)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    t = await build({ adapter, options: { rateLimit: { max: 1, timeWindow: WINDOW_MS } } })
    const key = await t.keyFor(1, ['users:read'])
    expect((await t.get('/v1/users', key)).statusCode).toBe(200)
    expectRateLimited(await t.get('/v1/users', key))
    vi.advanceTimersByTime(WINDOW_MS - 1_000)
    expectRateLimited(await t.get('/v1/users', key))
    vi.advanceTimersByTime(1_001)
    const again = await t.get('/v1/users', key)
    expect(again.statusCode).toBe(200)
    expect(again.headers['x-ratelimit-remaining']).toBe('0')
  })

  it('failed authentications spend a per-address budget; once spent, failures are 429 and cost no lookup past the allowance, while a valid key is served', async () => {
    t = await build({ adapter, options: { rateLimit: { failedAuth: { max: 3, timeWindow: WINDOW_MS, lookups: 0 } } } })
    const key = await t.keyFor(1, ['users:read'])
    const unauthorizedBodies = new Set<string>()
    for (const bad of ['owk_nope', `owk_0123456789abcdef_${'a'.repeat(64)}`, key.slice(0, -1) + (key.endsWith('0') ? '1' : '0')]) {
      const response = await t.get('/v1/users', bad)
      expect(response.statusCode).toBe(401)
      unauthorizedBodies.add(response.body)
    }
    expect(unauthorizedBodies.size).toBe(1)
    const find = vi.spyOn(t.adapter.keyStore, 'find')
    const refused = await t.get('/v1/users', `owk_fedcba9876543210_${'b'.repeat(64)}`)
    expectRateLimited(refused)
    expect(refused.json().error.message).toContain('failed authentications')
    expect(find).not.toHaveBeenCalled()
    // Every failure from the address is the same 429, whatever its kind.
    for (const bad of [undefined, 'owk_nope', `owk_0123456789abcdef_${'a'.repeat(64)}`, key.slice(0, -1) + (key.endsWith('0') ? '1' : '0')]) {
      const response = await t.get('/v1/users', bad === undefined ? {} : bad)
      expectRateLimited(response)
      // Alike but for the seconds left, which may tick between two answers.
      const withoutSeconds = (answer: typeof response) => answer.json().error.message.replace(/\d+ s$/, '')
      expect(withoutSeconds(response)).toBe(withoutSeconds(refused))
    }
    // The valid key (cached by its wrong-secret attempt) is served, without a lookup either.
    const served = await t.get('/v1/users', key)
    expect(served.statusCode).toBe(200)
    expect(served.headers['x-ratelimit-limit']).toBe('600')
    expect(find).not.toHaveBeenCalled()
  })

  it('successful requests do not spend the failed-authentication budget', async () => {
    t = await build({ adapter, options: { rateLimit: { failedAuth: { max: 2 } } } })
    const key = await t.keyFor(1, ['users:read'])
    for (let i = 0; i < 10; i++) expect((await t.get('/v1/users', key)).statusCode).toBe(200)
    expect((await t.get('/v1/users', 'owk_nope')).statusCode).toBe(401)
    expect((await t.get('/v1/users', key)).statusCode).toBe(200)
  })

  it('rateLimit: false sends no X-RateLimit headers and never answers 429', async () => {
    t = await build({ adapter, options: { rateLimit: false } })
    const key = await t.keyFor(1, ['users:read'])
    for (let i = 0; i < 700; i++) {
      const response = await t.get('/v1/users?per_page=1', key)
      if (response.statusCode !== 200 || response.headers['x-ratelimit-limit'] !== undefined) throw new Error(`request ${i}: ${response.statusCode}`)
    }
  })
})

describe.each(WRITE_ADAPTERS)('rate limiting and idempotent retries ($name)', (adapter) => {
  let t: WriteTestApp
  afterEach(async () => {
    vi.useRealTimers()
    await t.close()
  })

  it('replays count against the budget, and a 429 is never recorded: the same key runs once the window resets', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    t = await buildWriteApp({ adapter, options: { rateLimit: { max: 2, timeWindow: WINDOW_MS } } })
    const key = await t.keyFor(1)
    const body = { title: 'Counted', list_id: 1, assigned_to: 1 }
    const first = await t.post('/v1/todos', body, bearer(key, 'counted'))
    expect(first.statusCode).toBe(201)
    const replay = await t.post('/v1/todos', body, bearer(key, 'counted'))
    expect(replay.headers['idempotent-replay']).toBe('true')
    expect(replay.headers['x-ratelimit-remaining']).toBe('0')
    expectRateLimited(await t.post('/v1/todos', { ...body, title: 'Later' }, bearer(key, 'later')))
    vi.advanceTimersByTime(WINDOW_MS + 1)
    const later = await t.post('/v1/todos', { ...body, title: 'Later' }, bearer(key, 'later'))
    expect(later.statusCode).toBe(201)
    expect(later.headers['idempotent-replay']).toBeUndefined()
    expect(later.json().data.title).toBe('Later')
  })
})
