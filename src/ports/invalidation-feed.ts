import type { PlatformModule } from './module-registry.js'

/** A change after which every instance must forget its cached copy. */
export type CacheInvalidation = { kind: 'key'; keyId: string } | { kind: 'module'; companyId: number; module: PlatformModule }

/**
 * Tells every app instance when a key's state or a company's module changed, wherever the
 * change was made (this instance, another one, the CLI in another process), so a revoked key
 * or a switched-off module is refused everywhere at once instead of within the cache TTL.
 *
 * Optional: without it, each instance forgets a change made elsewhere within `keyCache.ttlMs`
 * and `moduleCacheTtlMs`. The Postgres adapter provides one (LISTEN/NOTIFY, sent in the same
 * transaction as the change).
 */
export interface InvalidationFeed {
  /**
   * Calls `onChange` for every change from now on, and `onReset` whenever changes may have
   * been missed (the subscription was lost and is back): the caller then drops every cached
   * entry. Resolves once listening; the returned function stops it.
   */
  subscribe(onChange: (change: CacheInvalidation) => void, onReset: () => void): Promise<() => Promise<void>>
}
