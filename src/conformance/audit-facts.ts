import type { AuditAction, AuditEntry } from '../ports/audit-store.js'
import { base32Of } from './webhook-facts.js'
import { afterNow } from './write-facts.js'

/** An `aud_…` id, one per label. */
export function auditId(label: string): string {
  return `aud_${base32Of(`audit ${label}`)}`
}

/**
 * An entry of the company's trail at `WRITE_NOW + atMs`, with details an adapter can get wrong
 * (non-ASCII, nesting, null, an array in order) and an IPv6 address.
 */
export function auditEntry(
  label: string,
  companyId: number,
  action: AuditAction,
  target: Pick<AuditEntry, 'target_type' | 'target_id'>,
  atMs: number,
  overrides: Partial<AuditEntry> = {},
): AuditEntry {
  return {
    id: auditId(label),
    company_id: companyId,
    at: afterNow(atMs),
    actor_id: `user-${companyId}-7`,
    actor_name: 'Zoë Ångström «admin» 🛠',
    ip: '2001:db8::7',
    action,
    target_type: target.target_type,
    target_id: target.target_id,
    details: { label, scopes: ['users:read', 'todos:write'], nested: { url: 'https://hooks.example.com/ü?q=%C3%BC', count: 3, none: null } },
    ...overrides,
  }
}
