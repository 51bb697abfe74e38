import { LRUCache } from 'lru-cache'
import type { Clock } from '../ports/clock.js'
import type { ModuleRegistry, PlatformModule } from '../ports/module-registry.js'

/** Company-and-module answers kept at most. */
const MODULE_CACHE_MAX = 10_000

/**
 * `ModuleRegistry.isActive`, remembered for `ttlMs` (aged by the injected clock; 0 asks every
 * time), and forgotten at once on an invalidation from any instance.
 */
export class ModuleCache {
  readonly #registry: ModuleRegistry
  readonly #cache: LRUCache<string, boolean> | undefined

  constructor(registry: ModuleRegistry, ttlMs: number, clock: Clock) {
    this.#registry = registry
    this.#cache = ttlMs === 0 ? undefined : new LRUCache({ max: MODULE_CACHE_MAX, ttl: ttlMs, perf: { now: () => clock.now() }, ttlResolution: 0 })
  }

  async isActive(companyId: number, module: PlatformModule): Promise<boolean> {
    const cache = this.#cache
    if (cache === undefined) return this.#registry.isActive(companyId, module)
    const key = `${companyId}:${module}`
    const hit = cache.get(key)
    if (hit !== undefined) return hit
    const active = await this.#registry.isActive(companyId, module)
    cache.set(key, active)
    return active
  }

  invalidate(companyId: number, module: PlatformModule): void {
    this.#cache?.delete(`${companyId}:${module}`)
  }

  clear(): void {
    this.#cache?.clear()
  }
}
