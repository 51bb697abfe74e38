import { generateApiKey } from '../auth/api-key.js'
import { WorkforceRefusal } from '../errors.js'
import type { AuditFor } from '../ports/audit-store.js'
import type { Clock } from '../ports/clock.js'
import type { ApiKeyRecord, KeyState, KeyStore } from '../ports/key-store.js'
import type { CompanyRecord } from '../ports/records.js'
import { ALL_SCOPES, type Scope } from '../scopes.js'
import { MAX_INSTANT_MS, MIN_INSTANT_MS } from '../time/calendar.js'

/**
 * The latest expiry a key can have: the last instant the wire format (`YYYY-MM-DDTHH:mm:ss.sssZ`)
 * and every adapter can hold. `9999-12-31T23:59:59.999Z` itself is accepted ("never", the
 * common way), and a rotated twin's expiry is clamped to it, so no stored expiry is ever
 * unrepresentable.
 */
export const MAX_KEY_EXPIRY = new Date(MAX_INSTANT_MS)

/** Why `expiresAt` cannot be stored, or `null` when it can: a real instant from year 0001 to `MAX_KEY_EXPIRY`. */
export function keyExpiryProblem(expiresAt: Date): string | null {
  const ms = expiresAt.getTime()
  if (Number.isNaN(ms)) return 'must be a valid instant'
  if (ms < MIN_INSTANT_MS || ms > MAX_INSTANT_MS) return `must be from 0001-01-01T00:00:00.000Z to ${MAX_KEY_EXPIRY.toISOString()} (UTC)`
  return null
}

/**
 * The expiry of `record`'s rotated twin: it lives as long as the old key was meant to, from
 * `now`, clamped to `MAX_KEY_EXPIRY` (a key made to expire in 9999 would otherwise get a twin
 * expiring in year 10000, which no wire format or database can hold). `null` for a key without
 * expiry. Throws `invalid_transition` for a key made already expired: its twin would be too.
 */
export function rotatedExpiry(record: Pick<ApiKeyRecord, 'key_id' | 'expires_at' | 'created_at'>, now: number): Date | null {
  if (record.expires_at === null) return null
  // An expiry the store could not read as an instant (Postgres `infinity`) never expires, for
  // the verifier as for the views: so does its twin, as far as an expiry can be stored.
  if (Number.isNaN(record.expires_at.getTime())) return new Date(MAX_INSTANT_MS)
  const lifetime = record.expires_at.getTime() - record.created_at.getTime()
  if (!(lifetime > 0)) {
    throw new KeyManagementError(`API key ${record.key_id} was made already expired; its twin would be too. Create a new key instead`, 'invalid_transition')
  }
  return new Date(Math.min(now + lifetime, MAX_INSTANT_MS))
}

/**
 * An instant as the admin views render it, always representable: a row stored out of range
 * (written around `KeyManager`, or before instants were bounded) reads as the nearest end of
 * the range instead of breaking the whole list. An unreadable instant (a driver's `Infinity`)
 * reads as the far end, the way the key verifier already treats it ("not yet expired").
 */
function renderInstant(value: Date): string {
  const ms = value.getTime()
  return new Date(Number.isNaN(ms) ? MAX_INSTANT_MS : Math.min(Math.max(ms, MIN_INSTANT_MS), MAX_INSTANT_MS)).toISOString()
}

/** A key as shown to an administrator: never the secret, never its hash. */
export interface ApiKeyInfo {
  key_id: string
  company_id: number
  name: string | null
  scopes: string[]
  /** `expired` is derived: an active key whose `expires_at` has passed. */
  state: KeyState | 'expired'
  expires_at: string | null
  /** Requests per rate-limit window for this key; `null` uses the plugin's `rateLimit.max`. */
  rate_limit: number | null
  created_at: string
  last_used_at: string | null
}

/**
 * The scopes of a host's own resources (the plugin's `resources` option), for the compiler:
 * add them by declaration merging, as Fastify's own interfaces are extended.
 *
 * @example
 * declare module 'fastify-workforce-api' {
 *   interface HostScopes { 'teams:read': true }
 * }
 */
export interface HostScopes {}

/** A scope a key can be created with: one of spec section 5's, a host's (`HostScopes`), or `'all'` for every one. */
export type KeyScope = Scope | Extract<keyof HostScopes, string> | 'all'

export interface CreateKeyInput {
  companyId: number
  /**
   * The scopes the key grants (spec section 5), or `'all'` for every one. Typed, so a typo such
   * as `'todos:wrte'` does not compile; names read at run time go through `normaliseScopes()` first.
   */
  scopes: readonly KeyScope[]
  expiresAt?: Date | null
  name?: string | null
  /** This key's requests per rate-limit window (1 to 1,000,000,000); default: the plugin's `rateLimit.max`. */
  rateLimit?: number | null
}

export interface CreatedKey {
  /** The full key. Shown exactly once: it is not stored and cannot be recovered. */
  key: string
  info: ApiKeyInfo
}

/**
 * Thrown for a refused key operation: unknown key, a transition the lifecycle forbids, bad input.
 * Its `apiCode` (`src/errors.ts`, `REFUSAL_CODES`) is what the admin API answers with.
 */
export class KeyManagementError extends WorkforceRefusal<'not_found' | 'invalid_transition' | 'invalid_input'> {
  constructor(message: string, reason: 'not_found' | 'invalid_transition' | 'invalid_input') {
    super(message, reason)
    this.name = 'KeyManagementError'
  }
}

/** The largest per-key budget, matching `rateLimit.max`. */
export const MAX_KEY_RATE_LIMIT = 1_000_000_000

/** Spec 3.4: which states each administrative action may start from. */
const TRANSITIONS = {
  disable: { to: 'disabled', from: ['active'] },
  enable: { to: 'active', from: ['disabled'] },
  revoke: { to: 'revoked', from: ['active', 'disabled'] },
} as const satisfies Record<string, { to: KeyState; from: readonly KeyState[] }>

export type KeyAction = keyof typeof TRANSITIONS

/**
 * Administrative key operations (spec 3.4), shared by the plugin (`app.workforceApi.keys`)
 * and the CLI. `onChange` runs after every state change so caches can forget the key.
 *
 * @example
 * const { key, info } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'] })
 * console.log(key) // give it to the integrator now: it is never shown again
 * await app.workforceApi.keys.revoke(info.key_id)
 */
export class KeyManager {
  constructor(
    private readonly keyStore: KeyStore,
    private readonly clock: Clock,
    private readonly onChange: (keyId: string) => void = () => {},
    /** Every scope a key may hold, in catalogue order: the plugin's resource catalogue (with a host's resources). */
    private readonly known: readonly string[] = ALL_SCOPES,
    /**
     * Where `create` checks that the company exists (the plugin passes its `storage`): a key for
     * a company the storage does not know could never read anything, so it is refused
     * (`not_found`) instead of made. Without it, any positive company id is accepted.
     */
    private readonly companies?: { company(companyId: number): Promise<CompanyRecord | null> },
  ) {}

  async create(input: CreateKeyInput, audit?: AuditFor): Promise<CreatedKey> {
    const scopes = normaliseScopes(input.scopes, this.known)
    if (!Number.isSafeInteger(input.companyId) || input.companyId < 1) {
      throw new KeyManagementError('companyId must be a positive integer', 'invalid_input')
    }
    const expiresAt = input.expiresAt ?? null
    const expiryProblem = expiresAt === null ? null : keyExpiryProblem(expiresAt)
    if (expiryProblem !== null) throw new KeyManagementError(`expiresAt ${expiryProblem}`, 'invalid_input')
    const rateLimit = input.rateLimit ?? null
    if (rateLimit !== null && (!Number.isSafeInteger(rateLimit) || rateLimit < 1 || rateLimit > MAX_KEY_RATE_LIMIT)) {
      throw new KeyManagementError(`rateLimit must be an integer from 1 to ${MAX_KEY_RATE_LIMIT}`, 'invalid_input')
    }
    if (this.companies !== undefined && (await this.companies.company(input.companyId)) === null) {
      throw new KeyManagementError(`No company with id ${input.companyId}: keys are made for companies the storage holds (seed or import it first)`, 'not_found')
    }
    const { key, keyId, secretHash } = generateApiKey()
    const record: ApiKeyRecord = {
      key_id: keyId,
      company_id: input.companyId,
      secret_hash: secretHash,
      scopes,
      expires_at: expiresAt,
      state: 'active',
      name: input.name ?? null,
      rate_limit: rateLimit,
      created_at: new Date(this.clock.now()),
      last_used_at: null,
    }
    await this.keyStore.create(record, audit?.(keyId))
    return { key, info: this.#info(record) }
  }

  disable(keyId: string, audit?: AuditFor): Promise<ApiKeyInfo> {
    return this.#transition(keyId, 'disable', audit)
  }

  enable(keyId: string, audit?: AuditFor): Promise<ApiKeyInfo> {
    return this.#transition(keyId, 'enable', audit)
  }

  /** Permanent: a revoked key can never be enabled again. */
  revoke(keyId: string, audit?: AuditFor): Promise<ApiKeyInfo> {
    return this.#transition(keyId, 'revoke', audit)
  }

  async list(options: { companyId?: number } = {}): Promise<ApiKeyInfo[]> {
    const records = await this.keyStore.list(options.companyId)
    return records.map((record) => this.#info(record))
  }

  async #transition(keyId: string, action: KeyAction, audit: AuditFor | undefined): Promise<ApiKeyInfo> {
    const { to, from } = TRANSITIONS[action]
    const updated = await this.keyStore.setState(keyId, to, from, audit?.(keyId))
    if (updated === null) {
      const current = await this.keyStore.find(keyId)
      if (current === null) throw new KeyManagementError(`No API key with id ${keyId}`, 'not_found')
      throw new KeyManagementError(`Cannot ${action} a key that is ${current.state}`, 'invalid_transition')
    }
    this.onChange(keyId)
    return this.#info(updated)
  }

  #info(record: ApiKeyRecord): ApiKeyInfo {
    const expired =
      record.state === 'active' && record.expires_at !== null && record.expires_at.getTime() <= this.clock.now()
    return {
      key_id: record.key_id,
      company_id: record.company_id,
      name: record.name,
      scopes: [...record.scopes],
      state: expired ? 'expired' : record.state,
      expires_at: record.expires_at === null ? null : renderInstant(record.expires_at),
      rate_limit: record.rate_limit,
      created_at: renderInstant(record.created_at),
      last_used_at: record.last_used_at === null ? null : renderInstant(record.last_used_at),
    }
  }
}

/**
 * Validates scope names against `known` (the contract's scopes unless given); `all` expands to
 * every scope. Returns them de-duplicated, in catalogue order.
 */
export function normaliseScopes(scopes: readonly string[], known: readonly string[] = ALL_SCOPES): Exclude<KeyScope, 'all'>[] {
  if (scopes.length === 0) throw new KeyManagementError('A key needs at least one scope', 'invalid_input')
  const wanted = new Set<string>()
  for (const scope of scopes) {
    if (scope === 'all') known.forEach((s) => wanted.add(s))
    else if (known.includes(scope)) wanted.add(scope)
    else throw new KeyManagementError(`Unknown scope "${scope}"; expected one of: all, ${known.join(', ')}`, 'invalid_input')
  }
  return known.filter((scope) => wanted.has(scope)) as Exclude<KeyScope, 'all'>[]
}
