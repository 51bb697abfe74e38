import type { Scope } from '../../src/scopes.js'

/** Every scope of spec section 5, written out from the spec's table (not from our code; the type checks that both agree). */
export const SPEC_SCOPES: Scope[] = [
  'users:read',
  'users:write',
  'employees:read',
  'roles:read',
  'company:read',
  'projects:read',
  'shifts:read',
  'absences:read',
  'expenses:read',
  'todos:read',
  'todos:write',
]
