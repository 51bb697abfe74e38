import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { KEY_CACHE_MAX, type AuthenticatedKey } from '../auth/key-verifier.js'
import { RateLimitedError } from '../errors.js'
import type { AuthGate } from './authenticate.js'
import type { CorridorStage, DocumentedHeader, StageResponses } from './stage.js'

/** Requests per key per window, unless the key carries its own `rate_limit` (spec 7, 8). */
export const DEFAULT_RATE_LIMIT_MAX = 600
export const DEFAULT_RATE_LIMIT_WINDOW_MS = 60_000
/** Failed authentications per client address per window; past it, the address is gated. */
export const DEFAULT_FAILED_AUTH_MAX = 60
export const DEFAULT_FAILED_AUTH_WINDOW_MS = 60_000
/**
 * Key-store lookups per gated address per window for key ids no successful request vouches
 * for: what lets a key's very first request through from a gated address, and all an address
 * that only fails gets beyond its failed-authentication budget.
 */
export const DEFAULT_FAILED_AUTH_LOOKUPS = 60
/** How long a key id that authenticated stays vouched for; every renewal starts it again. */
export const VOUCH_TTL_MS = 24 * 60 * 60_000
/** Each process renews a key's mark at most this often (a write saver, not shared state). */
export const VOUCH_RENEW_MS = 5 * 60_000
/** Where counters live in a shared Redis, so they never collide with the host's keys. */
const REDIS_NAMESPACE = 'wfa-rate-limit:'

/** What `@fastify/rate-limit` sets on every response once the key is known, its own 429 included. */
export const RATE_LIMIT_HEADERS: readonly DocumentedHeader[] = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']

/**
 * An address past its failed-authentication budget gets a 429 for any failure. The refusal is
 * built here (`AuthGate.refusal`) and thrown by authenticate, before the key is known: no
 * `X-RateLimit-*`, only `Retry-After`.
 */
export const FAILED_AUTH_LIMIT_RESPONSES: StageResponses = {
  stage: 'failed-auth-limit',
  responses: [{ status: 429, code: 'rate_limited', headers: ['Retry-After'] }],
}

/** A key past its budget gets a 429; from here on every response says where the budget stands. */
export const RATE_LIMIT_RESPONSES: StageResponses = {
  stage: 'rate-limit',
  responses: [{ status: 429, code: 'rate_limited', headers: ['Retry-After'] }],
  stamps: [{ headers: RATE_LIMIT_HEADERS }],
}

export interface RateLimitSettings {
  max: number
  timeWindowMs: number
  failedAuthMax: number
  failedAuthWindowMs: number
  failedAuthLookups: number
  /** Shared counters across instances; without it each process counts alone. */
  redis?: Redis
  /** Told each time the store could not answer and a request went through uncounted (the `metrics` option). */
  onStoreError?: () => void
}

/** What a counter says; a store that cannot answer says "nothing counted" (fail open). */
interface CounterState {
  /** The count is above `max`. */
  exceeded: boolean
  /** The count has reached `max` in a live window. */
  spent: boolean
  /** Whole seconds until the window ends, at least 1. */
  retryAfter: number
}

/** A counter in the library's store (local, or Redis when configured), keyed by an id of ours. */
interface Counter {
  /** The state without counting. */
  read(id: string): Promise<CounterState>
  /** Counts one, then answers the state. */
  hit(id: string): Promise<CounterState>
}

/**
 * `createRateLimit()` keys a check by request; ours are keyed by an address or a key id that
 * the caller names, so the check gets a stand-in with only what the library reads from a
 * request when `max` and `timeWindow` are numbers (`routeOptions.config`, for its `groupId`).
 */
function counter(
  app: FastifyInstance,
  prefix: string,
  options: { max: number; timeWindow: number; continueExceeding?: boolean; cache?: number },
  onStoreError: (() => void) | undefined,
): Counter {
  const check = failingOpen(
    app.createRateLimit({ ...options, keyGenerator: (subject) => `${prefix}${(subject as unknown as { id: string }).id}` }),
    () => options.max,
    options.timeWindow,
    onStoreError,
  )
  const subject = (id: string) => ({ id, routeOptions: { config: {} } }) as unknown as FastifyRequest
  const stateOf = (state: Awaited<ReturnType<typeof check>>): CounterState =>
    state.isAllowed
      ? { exceeded: false, spent: false, retryAfter: 1 }
      : { exceeded: state.isExceeded, spent: state.remaining === 0 && state.ttl > 0, retryAfter: Math.max(1, state.ttlInSeconds) }
  return {
    read: async (id) => stateOf(await check(subject(id), { increment: false })),
    hit: async (id) => stateOf(await check(subject(id))),
  }
}

/** What the library's check is (`app.createRateLimit`). */
type LibraryCheck = ReturnType<FastifyInstance['createRateLimit']>

/**
 * The library's check, failing open here rather than in the library (its `skipOnError` would
 * keep the failure from us): a store that cannot answer counts nothing, the request goes
 * through, and `onStoreError` hears of it. The answer is the one `skipOnError` gives.
 */
function failingOpen(check: LibraryCheck, maxOf: (request: FastifyRequest) => number, timeWindow: number, onStoreError: (() => void) | undefined): LibraryCheck {
  return async (request, options) => {
    try {
      return await check(request, options)
    } catch {
      onStoreError?.()
      const max = maxOf(request)
      return { isAllowed: false, key: '', max, timeWindow, remaining: max, ttl: 0, ttlInSeconds: 0, isExceeded: false, isBanned: false }
    }
  }
}

/**
 * Both rate limits of the corridor share one registration of `@fastify/rate-limit` on the
 * API's context (its local store, or its Redis store when `redis` is given). Counting fails
 * open: if the store cannot answer, the request goes through (`failingOpen`).
 */
export function rateLimits(settings: RateLimitSettings): { failedAuth: CorridorStage; perKey: CorridorStage } {
  let registered: Promise<unknown> | undefined
  const register = (app: FastifyInstance) =>
    (registered ??= Promise.resolve(
      app.register(fastifyRateLimit, {
        global: false,
        // Failing open is failingOpen's, which counts the failures.
        skipOnError: false,
        ...(settings.redis === undefined ? {} : { redis: settings.redis, nameSpace: REDIS_NAMESPACE }),
      }),
    ))

  let counters: { failures: Counter; lookups: Counter; vouched: Counter; vouchedLookups: Counter } | undefined
  // Keys this process marked as vouched lately: spares the store a write per request.
  const renewed = new LRUCache<string, true>({ max: KEY_CACHE_MAX, ttl: VOUCH_RENEW_MS })
  const failedAuth: CorridorStage = {
    name: FAILED_AUTH_LIMIT_RESPONSES.stage,
    async setup(app) {
      await register(app)
      const window = settings.failedAuthWindowMs
      const failed = settings.onStoreError
      counters = {
        failures: counter(app, 'ip:', { max: settings.failedAuthMax, timeWindow: window }, failed),
        lookups: counter(app, 'lookup:', { max: settings.failedAuthLookups, timeWindow: window }, failed),
        // A mark, not a budget: "exceeded" (a count above 0) means vouched; every renewal
        // restarts its life (continueExceeding), so a key in use stays vouched.
        vouched: counter(app, 'vouched:', { max: 0, timeWindow: VOUCH_TTL_MS, continueExceeding: true, cache: KEY_CACHE_MAX }, failed),
        vouchedLookups: counter(app, 'vouched-lookup:', { max: settings.max, timeWindow: settings.timeWindowMs }, failed),
      }
    },
    hooksFor() {
      const { failures, lookups, vouched, vouchedLookups } = counters as NonNullable<typeof counters>
      /**
       * The gate of a spent address. A key id this process has cached is verified without the
       * key store. Otherwise the store is asked about an id that an earlier success anywhere
       * vouches for, within a per-key bound (`max` a window: a vouched id whose secret an
       * attacker lacks), or within the address's small allowance; else the key is refused
       * unlooked. Every well-formed id costs the same two counter operations, cached or not
       * (a read where nothing is looked up), so the gate's time does not tell a key this
       * process knows from one it does not.
       */
      const gate = (address: string, retryAfter: number): AuthGate => ({
        async admit(keyId, cached) {
          const isVouched = (await vouched.read(keyId)).exceeded
          const [budget, id] = isVouched ? [vouchedLookups, keyId] : [lookups, address]
          return !(cached ? await budget.read(id) : await budget.hit(id)).exceeded
        },
        refusal(reply) {
          reply.header('retry-after', String(retryAfter))
          return new RateLimitedError(`Too many failed authentications from this address; retry after ${retryAfter} s`)
        },
      })
      // Before the key lookup: a spent address gets a gate instead of a free lookup.
      const onRequest = async (request: FastifyRequest) => {
        // IPv6 by /64, as the library does: one host usually holds a whole /64 to rotate through.
        const address = normalizeIP(request.ip)
        const state = await failures.read(address)
        if (state.spent) request.workforceAuthGate = gate(address, state.retryAfter)
      }
      // Counted once the 401 is known; the 401 itself stays byte-identical (spec 5.4). A
      // success vouches for its key, so other instances let it through a spent address.
      const onResponse = async (request: FastifyRequest, reply: FastifyReply) => {
        if (reply.statusCode === 401) await failures.hit(normalizeIP(request.ip))
        const auth = request.workforceAuth
        if (auth !== null && !renewed.has(auth.keyId)) {
          renewed.set(auth.keyId, true)
          await vouched.hit(auth.keyId)
        }
      }
      return { onRequest, onResponse }
    },
  }

  let perKeyCheck: ReturnType<FastifyInstance['createRateLimit']> | undefined
  const perKey: CorridorStage = {
    name: RATE_LIMIT_RESPONSES.stage,
    async setup(app) {
      await register(app)
      const maxOf = (request: FastifyRequest) => (request.workforceAuth as AuthenticatedKey).rateLimit ?? settings.max
      perKeyCheck = failingOpen(
        app.createRateLimit({
          keyGenerator: (request) => `key:${(request.workforceAuth as AuthenticatedKey).keyId}`,
          max: maxOf,
          timeWindow: settings.timeWindowMs,
        }),
        maxOf,
        settings.timeWindowMs,
        settings.onStoreError,
      )
    },
    hooksFor: (route) => {
      const check = perKeyCheck as NonNullable<typeof perKeyCheck>
      // A conditional read's budget as read before it was answered; counted in `onSend` unless it is a 304.
      const deferred = new WeakMap<FastifyRequest, CountedState>()
      const refuse = (reply: FastifyReply, state: CountedState) => {
        stampBudget(reply, state.max, 0, state.ttlInSeconds)
        reply.header('retry-after', String(state.ttlInSeconds))
        return new RateLimitedError(
          `Rate limit of ${state.max} requests per ${settings.timeWindowMs / 1000} s exceeded for this API key; retry after ${state.ttlInSeconds} s`,
        )
      }
      const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
        if (route.method === 'GET' && request.headers['if-none-match'] !== undefined) {
          // A conditional read is counted once its answer is known: a 304 spends nothing
          // (docs/decisions.md, "Conditional requests and kept answers"). A key whose budget is
          // spent is refused all the same, so a tag cannot buy requests beyond the budget.
          const state = await check(request, { increment: false })
          if (state.isAllowed) return
          if (state.remaining === 0 && state.ttl > 0) throw refuse(reply, state)
          deferred.set(request, state)
          return
        }
        const state = await check(request)
        if (state.isAllowed) return
        if (state.isExceeded) throw refuse(reply, state)
        stampBudget(reply, state.max, state.remaining, state.ttlInSeconds)
      }
      if (route.method !== 'GET') return { onRequest }
      const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
        const read = deferred.get(request)
        if (read === undefined) return payload
        deferred.delete(request)
        if (reply.statusCode === 304) {
          stampBudget(reply, read.max, read.remaining, read.ttlInSeconds)
          return payload
        }
        // Answered otherwise (200, or an error after this stage): counted now, as any request.
        const state = await check(request)
        if (!state.isAllowed) stampBudget(reply, state.max, state.remaining, state.ttlInSeconds)
        return payload
      }
      return { onRequest, onSend }
    },
  }

  return { failedAuth, perKey }
}

/** What the library's check answers (`app.createRateLimit`). */
type RateLimitState = Awaited<ReturnType<ReturnType<FastifyInstance['createRateLimit']>>>
/** A state with a count (every key is counted: no allow list). */
type CountedState = Extract<RateLimitState, { isAllowed: false }>

/** The budget headers, as the library sets them (its defaults: limit, remaining, reset in seconds). */
function stampBudget(reply: FastifyReply, max: number, remaining: number, resetSeconds: number): void {
  reply.header('x-ratelimit-limit', max)
  reply.header('x-ratelimit-remaining', remaining)
  reply.header('x-ratelimit-reset', resetSeconds)
}

/** The plugin's `rateLimit` option (`false` turns both limits off). */
export interface RateLimitOptions {
  /** Requests per key per window. Default 600; a key's own `rate_limit` overrides it. */
  max?: number
  /** The window, in milliseconds. Default 60,000. */
  timeWindow?: number
  /** Shared counters for several instances: an ioredis client (the host's, never closed by us) or a `redis://` URL. */
  redis?: Redis | string
  /**
   * Failed authentications per client address per window (default 60 per 60,000 ms). Past it,
   * the address is gated: a valid key is still served, a failure is a 429, and the key store
   * is asked at most `lookups` times per window (default 60) for key ids no success vouches for.
   */
  failedAuth?: { max?: number; timeWindow?: number; lookups?: number }
}

/** Fail fast while Redis is away: no queue of commands waiting for it, short timeouts. */
const REDIS_CLIENT_OPTIONS = {
  enableOfflineQueue: false,
  connectTimeout: 1_000,
  commandTimeout: 250,
  maxRetriesPerRequest: 0,
  retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
} as const

export interface ResolvedRateLimits {
  settings: RateLimitSettings
  /** Closes a Redis client we created from a URL; a host's client stays open. */
  close(): Promise<void>
}

/**
 * Turns the option into settings. A `redis://` URL becomes a client of ours with fail-fast
 * options; either client is watched so an outage is logged once when it starts and once when
 * it ends, while counting falls back to letting requests through.
 */
export async function resolveRateLimits(option: RateLimitOptions, log: FastifyInstance['log']): Promise<ResolvedRateLimits> {
  let redis: Redis | undefined
  let owned = false
  if (typeof option.redis === 'string') {
    const { Redis: RedisClient } = await import('ioredis')
    redis = new RedisClient(option.redis, REDIS_CLIENT_OPTIONS)
    owned = true
  } else {
    redis = option.redis
  }
  const watch = redis === undefined ? undefined : watchOutages(redis, log)
  if (redis !== undefined) await firstConnection(redis)
  return {
    settings: {
      max: option.max ?? DEFAULT_RATE_LIMIT_MAX,
      timeWindowMs: option.timeWindow ?? DEFAULT_RATE_LIMIT_WINDOW_MS,
      failedAuthMax: option.failedAuth?.max ?? DEFAULT_FAILED_AUTH_MAX,
      failedAuthWindowMs: option.failedAuth?.timeWindow ?? DEFAULT_FAILED_AUTH_WINDOW_MS,
      failedAuthLookups: option.failedAuth?.lookups ?? DEFAULT_FAILED_AUTH_LOOKUPS,
      ...(redis === undefined ? {} : { redis }),
    },
    async close() {
      watch?.stop()
      if (owned) redis?.disconnect()
    },
  }
}

/**
 * Waits (at most the connect timeout) for the client's first connection, so counting starts
 * with the first request: without an offline queue, commands sent while connecting fail. If
 * Redis is not there, the app starts anyway, failing open.
 */
async function firstConnection(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      redis.off('ready', done)
      redis.off('error', done)
      resolve()
    }
    const timer = setTimeout(done, REDIS_CLIENT_OPTIONS.connectTimeout)
    redis.once('ready', done)
    redis.once('error', done)
  })
}

/** Logs an outage once when it starts (connection lost or refused) and once when it ends. */
function watchOutages(redis: Redis, log: FastifyInstance['log']): { stop(): void } {
  let down = false
  let stopped = false
  const lost = (error?: Error) => {
    if (down || stopped) return
    down = true
    log.warn({ err: error }, 'workforce-api: rate-limit Redis unreachable; requests are served uncounted until it is back')
  }
  redis.on('error', lost)
  redis.on('close', () => lost())
  redis.on('ready', () => {
    if (!down || stopped) return
    down = false
    log.info('workforce-api: rate-limit Redis reachable again; shared counting resumed')
  })
  return {
    stop() {
      stopped = true
    },
  }
}
