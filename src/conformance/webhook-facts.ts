import { createHash } from 'node:crypto'
import type { AttemptOutcome, WebhookAttemptRecord, WebhookEndpointRecord } from '../ports/webhook-store.js'
import { HEALTHY } from '../webhooks/breaker.js'
import type { ChangeEvent } from '../ports/write-storage.js'
import { afterNow } from './write-facts.js'

/** How long the suite's claims hold a delivery. */
export const DELIVERY_LEASE_MS = 30_000

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

/** 24 lower-case base32 characters derived from `label`: ids look like the plugin's, and differ per label. */
export function base32Of(label: string): string {
  const digest = createHash('sha256').update(label).digest()
  return Array.from(digest.subarray(0, 24), (byte) => BASE32[byte % 32]).join('')
}

/** An `evt_…` id, one per label. */
export function eventId(label: string): string {
  return `evt_${base32Of(label)}`
}

/** A `we_…` id, one per label. */
export function endpointId(label: string): string {
  return `we_${base32Of(label)}`
}

/**
 * An event of `type` on the company's resource at `WRITE_NOW + atMs`, with a payload whose
 * bytes an adapter can get wrong (non-ASCII, astral characters, escapes, U+2028).
 */
export function changeEvent(label: string, companyId: number, type: string, resourceId: number, atMs = 0): ChangeEvent {
  const id = eventId(label)
  const occurred_at = afterNow(atMs)
  const data = { id: resourceId, title: `Überprüfung ✓ «cantiere» 🚧 ${label}`, notes: 'line one\nline two "quoted" \\ back\tslash\u2028end', empty: '' }
  return {
    id,
    company_id: companyId,
    type,
    resource_id: resourceId,
    occurred_at,
    payload: JSON.stringify({ id, type, created_at: occurred_at.toISOString(), company_id: companyId, data }),
  }
}

/** An enabled endpoint of the company subscribed to `events`, created a minute before `WRITE_NOW`, unless overridden. */
export function endpointRecord(label: string, companyId: number, events: string[], overrides: Partial<WebhookEndpointRecord> = {}): WebhookEndpointRecord {
  return {
    id: endpointId(label),
    company_id: companyId,
    url: `https://hooks.example.com/wfa/${encodeURIComponent(label)}?tenant=${companyId}&q=%C3%BC`,
    description: `Endpoint «${label}»`,
    events,
    status: 'enabled',
    disabled_reason: null,
    secret: `sealed:v1:${base32Of(`secret ${label}`)}`,
    previous_secret: null,
    previous_secret_expires_at: null,
    ...HEALTHY,
    created_at: afterNow(-60_000),
    updated_at: afterNow(-60_000),
    ...overrides,
  }
}

/** Attempt `number`, made at `WRITE_NOW + atMs`: `status` is the receiver's answer, or null with `error` when none came. */
export function attemptRecord(number: number, atMs: number, status: number | null, error: string | null = null): WebhookAttemptRecord {
  return {
    number,
    attempted_at: afterNow(atMs),
    status_code: status,
    duration_ms: 120 + number,
    response_body: status === null ? null : `{"received":${number},"note":"ü ✓"}`,
    error,
    succeeded: status !== null && status >= 200 && status < 300,
  }
}

/** The outcomes the plugin reports: delivered, retry at `WRITE_NOW + atMs`, or failed for good. */
export const outcome = {
  delivered: (attempt: WebhookAttemptRecord): AttemptOutcome => ({ attempt, next: { status: 'delivered' } }),
  retryAt: (attempt: WebhookAttemptRecord, atMs: number): AttemptOutcome => ({ attempt, next: { status: 'pending', at: afterNow(atMs) } }),
  failed: (attempt: WebhookAttemptRecord): AttemptOutcome => ({ attempt, next: { status: 'failed' } }),
}
