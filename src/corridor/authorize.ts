import type { FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { AuthenticatedKey } from '../auth/key-verifier.js'
import { ForbiddenError } from '../errors.js'
import type { Clock } from '../ports/clock.js'
import type { ModuleRegistry, PlatformModule } from '../ports/module-registry.js'
import { SCOPE_MODULES } from '../scopes.js'
import type { CorridorStage } from './stage.js'

/** Company-and-module answers kept in the module cache, at most. */
const MODULE_CACHE_MAX = 10_000

/**
 * Scope and module (spec 5.5): the key must hold the route's scope, and the scope's platform
 * module must be active for the company. Either failure is a 403 naming what is missing.
 */
export function authorize(modules: ModuleRegistry, moduleCacheTtlMs: number, clock: Clock): CorridorStage {
  const moduleActive = cachedModuleCheck(modules, moduleCacheTtlMs, clock)
  return {
    name: 'authorize',
    hooksFor({ scope }) {
      const module = SCOPE_MODULES[scope]
      const onRequest = async (request: FastifyRequest) => {
        const auth = request.workforceAuth as AuthenticatedKey
        if (!auth.scopes.has(scope)) throw new ForbiddenError(`This API key lacks the ${scope} scope`)
        if (!(await moduleActive(auth.companyId, module))) {
          throw new ForbiddenError(`The ${module} module is not active for this company`)
        }
      }
      return { onRequest }
    },
  }
}

/** `registry.isActive`, remembered for `ttlMs` (aged by the injected clock); 0 asks every time. */
function cachedModuleCheck(registry: ModuleRegistry, ttlMs: number, clock: Clock) {
  if (ttlMs === 0) return (companyId: number, module: PlatformModule) => registry.isActive(companyId, module)
  const cache = new LRUCache<string, boolean>({ max: MODULE_CACHE_MAX, ttl: ttlMs, perf: { now: () => clock.now() }, ttlResolution: 0 })
  return async (companyId: number, module: PlatformModule) => {
    const key = `${companyId}:${module}`
    const hit = cache.get(key)
    if (hit !== undefined) return hit
    const active = await registry.isActive(companyId, module)
    cache.set(key, active)
    return active
  }
}
