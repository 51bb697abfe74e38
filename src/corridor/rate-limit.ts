import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import type { AuthenticatedKey } from '../auth/key-verifier.js'
import { RateLimitedError } from '../errors.js'
import type { CorridorStage } from './stage.js'

/** Requests per key per window, unless the key carries its own `rate_limit` (spec 7, 8). */
export const DEFAULT_RATE_LIMIT_MAX = 600
export const DEFAULT_RATE_LIMIT_WINDOW_MS = 60_000
/** Failed authentications per client IP per window; past it, 429 before any key lookup. */
export const DEFAULT_FAILED_AUTH_MAX = 60
export const DEFAULT_FAILED_AUTH_WINDOW_MS = 60_000
/** Where counters live in a shared Redis, so they never collide with the host's keys. */
const REDIS_NAMESPACE = 'wfa-rate-limit:'

export interface RateLimitSettings {
  max: number
  timeWindowMs: number
  failedAuthMax: number
  failedAuthWindowMs: number
  /** Shared counters across instances; without it each process counts alone. */
  redis?: Redis
}

type Check = ReturnType<FastifyInstance['createRateLimit']>

/**
 * Both rate limits of the corridor share one registration of `@fastify/rate-limit` on the
 * API's context (its local store, or its Redis store when `redis` is given). Counting fails
 * open: if the store cannot answer, the request goes through (`skipOnError`).
 */
export function rateLimits(settings: RateLimitSettings): { failedAuth: CorridorStage; perKey: CorridorStage } {
  let registered: Promise<unknown> | undefined
  const register = (app: FastifyInstance) =>
    (registered ??= Promise.resolve(
      app.register(fastifyRateLimit, {
        global: false,
        skipOnError: true,
        ...(settings.redis === undefined ? {} : { redis: settings.redis, nameSpace: REDIS_NAMESPACE }),
      }),
    ))

  let failedAuthCheck: Check | undefined
  const failedAuth: CorridorStage = {
    name: 'failed-auth-limit',
    async setup(app) {
      await register(app)
      failedAuthCheck = app.createRateLimit({
        // IPv6 by /64, as the library does: one host usually holds a whole /64 to rotate through.
        keyGenerator: (request) => `ip:${normalizeIP(request.ip)}`,
        max: settings.failedAuthMax,
        timeWindow: settings.failedAuthWindowMs,
      })
    },
    hooksFor() {
      const check = failedAuthCheck as Check
      // Before the key lookup: a spent address is refused without touching the key store.
      const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
        const state = await check(request, { increment: false })
        if (state.isAllowed || state.remaining > 0 || state.ttl <= 0) return
        const retryAfter = Math.max(1, state.ttlInSeconds)
        reply.header('retry-after', String(retryAfter))
        throw new RateLimitedError(`Too many failed authentications from this address; retry after ${retryAfter} s`)
      }
      // Counted once the 401 is known; the 401 itself stays byte-identical (spec 5.4).
      const onResponse = async (request: FastifyRequest, reply: FastifyReply) => {
        if (reply.statusCode === 401) await check(request)
      }
      return { onRequest, onResponse }
    },
  }

  let perKeyHook: ReturnType<FastifyInstance['rateLimit']> | undefined
  const perKey: CorridorStage = {
    name: 'rate-limit',
    async setup(app) {
      await register(app)
      perKeyHook = app.rateLimit({
        hook: 'onRequest',
        keyGenerator: (request) => `key:${(request.workforceAuth as AuthenticatedKey).keyId}`,
        max: (request) => (request.workforceAuth as AuthenticatedKey).rateLimit ?? settings.max,
        timeWindow: settings.timeWindowMs,
        errorResponseBuilder: (_request, context) =>
          new RateLimitedError(`Rate limit of ${context.max} requests per ${settings.timeWindowMs / 1000} s exceeded for this API key; retry after ${context.after}`),
      })
    },
    hooksFor: () => ({ onRequest: perKeyHook as NonNullable<typeof perKeyHook> }),
  }

  return { failedAuth, perKey }
}

/** The plugin's `rateLimit` option (`false` turns both limits off). */
export interface RateLimitOptions {
  /** Requests per key per window. Default 600; a key's own `rate_limit` overrides it. */
  max?: number
  /** The window, in milliseconds. Default 60,000. */
  timeWindow?: number
  /** Shared counters for several instances: an ioredis client (the host's, never closed by us) or a `redis://` URL. */
  redis?: Redis | string
  /** Failed authentications per client IP per window. Default 60 per 60,000 ms. */
  failedAuth?: { max?: number; timeWindow?: number }
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
