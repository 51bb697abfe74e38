import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import * as apiKey from '../../src/auth/api-key.js'
import { KeyVerifier } from '../../src/auth/key-verifier.js'
import type { ApiKeyRecord, KeyStore } from '../../src/ports/key-store.js'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, PREFIX, type TestApp } from '../helpers/build.js'

/** Spec 5.4: every credential failure, whatever its cause, is this exact body. */
const UNAUTHORIZED_BODY = '{"error":{"code":"unauthorized","message":"Invalid or missing API key","status":401}}'

/** Sends `GET <path>` over a real socket with `rawHeaders` exactly as listed (repeats included). */
function rawGet(port: number, path: string, rawHeaders: string[][]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // Array headers are sent as listed, Host included (Node does not add one to an array).
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', headers: [['Host', `127.0.0.1:${port}`], ...rawHeaders].flat() }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe.each(READ_ADAPTERS)('repeated credential headers ($name)', (adapter) => {
  let t: TestApp
  afterEach(() => t.close())

  it('refuses two Authorization or two X-Api-Key headers with the generic 401, even when both carry a valid key', async () => {
    t = await build({ adapter })
    const key = await t.keyFor(1, ['users:read'])
    const other = await t.keyFor(2, ['users:read'])
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as AddressInfo
    const url = `${PREFIX}/v1/users`
    for (const headers of [
      [['Authorization', `Bearer ${key}`], ['Authorization', `Bearer ${other}`]],
      [['Authorization', `Bearer ${key}`], ['authorization', `Bearer ${key}`]],
      [['X-Api-Key', key], ['X-Api-Key', key]],
      [['x-api-key', key], ['X-API-KEY', other]],
      [['X-Api-Key', key], ['Authorization', `Bearer ${key}`], ['Authorization', `Bearer ${other}`]],
    ]) {
      const res = await rawGet(port, url, headers)
      expect({ headers: headers.map(([name]) => name), status: res.status, body: res.body }).toEqual({
        headers: headers.map(([name]) => name),
        status: 401,
        body: UNAUTHORIZED_BODY,
      })
    }
    // One of each is still fine: X-Api-Key and Authorization carrying the same key.
    const single = await rawGet(port, url, [['X-Api-Key', key], ['Authorization', `Bearer ${key}`]])
    expect(single.status).toBe(200)
  })

  it('app.inject with a repeated header is refused the same way', async () => {
    t = await build({ adapter })
    const key = await t.keyFor(1, ['users:read'])
    const res = await t.get('/v1/users', { authorization: [`Bearer ${key}`, `Bearer ${key}`] })
    expect(res.statusCode).toBe(401)
    expect(res.body).toBe(UNAUTHORIZED_BODY)
  })
})

/** A stored key for the verifier tests below; `overrides` change one field. */
const KEY_ID = '0123456789abcdef'
const SECRET = 'b'.repeat(64)
const record = (overrides: Partial<ApiKeyRecord>): ApiKeyRecord => ({
  key_id: KEY_ID,
  company_id: 1,
  secret_hash: apiKey.hashSecret(SECRET),
  scopes: ['users:read'],
  expires_at: null,
  state: 'active',
  name: null,
  rate_limit: null,
  created_at: new Date(0),
  last_used_at: null,
  ...overrides,
})

describe('every credential failure does the same work', () => {
  const verifierOver = (found: ApiKeyRecord | null) => {
    const store: KeyStore = { find: async () => found, create: async () => {}, setState: async () => null, list: async () => [] }
    return new KeyVerifier({ keyStore: store, clock: { now: () => 1_000 }, cacheTtlMs: 0 })
  }
  afterEach(() => vi.restoreAllMocks())

  it.each([
    ['an unknown key id', null, SECRET],
    ['a wrong secret', record({}), 'c'.repeat(64)],
    ['a disabled key', record({ state: 'disabled' }), SECRET],
    ['a revoked key', record({ state: 'revoked' }), SECRET],
    ['an expired key', record({ expires_at: new Date(500) }), SECRET],
  ] as const)('%s: refused after hashing and comparing the secret once', async (_label, found, secret) => {
    const compare = vi.spyOn(apiKey, 'secretMatches')
    const verifier = verifierOver(found)
    expect(await verifier.verify(`owk_${KEY_ID}_${secret}`)).toBeNull()
    expect(compare).toHaveBeenCalledTimes(1)
  })

  it('the right secret of an active key is accepted', async () => {
    expect(await verifierOver(record({})).verify(`owk_${KEY_ID}_${SECRET}`)).toMatchObject({ keyId: KEY_ID, companyId: 1 })
  })
})

// Issue 21: from an address past its failed-authentication budget, the gate decides whether an
// uncached id may be looked up. Its work must not depend on whether the id is known here.
describe('a gated verification does the same work for every id', () => {
  const active = record({})
  const setUp = () => {
    const find = vi.fn(async (keyId: string) => (keyId === KEY_ID ? active : null))
    const store: KeyStore = { find, create: async () => {}, setState: async () => null, list: async () => [] }
    const verifier = new KeyVerifier({ keyStore: store, clock: { now: () => 1_000 } })
    return { find, verifier }
  }
  afterEach(() => vi.restoreAllMocks())

  it.each([
    ['a cached known id, wrong secret', true, 'c'.repeat(64), KEY_ID],
    ['an uncached unknown id, refused unlooked', false, SECRET, 'fedcba9876543210'],
  ] as const)('%s: the gate asked once, the secret hashed and compared once', async (_label, warm, secret, keyId) => {
    const { find, verifier } = setUp()
    if (warm) expect(await verifier.verify(`owk_${KEY_ID}_${SECRET}`)).not.toBeNull()
    find.mockClear()
    const admit = vi.fn(async () => false)
    const compare = vi.spyOn(apiKey, 'secretMatches')
    expect(await verifier.verify(`owk_${keyId}_${secret}`, { admit })).toBeNull()
    expect(admit).toHaveBeenCalledExactlyOnceWith(keyId, warm)
    expect(compare).toHaveBeenCalledTimes(1)
    expect(find).not.toHaveBeenCalled()
  })

  it('a real key refused unlooked is not remembered as unknown: admitted later, it is served', async () => {
    const { find, verifier } = setUp()
    expect(await verifier.verify(`owk_${KEY_ID}_${SECRET}`, { admit: async () => false })).toBeNull()
    expect(find).not.toHaveBeenCalled()
    expect(await verifier.verify(`owk_${KEY_ID}_${SECRET}`, { admit: async () => true })).toMatchObject({ keyId: KEY_ID, companyId: 1 })
    expect(find).toHaveBeenCalledTimes(1)
    // Cached now: served whatever the gate answers, without another lookup.
    expect(await verifier.verify(`owk_${KEY_ID}_${SECRET}`, { admit: async () => false })).toMatchObject({ keyId: KEY_ID })
    expect(find).toHaveBeenCalledTimes(1)
  })
})
