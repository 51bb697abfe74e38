import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generateApiKey, hashSecret, parseApiKey, presentedKey, secretMatches } from '../../src/auth/api-key.js'

const KEY_ID = '0123456789abcdef'
const SECRET = 'f'.repeat(32) + '0'.repeat(32)
const KEY = `owk_${KEY_ID}_${SECRET}`

describe('parseApiKey', () => {
  it('splits owk_<16 hex>_<64 hex> into key id and secret', () => {
    expect(parseApiKey(KEY)).toEqual({ keyId: KEY_ID, secret: SECRET })
  })

  it.each([
    ['empty', ''],
    ['prefix only', 'owk_'],
    ['wrong prefix', `owx_${KEY_ID}_${SECRET}`],
    ['upper-case prefix', `OWK_${KEY_ID}_${SECRET}`],
    ['short key id', `owk_${KEY_ID.slice(1)}_${SECRET}`],
    ['long key id', `owk_${KEY_ID}a_${SECRET}`],
    ['short secret', `owk_${KEY_ID}_${SECRET.slice(1)}`],
    ['long secret', `owk_${KEY_ID}_${SECRET}0`],
    ['upper-case hex id', `owk_${KEY_ID.toUpperCase()}_${SECRET}`],
    ['upper-case hex secret', `owk_${KEY_ID}_${SECRET.toUpperCase()}`],
    ['non-hex id', `owk_0123456789abcdeg_${SECRET}`],
    ['trailing newline', `${KEY}\n`],
    ['leading space', ` ${KEY}`],
    ['trailing space', `${KEY} `],
    ['dash separators', `owk-${KEY_ID}-${SECRET}`],
    ['missing separator', `owk_${KEY_ID}${SECRET}`],
  ])('returns null for %s', (_label, value) => {
    expect(parseApiKey(value)).toBeNull()
  })
})

describe('hashSecret and secretMatches', () => {
  it('hashes with SHA-256 as lower-case hex', () => {
    expect(hashSecret(SECRET)).toBe(createHash('sha256').update(SECRET).digest('hex'))
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('matches only the secret whose digest is stored', () => {
    const digest = Buffer.from(hashSecret(SECRET), 'hex')
    expect(secretMatches(SECRET, digest)).toBe(true)
    expect(secretMatches(`${SECRET.slice(0, -1)}1`, digest)).toBe(false)
    expect(secretMatches('', digest)).toBe(false)
    expect(secretMatches(SECRET, Buffer.alloc(0))).toBe(false)
  })
})

describe('generateApiKey', () => {
  it('issues keys of the documented format whose secret hashes to the returned digest', () => {
    const generated = generateApiKey()
    const parsed = parseApiKey(generated.key)
    expect(parsed).not.toBeNull()
    expect(parsed?.keyId).toBe(generated.keyId)
    expect(generated.secretHash).toBe(createHash('sha256').update(parsed?.secret ?? '').digest('hex'))
    expect(generated.key).toMatch(/^owk_[0-9a-f]{16}_[0-9a-f]{64}$/)
  })

  it('never issues the same key twice', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey().key))
    expect(keys.size).toBe(200)
  })
})

describe('presentedKey', () => {
  it('takes X-Api-Key', () => {
    expect(presentedKey({ 'x-api-key': KEY })).toBe(KEY)
  })

  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('takes Authorization: %s <key>', (scheme) => {
    expect(presentedKey({ authorization: `${scheme} ${KEY}` })).toBe(KEY)
  })

  it('accepts both headers when they carry the same key', () => {
    expect(presentedKey({ 'x-api-key': KEY, authorization: `Bearer ${KEY}` })).toBe(KEY)
  })

  it('refuses two different keys', () => {
    expect(presentedKey({ 'x-api-key': KEY, authorization: `Bearer owk_${'1'.repeat(16)}_${SECRET}` })).toBeUndefined()
  })

  it('ignores another auth scheme', () => {
    expect(presentedKey({ authorization: `Basic ${KEY}` })).toBeUndefined()
    expect(presentedKey({ authorization: KEY })).toBeUndefined()
    expect(presentedKey({ authorization: `Bearer${KEY}` })).toBeUndefined()
    expect(presentedKey({ 'x-api-key': KEY, authorization: 'Basic dXNlcjpwYXNz' })).toBe(KEY)
  })

  it('has no credential without headers or with repeated headers', () => {
    expect(presentedKey({})).toBeUndefined()
    expect(presentedKey({ 'x-api-key': [KEY, KEY] })).toBeUndefined()
    expect(presentedKey({ authorization: [`Bearer ${KEY}`] })).toBeUndefined()
  })
})
