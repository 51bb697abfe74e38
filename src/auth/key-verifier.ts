import { randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { Clock } from '../ports/clock.js'
import type { KeyStore } from '../ports/key-store.js'
import { parseApiKey, secretMatches } from './api-key.js'

export const KEY_CACHE_MAX = 10_000
export const KEY_CACHE_TTL_MS = 30_000
export const LAST_USED_THROTTLE_MS = 60_000

/** What a verified key grants the request. */
export interface AuthenticatedKey {
  keyId: string
  companyId: number
  scopes: ReadonlySet<string>
  /** The key's own requests per rate-limit window, or `null` for the plugin's default. */
  rateLimit: number | null
}

interface CachedKey {
  auth: AuthenticatedKey
  digest: Buffer
  usable: boolean
  expiresAt: number | null
}

/**
 * What an unknown key id's secret is compared against, so every failure path hashes, compares
 * and builds its cache entry as a known id does: timing must not tell an unknown id from a
 * wrong secret. Random per process, so no secret can match it.
 */
const DUMMY_SECRET_HASH = randomBytes(32).toString('hex')

/** An id the caller did not let us look up: refused like an unknown id, never cached. */
const NOT_LOOKED_UP: CachedKey = {
  auth: { keyId: '', companyId: 0, scopes: new Set(), rateLimit: null },
  digest: Buffer.from(DUMMY_SECRET_HASH, 'hex'),
  usable: false,
  expiresAt: null,
}

export interface VerifyOptions {
  /**
   * Asked once for every well-formed key id, cached or not, before the key store is: `cached`
   * says whether this process holds the id's answer. Answering `false` for an id that is not
   * cached refuses it without a lookup, after the same hash and compare an unknown id gets
   * (and nothing is cached, so a real key is not held as unknown). Asked for cached ids too,
   * so that whatever it costs is paid alike by ids this process knows and ids it does not.
   */
  admit?: (keyId: string, cached: boolean) => Promise<boolean>
}

export interface KeyVerifierOptions {
  keyStore: KeyStore
  clock: Clock
  cacheMax?: number
  cacheTtlMs?: number
  lastUsedThrottleMs?: number
  onTouchError?: (error: unknown) => void
}

/**
 * Turns a presented API key into the company and scopes it grants, or `null` for every
 * kind of credential failure alike (spec 5.4: the API never says why).
 *
 * Verified records are cached in a bounded LRU for at most `cacheTtlMs`; the cache holds the
 * SHA-256 digest, never the secret, and the secret is still checked on every request.
 */
export class KeyVerifier {
  readonly #keyStore: KeyStore
  readonly #clock: Clock
  readonly #cache: LRUCache<string, CachedKey>
  readonly #onTouchError: (error: unknown) => void
  readonly #cacheEnabled: boolean
  /**
   * Keys whose use was recorded within `lastUsedThrottleMs`. Kept apart from the key cache so
   * the throttle holds when the cache is off (ttl 0) or has evicted the key; bounded alike.
   */
  readonly #touched: LRUCache<string, true>

  constructor(options: KeyVerifierOptions) {
    this.#keyStore = options.keyStore
    this.#clock = options.clock
    this.#onTouchError = options.onTouchError ?? (() => {})
    const ttl = options.cacheTtlMs ?? KEY_CACHE_TTL_MS
    // lru-cache reads ttl 0 as "never expires"; for us 0 means "do not cache".
    this.#cacheEnabled = ttl > 0
    const perf = { now: () => this.#clock.now() }
    this.#touched = new LRUCache({
      max: options.cacheMax ?? KEY_CACHE_MAX,
      ttl: Math.max(options.lastUsedThrottleMs ?? LAST_USED_THROTTLE_MS, 1),
      perf,
      ttlResolution: 0,
    })
    this.#cache = new LRUCache({
      max: options.cacheMax ?? KEY_CACHE_MAX,
      ttl: Math.max(ttl, 1),
      // Ages come from the injected clock, read on every check (lru-cache otherwise reuses
      // a reading for up to 1 ms), so a revoked-elsewhere key never outlives the TTL.
      perf,
      ttlResolution: 0,
    })
  }

  /**
   * The key's grant, or `null` for any failure. `options.admit` lets a caller (the
   * failed-authentication gate) decide whether an uncached id may be looked up.
   *
   * @example
   * const auth = await verifier.verify(request.headers['x-api-key'])
   * if (auth === null) throw new UnauthorizedError()
   */
  async verify(presented: string | undefined, options: VerifyOptions = {}): Promise<AuthenticatedKey | null> {
    if (presented === undefined) return null
    const parsed = parseApiKey(presented)
    if (parsed === null) return null
    const cached = this.#cache.get(parsed.keyId)
    const admitted = options.admit === undefined || (await options.admit(parsed.keyId, cached !== undefined))
    const entry = cached ?? (admitted ? await this.#load(parsed.keyId) : NOT_LOOKED_UP)
    // Hash and compare before any verdict, whatever the key's state (spec 5.4: never say why).
    const matches = secretMatches(parsed.secret, entry.digest)
    const now = this.#clock.now()
    if (!entry.usable || (entry.expiresAt !== null && now >= entry.expiresAt) || !matches) return null
    this.#touch(entry, now)
    return entry.auth
  }

  /** Forgets a key at once; the key manager calls it on every state change in this process. */
  invalidate(keyId: string): void {
    this.#cache.delete(keyId)
  }

  /** Forgets every key: after a gap in the invalidation feed, any entry may be stale. */
  clear(): void {
    this.#cache.clear()
  }

  /**
   * Looks the id up and caches the answer. An unknown id is cached too, as an unusable entry
   * built the same way (a flood of unknown ids costs one lookup each per TTL, within `max`).
   */
  async #load(keyId: string): Promise<CachedKey> {
    const record = await this.#keyStore.find(keyId)
    const entry: CachedKey = {
      auth: { keyId, companyId: record?.company_id ?? 0, scopes: new Set(record?.scopes ?? []), rateLimit: record?.rate_limit ?? null },
      digest: Buffer.from(record?.secret_hash ?? DUMMY_SECRET_HASH, 'hex'),
      usable: record?.state === 'active',
      expiresAt: record?.expires_at?.getTime() ?? null,
    }
    if (this.#cacheEnabled) this.#cache.set(keyId, entry)
    return entry
  }

  #touch(entry: CachedKey, now: number): void {
    const touch = this.#keyStore.touchLastUsed
    if (touch === undefined || this.#touched.has(entry.auth.keyId)) return
    this.#touched.set(entry.auth.keyId, true)
    touch.call(this.#keyStore, entry.auth.keyId, new Date(now)).catch(this.#onTouchError)
  }
}
