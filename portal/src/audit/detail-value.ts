import { ALL_SCOPES } from '../keys/scope-picker'
import { formatDateTime } from '../ui/time'
import { ALL_EVENTS } from '../webhooks/event-picker'

/**
 * What an audit entry's detail says, in words. The admin API records the request's own values
 * (src/admin/routes), so `null` and the wildcards mean what they meant there: a key's
 * `scopes: ["all"]` is every scope of its day, an endpoint's `events: ["*"]` every event type
 * (present and future), `expires_at: null` a key that never expires, `rate_limit: null` the
 * server's default budget, `description: null` no description.
 */
const NULL_MEANS: Record<string, string> = {
  expires_at: 'never',
  rate_limit: 'the default',
  description: 'none',
}

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/

function oneValue(field: string, value: unknown): string {
  if (value === null || value === undefined || value === '') return NULL_MEANS[field] ?? '—'
  if (field === 'scopes' && value === ALL_SCOPES) return 'every scope'
  if (field === 'events' && value === ALL_EVENTS) return 'every event type'
  if (value === ALL_EVENTS) return 'all'
  if (typeof value === 'string' && INSTANT.test(value) && !Number.isNaN(Date.parse(value))) return formatDateTime(value)
  if (field === 'rate_limit' && typeof value === 'number') return `${value} requests per window`
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

export function detailValue(field: string, value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map((item) => oneValue(field, item)).join(', ')
  return oneValue(field, value)
}
