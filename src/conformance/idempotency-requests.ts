import { createHash } from 'node:crypto'
import type { IdempotencyBegin, StoredResponse } from '../ports/idempotency-store.js'
import { afterNow } from './write-facts.js'

/** The lease the suite's attempts take: an in-flight marker blocks its slot this long. */
export const LEASE_MS = 60_000
/** Spec 4.4: stored responses are kept 24 hours. */
export const RETENTION_MS = 24 * 60 * 60_000

/** SHA-256 hex of `label`: slots and fingerprints look like the plugin's, and differ per label. */
export function sha256(label: string): string {
  return createHash('sha256').update(label).digest('hex')
}

/**
 * An attempt on `slot` at `WRITE_NOW + atMs`, with the plugin's lease and retention windows
 * (`leaseUntil = now + LEASE_MS`, `expiredBefore = now - RETENTION_MS`) unless overridden.
 */
export function attempt(
  slot: string,
  fingerprint: string,
  token: string,
  atMs: number,
  overrides: Partial<Pick<IdempotencyBegin, 'leaseUntil' | 'expiredBefore' | 'companyId'>> = {},
): IdempotencyBegin {
  return {
    slot,
    fingerprint,
    companyId: 1,
    token,
    now: afterNow(atMs),
    leaseUntil: afterNow(atMs + LEASE_MS),
    expiredBefore: afterNow(atMs - RETENTION_MS),
    ...overrides,
  }
}

/** A body whose bytes an adapter can get wrong: non-ASCII, astral, escapes, raw newlines, U+2028, trailing space. */
const TRICKY_BODY =
  JSON.stringify(
    {
      data: {
        id: 4_294_967_297,
        title: 'Überprüfung ✓ «cantiere» 🚧 👩‍🔧',
        notes: 'line one\nline two "quoted" \\ back\tslash',
        cjk: '日本語のテキスト',
        separator: 'a\u2028b',
        empty: '',
      },
    },
    null,
    2,
  ) + '\n  '

/** A created to-do as the plugin would store it. */
export const CREATED_RESPONSE: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8', location: '/api/public/v1/todos/4294967297' },
  body: TRICKY_BODY,
}

/** A refusal with no headers worth replaying and an empty body. */
export const EMPTY_RESPONSE: StoredResponse = { status: 422, headers: {}, body: '' }

/** Another response, to tell which attempt's completion was kept. */
export function responseOf(label: string): StoredResponse {
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ data: { completed_by: label } }),
  }
}
