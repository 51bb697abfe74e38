import type { AuditEntry } from './audit-store.js'
/** `expired` is not stored: it is an `active` key whose `expires_at` has passed. */
export type KeyState = 'active' | 'disabled' | 'revoked'

/**
 * A stored API key. The plaintext secret is never stored: only its SHA-256 digest.
 */
export interface ApiKeyRecord {
  /** 16 lower-case hex characters; public, unique across all companies. */
  key_id: string
  company_id: number
  /** SHA-256 of the 64-hex-character secret, as 64 lower-case hex characters. */
  secret_hash: string
  scopes: string[]
  /** The key stops working at this instant; `null` never expires. */
  expires_at: Date | null
  state: KeyState
  name: string | null
  /** This key's requests per rate-limit window, overriding the plugin's `rateLimit.max`; `null` uses the default. */
  rate_limit: number | null
  created_at: Date
  last_used_at: Date | null
}

/**
 * Durable storage of API keys. Shared by every app instance: keep it in the database.
 *
 * Transition rules (revoked is final, …) are enforced above this port by the key manager;
 * the store only applies a state change atomically when the current state is allowed.
 *
 * `audit` (the admin API passes one): commit this audit-trail entry in the same transaction as
 * the change, and only if the change happens (not when `setState` returns null).
 */
export interface KeyStore {
  /** The key with this id, or `null`. Called on every key-cache miss: make it an index lookup. */
  find(keyId: string): Promise<ApiKeyRecord | null>
  /** Stores a new key. Rejects if `key_id` already exists. */
  create(record: ApiKeyRecord, audit?: AuditEntry): Promise<void>
  /**
   * Sets `state` to `to` only if the current state is one of `from` (compare-and-set).
   * @returns the updated record, or `null` if the key does not exist or was in another state.
   */
  setState(keyId: string, to: KeyState, from: readonly KeyState[], audit?: AuditEntry): Promise<ApiKeyRecord | null>
  /** Every key, or the keys of one company, ordered by `created_at` then `key_id`. */
  list(companyId?: number): Promise<ApiKeyRecord[]>
  /**
   * Optional: records when a key was last used. The plugin calls it at most once per key
   * per `lastUsedThrottleMs` per process, without awaiting it on the request path.
   */
  touchLastUsed?(keyId: string, at: Date): Promise<void>
}
