import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** `owk_<16 hex key_id>_<64 hex secret>` (spec section 5). Lower-case hex, as we issue it. */
const API_KEY_PATTERN = /^owk_([0-9a-f]{16})_([0-9a-f]{64})$/

export interface ParsedApiKey {
  keyId: string
  secret: string
}

/** Splits a presented key into its parts, or `null` when it is not of the key format at all. */
export function parseApiKey(presented: string): ParsedApiKey | null {
  const match = API_KEY_PATTERN.exec(presented)
  if (match === null) return null
  return { keyId: match[1] as string, secret: match[2] as string }
}

/** SHA-256 of the secret as lower-case hex: the only form in which a secret is stored. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/**
 * Compares a presented secret with a stored digest in constant time: both sides are
 * 32-byte SHA-256 digests, so `timingSafeEqual` never sees unequal lengths.
 */
export function secretMatches(secret: string, storedDigest: Buffer): boolean {
  const presented = createHash('sha256').update(secret).digest()
  return presented.length === storedDigest.length && timingSafeEqual(presented, storedDigest)
}

/** A fresh key: 8 random bytes of id, 32 random bytes of secret. */
export function generateApiKey(): { key: string; keyId: string; secretHash: string } {
  const keyId = randomBytes(8).toString('hex')
  const secret = randomBytes(32).toString('hex')
  return { key: `owk_${keyId}_${secret}`, keyId, secretHash: hashSecret(secret) }
}

/**
 * The key a request presents: `X-Api-Key` (primary) or `Authorization: Bearer`.
 * When both are sent they must carry the same key; `undefined` means "no usable credential".
 */
export function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const apiKey = headers['x-api-key']
  const authorization = headers.authorization
  if (Array.isArray(apiKey) || Array.isArray(authorization)) return undefined
  const bearer = bearerToken(authorization)
  if (apiKey !== undefined && bearer !== undefined && apiKey !== bearer) return undefined
  return apiKey ?? bearer
}

/**
 * Whether a request repeats a credential header. Node keeps the first `Authorization` and
 * drops the rest (and joins repeated `X-Api-Key` values), while a proxy in front may read the
 * last: two headers could authorize two different tenants, so any repeat is refused.
 * `rawHeaders` is Node's flat `[name, value, name, value, …]` list, names as sent.
 */
export function repeatsCredential(rawHeaders: readonly string[]): boolean {
  let authorization = 0
  let apiKey = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    // Compare lengths first: most headers are neither, and lower-casing every name costs.
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorization++
    else if (name.length === 9 && name.toLowerCase() === 'x-api-key') apiKey++
  }
  return authorization > 1 || apiKey > 1
}

/**
 * The token of an `Authorization: Bearer <token>` header, or `undefined` for another scheme.
 * The scheme is case-insensitive (RFC 9110 11.1).
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization !== undefined && BEARER_PREFIX.test(authorization) ? authorization.slice(7) : undefined
}

const BEARER_PREFIX = /^bearer /i
