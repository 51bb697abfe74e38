import { createHash } from 'node:crypto'

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

export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null'
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}
