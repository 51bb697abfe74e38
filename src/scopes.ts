import type { PlatformModule } from './ports/module-registry.js'

/** Every scope of spec section 5, with the platform module it belongs to. */
export const SCOPE_MODULES = {
  'users:read': 'core',
  'users:write': 'core',
  'employees:read': 'core',
  'roles:read': 'core',
  'company:read': 'core',
  'projects:read': 'projects',
  'shifts:read': 'projects',
  'absences:read': 'projects',
  'expenses:read': 'projects',
  'todos:read': 'todo',
  'todos:write': 'todo',
} as const satisfies Record<string, PlatformModule>

export type Scope = keyof typeof SCOPE_MODULES

export const ALL_SCOPES = Object.keys(SCOPE_MODULES) as Scope[]

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPE_MODULES, value)
}
