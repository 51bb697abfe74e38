import { afterEach, describe, expect, it, vi } from 'vitest'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'

const UNAUTHORIZED_BODY = '{"error":{"code":"unauthorized","message":"Invalid or missing API key","status":401}}'

/** A well-formed key whose id exists nowhere. */
const unknownKey = (n: number) => `owk_${n.toString(16).padStart(16, '0')}_${'c'.repeat(64)}`

describe.each(READ_ADAPTERS)('verified-key cache ($name)', (adapter) => {
  let t: TestApp
  let now: number
  afterEach(async () => {
    vi.useRealTimers()
    vi.restoreAllMocks()
    await t.close()
  })

  /**
   * An app whose only time is the injected clock. Real timers are frozen so that no
   * wall-clock effect (e.g. a cache debouncing its reads of "now" with setTimeout) can
   * decide a test: cache ages must follow `clock.now()` alone.
   */
  const start = async (keyCache: { max?: number; ttlMs?: number }) => {
    now = Date.parse('2026-06-01T12:00:00.000Z')
    t = await build({ adapter, options: { keyCache, clock: { now: () => now } } })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    return vi.spyOn(t.adapter.keyStore, 'find')
  }

  it('a flood of unknown key ids stays within keyCache.max, and a valid key still works', async () => {
    const find = await start({ max: 3, ttlMs: 30_000 })
    for (let n = 1; n <= 50; n++) {
      const res = await t.get('/v1/users', unknownKey(n))
      expect(res.statusCode).toBe(401)
      expect(res.body).toBe(UNAUTHORIZED_BODY)
    }
    expect(find).toHaveBeenCalledTimes(50)

    // The most recent unknown id is remembered: no second lookup within the TTL …
    await t.get('/v1/users', unknownKey(50))
    expect(find).toHaveBeenCalledTimes(50)
    // … but the first one was evicted: the cache holds at most `max` entries.
    await t.get('/v1/users', unknownKey(1))
    expect(find).toHaveBeenCalledTimes(51)

    const created = await t.createKey(1, ['users:read'])
    find.mockClear()
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    expect(find).toHaveBeenCalledTimes(1)
    expect(find).toHaveBeenLastCalledWith(created.info.key_id)
  })

  it('a second request with the same key within the TTL does not call find again; after the TTL it does', async () => {
    const find = await start({ ttlMs: 10_000 })
    const created = await t.createKey(1, ['users:read'])
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    expect((await t.get('/v1/users', { authorization: `Bearer ${created.key}` })).statusCode).toBe(200)
    now += 9_999
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    expect(find).toHaveBeenCalledTimes(1)
    now += 2
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    expect(find).toHaveBeenCalledTimes(2)
  })

  it('the secret is checked on every request, cached or not', async () => {
    await start({ ttlMs: 30_000 })
    const created = await t.createKey(1, ['users:read'])
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    const [, keyId] = created.key.split('_')
    const res = await t.get('/v1/users', `owk_${keyId}_${'d'.repeat(64)}`)
    expect(res.statusCode).toBe(401)
    expect(res.body).toBe(UNAUTHORIZED_BODY)
  })

  it('disable through app.workforceApi.keys is 401 on the very next request (cache invalidated in-process)', async () => {
    const find = await start({ ttlMs: 30_000 })
    const created = await t.createKey(1, ['users:read'])
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    await t.app.workforceApi.keys.disable(created.info.key_id)
    const res = await t.get('/v1/users', created.key)
    expect(res.statusCode).toBe(401)
    expect(res.body).toBe(UNAUTHORIZED_BODY)
    await t.app.workforceApi.keys.enable(created.info.key_id)
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    await t.app.workforceApi.keys.revoke(created.info.key_id)
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(401)
    expect(find.mock.calls.filter(([id]) => id === created.info.key_id).length).toBeGreaterThanOrEqual(3)
  })

  it('a change made elsewhere (straight in the KeyStore) takes effect once the TTL has passed', async () => {
    await start({ ttlMs: 5_000 })
    const created = await t.createKey(1, ['users:read'])
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    await t.adapter.keyStore.setState(created.info.key_id, 'revoked', ['active'])
    now += 5_001
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(401)
  })

  it('keyCache.ttlMs 0 disables the cache: every request looks the key up', async () => {
    const find = await start({ ttlMs: 0 })
    const created = await t.createKey(1, ['users:read'])
    for (let i = 0; i < 3; i++) expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    expect(find).toHaveBeenCalledTimes(3)
    await t.adapter.keyStore.setState(created.info.key_id, 'disabled', ['active'])
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(401)
  })

  it('a malformed key never reaches the KeyStore', async () => {
    const find = await start({})
    for (const key of ['', 'owk_', 'owk_zz_zz', `owk_${'A'.repeat(16)}_${'a'.repeat(64)}`]) {
      expect((await t.get('/v1/users', key)).statusCode).toBe(401)
    }
    expect(find).not.toHaveBeenCalled()
  })
})
