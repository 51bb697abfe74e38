import { afterEach, describe, expect, it } from 'vitest'
import { KeyManagementError } from '../../src/keys/key-manager.js'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { expectedList, LIST_RESOURCES } from '../helpers/expected-reads.js'

/** Spec 5.4: every credential failure, whatever its cause, is this exact body. */
const UNAUTHORIZED_BODY = '{"error":{"code":"unauthorized","message":"Invalid or missing API key","status":401}}'

const HEX16 = '0123456789abcdef'
const HEX64 = 'a'.repeat(64)

/** Every GET path of spec 4.1, with ids that exist for company 1. */
function readPaths(): string[] {
  const paths = ['/v1/company']
  for (const resource of LIST_RESOURCES) {
    paths.push(`/v1/${resource}`, `/v1/${resource}/${expectedList(resource, 1)[0]?.id as number}`)
  }
  return paths
}

function expectUnauthorized(res: { statusCode: number; body: string; headers: Record<string, unknown> }, label = ''): void {
  expect(res.statusCode, label).toBe(401)
  expect(res.body, label).toBe(UNAUTHORIZED_BODY)
  expect(res.headers['content-type'], label).toMatch(/^application\/json/)
}

describe.each(READ_ADAPTERS)('authentication ($name)', (adapter) => {
  let t: TestApp
  afterEach(() => t.close())

  it('accepts the key in X-Api-Key and in Authorization: Bearer (any case of the scheme)', async () => {
    t = await build({ adapter })
    const key = await t.keyFor(1, ['users:read'])
    const expected = (await t.get('/v1/users', key)).body
    expect(JSON.parse(expected).data).toHaveLength(25)
    for (const headers of [
      { 'x-api-key': key },
      { authorization: `Bearer ${key}` },
      { authorization: `bearer ${key}` },
      { authorization: `BEARER ${key}` },
      { 'x-api-key': key, authorization: `Bearer ${key}` },
    ]) {
      const res = await t.get('/v1/users', headers)
      expect(res.statusCode, JSON.stringify(Object.keys(headers))).toBe(200)
      expect(res.body).toBe(expected)
    }
  })

  it('answers every GET endpoint without a key with the generic 401', async () => {
    t = await build({ adapter })
    for (const path of readPaths()) expectUnauthorized(await t.get(path), path)
  })

  it('gives the byte-identical 401 for every kind of bad credential', async () => {
    t = await build({ adapter })
    const good = await t.createKey(1, ['all'])
    const other = await t.keyFor(1, ['all'])
    const [, keyId, secret] = good.key.split('_') as [string, string, string]
    const wrongSecret = `owk_${keyId}_${secret.startsWith('0') ? '1' : '0'}${secret.slice(1)}`
    const failures: Record<string, Record<string, string | string[]>> = {
      missing: {},
      'empty X-Api-Key': { 'x-api-key': '' },
      'empty Bearer': { authorization: 'Bearer ' },
      'Bearer without a space': { authorization: `Bearer${good.key}` },
      'another scheme': { authorization: `Basic ${good.key}` },
      'the key without scheme': { authorization: good.key },
      'wrong prefix': { 'x-api-key': `owx_${keyId}_${secret}` },
      'upper-case prefix': { 'x-api-key': `OWK_${keyId}_${secret}` },
      'short key id': { 'x-api-key': `owk_${keyId.slice(1)}_${secret}` },
      'long key id': { 'x-api-key': `owk_${keyId}0_${secret}` },
      'upper-case hex': { 'x-api-key': `owk_${keyId.toUpperCase()}_${secret.toUpperCase()}` },
      'upper-case secret': { 'x-api-key': `owk_${keyId}_${secret.toUpperCase()}` },
      'short secret': { 'x-api-key': `owk_${keyId}_${secret.slice(1)}` },
      'extra characters': { 'x-api-key': `${good.key}x` },
      'leading characters': { 'x-api-key': `x${good.key}` },
      'non-hex characters': { 'x-api-key': `owk_${keyId.slice(0, 15)}g_${secret}` },
      'unknown key id': { 'x-api-key': `owk_${HEX16}_${HEX64}` },
      'wrong secret': { 'x-api-key': wrongSecret },
      'wrong secret as Bearer': { authorization: `Bearer ${wrongSecret}` },
      'two different keys in the two headers': { 'x-api-key': good.key, authorization: `Bearer ${other}` },
      'a good X-Api-Key with a bad Bearer': { 'x-api-key': good.key, authorization: `Bearer ${wrongSecret}` },
      'a bad X-Api-Key with a good Bearer': { 'x-api-key': 'nonsense', authorization: `Bearer ${good.key}` },
      'X-Api-Key sent twice': { 'x-api-key': [good.key, good.key] },
    }
    for (const [label, headers] of Object.entries(failures)) expectUnauthorized(await t.get('/v1/users', headers), label)
    // The good key still works: the failures above did not poison anything.
    expect((await t.get('/v1/users', good.key)).statusCode).toBe(200)
  })

  it('refuses disabled, revoked and expired keys with the same 401', async () => {
    let now = Date.parse('2026-06-01T12:00:00.000Z')
    // 76 refusals from one address: past the default failed-auth budget (60), which is not what this tests.
    t = await build({ adapter, options: { clock: { now: () => now }, rateLimit: { failedAuth: { max: 1_000 } } } })
    const disabled = await t.createKey(1, ['all'])
    const revoked = await t.createKey(1, ['all'])
    const expired = await t.createKey(1, ['all'], { expiresAt: new Date(now + 60_000) })
    const pastExpiry = await t.createKey(1, ['all'], { expiresAt: new Date(now - 1) })
    for (const created of [disabled, revoked, expired]) expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)

    await t.app.workforceApi.keys.disable(disabled.info.key_id)
    await t.app.workforceApi.keys.revoke(revoked.info.key_id)
    now += 60_000
    for (const created of [disabled, revoked, expired, pastExpiry]) {
      for (const path of readPaths()) expectUnauthorized(await t.get(path, created.key), `${created.info.key_id} ${path}`)
      expectUnauthorized(await t.get('/v1/users', { authorization: `Bearer ${created.key}` }))
    }
  })

  it('an expiring key works until expires_at and not at it (injected clock)', async () => {
    let now = Date.parse('2026-06-01T12:00:00.000Z')
    t = await build({ adapter, options: { clock: { now: () => now } } })
    const expiresAt = new Date(now + 10_000)
    const created = await t.createKey(2, ['users:read'], { expiresAt })
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    now = expiresAt.getTime() - 1
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    now = expiresAt.getTime()
    expectUnauthorized(await t.get('/v1/users', created.key))
    const [info] = await t.app.workforceApi.keys.list({ companyId: 2 })
    expect(info).toMatchObject({ key_id: created.info.key_id, state: 'expired', expires_at: expiresAt.toISOString() })
  })

  it('a disabled key works again as soon as it is enabled', async () => {
    t = await build({ adapter })
    const created = await t.createKey(1, ['users:read'])
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    await t.app.workforceApi.keys.disable(created.info.key_id)
    expectUnauthorized(await t.get('/v1/users', created.key))
    const enabled = await t.app.workforceApi.keys.enable(created.info.key_id)
    expect(enabled.state).toBe('active')
    const res = await t.get('/v1/users', created.key)
    expect(res.statusCode).toBe(200)
    expect(res.json().pagination.total).toBe(expectedList('users', 1).length)
  })

  it('a revoked key can never be enabled again, from active or from disabled', async () => {
    t = await build({ adapter })
    const keys = t.app.workforceApi.keys
    const fromActive = await t.createKey(1, ['users:read'])
    const fromDisabled = await t.createKey(1, ['users:read'])
    await keys.disable(fromDisabled.info.key_id)
    for (const created of [fromActive, fromDisabled]) {
      expect((await keys.revoke(created.info.key_id)).state).toBe('revoked')
      const attempt = keys.enable(created.info.key_id)
      await expect(attempt).rejects.toBeInstanceOf(KeyManagementError)
      await expect(keys.enable(created.info.key_id)).rejects.toMatchObject({ reason: 'invalid_transition' })
      await expect(keys.disable(created.info.key_id)).rejects.toMatchObject({ reason: 'invalid_transition' })
      await expect(keys.revoke(created.info.key_id)).rejects.toMatchObject({ reason: 'invalid_transition' })
      expectUnauthorized(await t.get('/v1/users', created.key))
    }
    const listed = await keys.list({ companyId: 1 })
    expect(listed.map((info) => info.state)).toEqual(['revoked', 'revoked'])
  })

  it('a key of one company never authenticates as another: the key decides the tenant', async () => {
    t = await build({ adapter })
    const key2 = await t.keyFor(2, ['company:read'])
    const res = await t.get('/v1/company', key2)
    expect(res.json().data.id).toBe(2)
  })
})
