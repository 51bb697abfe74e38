/** The admin API's shapes (docs/admin-api.md). Times are ISO 8601 UTC strings. */

export interface Session {
  company_id: number
  actor: { id: string; name: string }
}

export interface ScopeGroup {
  module: string
  enabled: boolean
  scopes: Array<{ scope: string; description: string }>
}

export type KeyState = 'active' | 'disabled' | 'revoked' | 'expired'

export interface Key {
  key_id: string
  name: string | null
  scopes: string[]
  state: KeyState
  expires_at: string | null
  rate_limit: number | null
  created_at: string
  last_used_at: string | null
}

/** `POST /keys` and `POST /keys/:key_id/rotate`: the plaintext is in this answer only. */
export interface CreatedKey {
  key: string
  data: Key
}

export interface Endpoint {
  id: string
  url: string
  description: string | null
  events: string[]
  status: 'enabled' | 'disabled'
  disabled_reason: 'manual' | 'gone' | 'failing' | null
  failing_since: string | null
  created_at: string
  updated_at: string
}

/** `POST /webhooks/endpoints` and `…/rotate-secret`: the secret is in this answer only. */
export interface EndpointWithSecret {
  secret: string
  data: Endpoint
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface Attempt {
  number: number
  attempted_at: string
  status_code: number | null
  duration_ms: number
  response_body: string | null
  error: string | null
  succeeded: boolean
}

export interface Delivery {
  id: number
  event_id: string
  event_type: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: string | null
  created_at: string
  updated_at: string
  attempts_made: Attempt[]
}

export interface AuditEntry {
  id: string
  at: string
  actor: { id: string; name: string }
  ip: string | null
  action: string
  target_type: 'api_key' | 'webhook_endpoint'
  target_id: string
  details: Record<string, unknown>
}

export interface UsageRow {
  key_id: string
  hour: string
  requests: number
  /** 4xx answers, 429 included. */
  client_errors: number
  server_errors: number
  rate_limited: number
  last_rate_limited_at: string | null
}

export interface List<T> {
  data: T[]
}

export interface Page<T> {
  data: T[]
  has_more: boolean
}

export interface Usage {
  data: UsageRow[]
  since: string
}
