import { createHash } from 'node:crypto'
import { ValidationError } from '../errors.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * The slot of a request: SHA-256 of the Authorization header value and the Idempotency-Key.
 * The raw header (which contains the API key) is never stored.
 */
export function idempotencySlot(authorization: string, idempotencyKey: string): string {
  return sha256(`${authorization}\n${idempotencyKey}`)
}

/** SHA-256 of method, path and the body in canonical JSON (object keys sorted at every level). */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return sha256(`${method}\n${path}\n${canonicalJson(body)}`)
}

/** No valid body nests deeper than a few levels; a deeper one would exhaust the stack. */
export const MAX_BODY_DEPTH = 32

export function canonicalJson(value: unknown, depth = 0): string {
  if (value === undefined) return 'null'
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (depth >= MAX_BODY_DEPTH) {
    throw new ValidationError([{ field: 'body', message: `must not nest deeper than ${MAX_BODY_DEPTH} levels` }])
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v, depth + 1)}`).join(',')}}`
}
