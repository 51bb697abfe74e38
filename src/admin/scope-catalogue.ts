import type { ResourceCatalogue } from '../api/catalogue.js'
import type { RouteSpec } from '../api/route-spec.js'
import type { Storage } from '../ports/storage.js'
import type { WriteStorage } from '../ports/write-storage.js'

/** One scope of the catalogue as `GET /scopes` lists it. */
export interface ScopeEntry {
  scope: string
  description: string
}

/**
 * Each scope's description: what the operations it grants do, in the words of their route
 * declarations (the summaries the public OpenAPI document shows), e.g. `users:read` →
 * "List users, get one user". Derived, never restated: a new route changes its scope's hint.
 */
export function describeScopes(scopes: readonly string[], routes: readonly Pick<RouteSpec, 'scope' | 'summary'>[]): Record<string, string> {
  const summaries = new Map<string, string[]>(scopes.map((scope) => [scope, []]))
  for (const { scope, summary } of routes) if (scope !== undefined) summaries.get(scope)?.push(summary)
  return Object.fromEntries(
    [...summaries].map(([scope, lines]) => [scope, lines.map((line, index) => (index === 0 ? line : `${line[0]?.toLowerCase()}${line.slice(1)}`)).join(', ')]),
  )
}

/** A write port that is never called: the write routes are declared, not mounted, here. */
const DECLARATION_ONLY_WRITES = new Proxy({} as WriteStorage, {
  get(_target, member) {
    throw new Error(`workforce-admin: the scope catalogue read WriteStorage.${String(member)}; it only reads route declarations`)
  },
})

/**
 * The scope catalogue by platform module, described by every route of the public API, the
 * write routes included even when this API is read-only: a scope means the same everywhere.
 */
export function scopeCatalogue(catalogue: ResourceCatalogue, storage: Storage): ReadonlyMap<string, readonly ScopeEntry[]> {
  const routes = catalogue.routes({
    storage,
    writes: { writes: DECLARATION_ONLY_WRITES, clock: { now: () => 0 }, events: catalogue, invites: { sendInvite: async () => {} }, locationOf: (path) => path },
  })
  const descriptions = describeScopes(catalogue.scopes, routes)
  const byModule = new Map<string, ScopeEntry[]>()
  for (const scope of catalogue.scopes) {
    const module = catalogue.moduleOf(scope)
    byModule.set(module, [...(byModule.get(module) ?? []), { scope, description: descriptions[scope] ?? '' }])
  }
  return byModule
}
