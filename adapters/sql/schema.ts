/**
 * Table shapes shared by the SQLite and Postgres adapters. Columns whose representation
 * differs by dialect (instants, booleans, JSON, days, big integers) are `unknown` here and
 * converted by the dialect's `SqlCodec` at the adapter boundary.
 */
type DialectValue = unknown

export const TABLE_PREFIX = 'wfa_'
export const MIGRATION_TABLE = 'wfa_migrations'
export const MIGRATION_LOCK_TABLE = 'wfa_migrations_lock'

export interface WorkforceTables {
  wfa_companies: {
    id: number
    name: string
    timezone: string
    country: string
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_users: {
    id: number
    email: string
    email_lower: string
    first_name: string
    last_name: string
    active: DialectValue
    password_hash: string
    created_at: DialectValue
    updated_at: DialectValue
  }
  /** A company's users (migration 0009): `user_id` is the user's id in this company only. */
  wfa_memberships: {
    company_id: number
    /** The user's id on the wire: unique across companies, never reused (`wfa_id_counters`). */
    user_id: number
    /** `wfa_users.id` once accepted; null while pending. */
    person_id: number | null
    role_ids: DialectValue
    /** 'accepted' | 'pending' */
    invitation_status: string
    /** What the inviting company sent; set only while pending. */
    invited_email: string | null
    invited_email_lower: string | null
    invited_first_name: string | null
    invited_last_name: string | null
    created_at: DialectValue
    updated_at: DialectValue
  }
  /** Counters that only grow: `users` is the last user id given (migration 0009). */
  wfa_id_counters: {
    name: string
    value: DialectValue
  }
  wfa_roles: {
    id: number
    company_id: number
    name: string
    permissions: DialectValue
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_employees: {
    id: number
    company_id: number
    user_id: number | null
    employee_number: string
    job_title: string | null
    contract_type: string
    weekly_hours: number
    hire_date: DialectValue
    termination_date: DialectValue
    supervisor_id: number | null
    salary_cents: DialectValue
    iban: string
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_projects: {
    id: number
    company_id: number
    name: string
    code: string
    status: string
    kind: string
    customer_id: number | null
    starts_on: DialectValue
    ends_on: DialectValue
    offer_number: string | null
    internal_notes: string | null
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_shifts: {
    id: number
    company_id: number
    employee_id: number
    project_id: number | null
    status: string
    starts_at: DialectValue
    ends_at: DialectValue
    break_minutes: number
    internal_notes: string | null
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_absences: {
    id: number
    company_id: number
    employee_id: number
    date: DialectValue
    type: string
    hours: number
    status: string
    reason: string | null
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_expenses: {
    id: number
    company_id: number
    employee_id: number
    project_id: number | null
    category: string
    description: string
    date: DialectValue
    amount_cents: DialectValue
    currency: string
    km: number | null
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_todo_lists: {
    id: number
    company_id: number
    name: string
  }
  wfa_todos: {
    id: number
    company_id: number
    title: string
    notes: string | null
    status: string
    priority: string
    important: DialectValue
    due_day: DialectValue
    due_at: DialectValue
    due_is_all_day: DialectValue
    list_id: number
    assigned_to: number | null
    assignee_group_id: number | null
    claimed_by: number | null
    checklist: DialectValue
    tag_ids: DialectValue
    source: DialectValue
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_api_keys: {
    key_id: string
    company_id: number
    secret_hash: string
    scopes: DialectValue
    expires_at: DialectValue
    state: string
    name: string | null
    rate_limit: number | null
    created_at: DialectValue
    last_used_at: DialectValue
  }
  wfa_company_modules: {
    company_id: number
    module: string
    active: DialectValue
  }
  wfa_change_events: {
    id: number
    company_id: number
    type: string
    resource_id: number
    occurred_at: DialectValue
    /** `evt_…`; null only on events recorded before webhooks (migration 0005). */
    event_id: string | null
    /** The delivery body as sent; null only on events recorded before webhooks. */
    payload: string | null
  }
  wfa_idempotency: {
    slot: string
    company_id: number
    fingerprint: string
    state: 'in_flight' | 'completed'
    token: string
    lease_until: DialectValue
    created_at: DialectValue
    completed_at: DialectValue
    response_status: number | null
    response_headers: DialectValue
    response_body: string | null
  }
  wfa_webhook_endpoints: {
    id: string
    company_id: number
    url: string
    description: string | null
    events: DialectValue
    /** 'enabled' | 'disabled' */
    status: string
    /** 'manual' | 'gone' | 'failing', while disabled */
    disabled_reason: string | null
    secret: string
    previous_secret: string | null
    previous_secret_expires_at: DialectValue
    failing_since: DialectValue
    consecutive_failures: number
    paused_until: DialectValue
    pause_ms: number
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_webhook_deliveries: {
    id: number
    endpoint_id: string
    company_id: number
    /** `wfa_change_events.id` */
    change_event_id: number
    event_id: string
    event_type: string
    /** 'pending' | 'delivered' | 'failed' */
    status: string
    attempts: number
    next_attempt_at: DialectValue
    /** The current claim's token, or null. */
    lease: string | null
    created_at: DialectValue
    updated_at: DialectValue
  }
  wfa_webhook_attempts: {
    id: number
    delivery_id: number
    number: number
    attempted_at: DialectValue
    status_code: number | null
    duration_ms: number
    response_body: string | null
    error: string | null
    succeeded: DialectValue
  }
  wfa_audit_events: {
    /** `aud_…` */
    id: string
    company_id: number
    at: DialectValue
    actor_id: string
    actor_name: string
    ip: string | null
    action: string
    /** 'api_key' | 'webhook_endpoint' */
    target_type: string
    target_id: string
    /** JSON text */
    details: string
  }
  wfa_key_usage: {
    company_id: number
    key_id: string
    /** The start of the UTC hour. */
    hour: DialectValue
    requests: number
    client_errors: number
    server_errors: number
    rate_limited: number
    last_rate_limited_at: DialectValue
    /** Answers with 304 Not Modified (migration 0012); also counted in `requests`. */
    not_modified: number
  }
}
