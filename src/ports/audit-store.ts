/**
 * The audit trail of the admin API (`workforceAdmin`): who changed a company's keys or webhook
 * endpoints, what, when and from where. Never a secret: an entry holds ids, names, scopes, URLs
 * and event types only.
 *
 * Entries are written by the key and webhook stores, in the same transaction as the change
 * they describe: every mutating method of `KeyStore` and `WebhookStore` takes an optional
 * trailing `audit` argument, and a store that is handed one must commit it with the change or
 * not at all: an entry that cannot be written (its `id` is already taken, say) fails the call and
 * undoes the change. This port only reads them back.
 */
export interface AuditEntry {
  /** `aud_` + 24 lower-case base32 characters; chosen by the plugin. */
  id: string
  company_id: number
  /** When the change happened, on the plugin's clock. */
  at: Date
  /** The host's user who made the change, as the host's `authorize` named them. */
  actor_id: string
  actor_name: string
  /** The client address the admin request came from (Fastify's `request.ip`), or null outside HTTP. */
  ip: string | null
  /** What was done, for example `key.created`, `key.revoked`, `webhook_endpoint.secret_rotated`. */
  action: AuditAction
  /** What it was done to. */
  target_type: 'api_key' | 'webhook_endpoint'
  /** The key's `key_id` or the endpoint's `we_…` id. */
  target_id: string
  /** Facts about the change that are not secret (name, scopes, url, events, event id, since…). */
  details: Record<string, unknown>
}

export const AUDIT_ACTIONS = [
  'key.created',
  'key.disabled',
  'key.enabled',
  'key.revoked',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.enabled',
  'webhook_endpoint.disabled',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.test_sent',
  'webhook_delivery.redelivered',
  'webhook_deliveries.recovered',
  'webhook_deliveries.replayed',
] as const

export type AuditAction = (typeof AUDIT_ACTIONS)[number]

export interface AuditPage {
  /** Newest first (by `at`, then `id` descending). */
  entries: AuditEntry[]
  /** Whether older entries follow: pass the last entry's `id` as `before`. */
  has_more: boolean
}

export interface AuditStore {
  /** One company's entries, newest first; `before` is an entry id (exclusive). Never another company's. */
  list(companyId: number, page: { limit: number; before?: string }): Promise<AuditPage>
}

/**
 * The entry of a change, given the id of what changed (known only once a key or endpoint is
 * created). The admin API hands one to the key and webhook managers, which pass the entry to
 * the store that commits it with the change.
 */
export type AuditFor = (targetId: string) => AuditEntry
