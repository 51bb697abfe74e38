import { CONTRACT_RESOURCES } from './api/index.js'
import { ResourceCatalogue } from './api/catalogue.js'
import type { AnyResourceDeclaration } from './api/resource.js'
import { closestName } from './closest-name.js'
import { OPTION_ERROR_CODES, WorkforceOptionError } from './errors.js'
import type { Clock } from './ports/clock.js'
import type { WorkforcePorts } from './ports/index.js'
import type { RateLimitOptions } from './corridor/rate-limit.js'
import type { ListConcurrencyOptions } from './api/company-read-limiter.js'
import type { InviteSender } from './ports/invite-sender.js'
import type { MetricsOption } from './metrics/request-metrics.js'
import type { MetricsOptions } from './metrics/workforce-metrics.js'
import type { WebhookTransport } from './ports/webhook-transport.js'
import type { EndpointDisabledNotice, EndpointFailingNotice } from './webhooks/dispatcher.js'
import { DEFAULT_RETRY_SCHEDULE_MS } from './webhooks/retry.js'

export const MODULE_CACHE_TTL_MS = 5_000
/** Spec-independent ceiling on how stale a cached key may be: a revoked key dies within this. */
export const MAX_KEY_CACHE_TTL_MS = 30_000

/**
 * Options of `app.register(workforceApi, options)`.
 *
 * @example
 * await app.register(workforceApi, { prefix: '/api/public', storage, keyStore, modules })
 */
export interface WorkforceApiOptions extends WorkforcePorts {
  /**
   * The host's own read-only resources (`defineResource`), served beside the contract's with
   * everything ours have: key auth, their scope and module, pages with exact totals, strict
   * filters, events and webhooks, and their place in the reference document. A name, scope,
   * event type or component that collides with ours, or a malformed declaration, fails `ready()`.
   */
  resources?: readonly AnyResourceDeclaration[]
  /** Sends invitation emails for `POST /v1/users` with `send_invite: true`. Default: logs them. */
  invites?: InviteSender
  /** Idempotency timings: `leaseMs` (default 10 s, renewed every third of it while a request runs), `retentionMs` (24 h), `purgeIntervalMs` (60 s), `purgeBatch` (500). */
  idempotencyOptions?: { leaseMs?: number; retentionMs?: number; purgeIntervalMs?: number; purgeBatch?: number }
  /** Where routes are mounted, e.g. `/api/public` → `/api/public/v1/users`. */
  prefix?: string
  /** Source of "now" (key expiry, cache ages). Default: the system clock. */
  clock?: Clock
  /** Verified-key cache. `max` entries (default 10,000); `ttlMs` 0–30,000 (default 30,000; 0 disables). */
  keyCache?: { max?: number; ttlMs?: number }
  /** How long a module's on/off state is cached, 0–60,000 ms. Default 5,000; 0 disables. */
  moduleCacheTtlMs?: number
  /** At most one `touchLastUsed` per key per this many ms per process. Default 60,000. */
  lastUsedThrottleMs?: number
  /**
   * Rate limiting (spec 7, 8): `max` requests per key per `timeWindow` ms (default 600 per
   * 60,000; a key's own `rate_limit` overrides `max`), and `failedAuth` failed authentications
   * per client IP (default 60 per 60,000; past it a valid key is still served, failures get 429,
   * and `failedAuth.lookups`, default 60, bounds the key-store lookups). `redis` (an ioredis
   * client or URL) shares the counters across instances. `false` turns both off. Default: on, counted in this process.
   */
  rateLimit?: false | RateLimitOptions
  /** Webhook delivery settings; delivery and `app.workforceApi.webhooks` need `secretKey` and the `webhooks` port. */
  webhookOptions?: WebhookOptions
  /**
   * The OpenAPI 3.1 document at `<prefix>/openapi.json` (no API key needed) and, with
   * `referencePage: true`, a reference page rendered from it at `<prefix>/docs` (needs the
   * optional peer `@fastify/swagger-ui`). `title` and `description` replace the document's
   * own. `false` serves neither. Default: the document, no page.
   */
  openapi?: boolean | OpenApiOptions
  /**
   * Each company's list reads in flight at once on this instance (`perCompany`, default 2) and
   * waiting for a slot (`queuePerCompany`, default 64; beyond, 429 with `Retry-After`), so one
   * tenant's expensive lists hold at most that share of the storage's connections or read
   * workers. `false` turns the cap off. Default: on.
   */
  listConcurrency?: false | ListConcurrencyOptions
  /**
   * Bytes of serialized list pages and by-id answers this instance keeps, each under the version
   * of the company's rows it was read at (docs/decisions.md, "Conditional requests and kept
   * answers"): while nothing changed, a repeated read or its 304 runs no page query. `0` keeps
   * none (every read runs its query; tags and 304s work the same). Default 33,554,432 (32 MiB).
   */
  answerCacheBytes?: number
  /**
   * Prometheus metrics (prom-client): requests by route template, method and status with their
   * duration, rate-limit store errors, storage errors, webhook outcomes, backlog and
   * commit-to-delivery time, and the adapter's pool (`pool`, `readPool`) — on a registry of
   * our own (`app.workforceApi.metricsRegistry`) or the host's (`registry`), never prom-client's
   * global one implicitly. `true`: our own registry, defaults. Default: off (docs/deployment.md, "Metrics").
   */
  metrics?: MetricsOption
}

/** The `openapi` option's object form. */
export interface OpenApiOptions {
  /** Serve the reference page at `<prefix>/docs`. Default `false`. */
  referencePage?: boolean
  /** `info.title`. Default `Workforce public API`. */
  title?: string
  /** `info.description` (Markdown). Default: an introduction to keys, scopes, paging and errors. */
  description?: string
}

/** Defaults of `webhookOptions` (docs/webhooks.md). */
export const WEBHOOK_DEFAULTS = {
  autoDisableAfterMs: 5 * 24 * 60 * 60 * 1000,
  timeoutMs: 15_000,
  retentionMs: 30 * 24 * 60 * 60 * 1000,
  pollIntervalMs: 1_000,
  concurrency: 64,
  endpointConcurrency: 4,
  companyConcurrency: 16,
  slowAttemptMs: 1_000,
  breakerThreshold: 5,
  breakerPauseMs: 30_000,
  breakerMaxPauseMs: 5 * 60_000,
  batch: 32,
  purgeIntervalMs: 60_000,
  purgeBatch: 500,
  shutdownGraceMs: 5_000,
} as const

export interface WebhookOptions {
  /**
   * Seals endpoints' signing secrets at rest (AES-256-GCM): 32 bytes as base64
   * (`openssl rand -base64 32`) or a Buffer. The same on every instance. Required for delivery
   * and administration; without it events are still recorded.
   */
  secretKey?: string | Buffer
  /** Allows http and private, loopback and link-local destinations: development and tests only. Default false. */
  allowPrivateDestinations?: boolean
  /** Delays between attempts (ms). Default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
  retrySchedule?: readonly number[]
  /** An endpoint whose deliveries have all failed this long is disabled (ms). Default 5 days. */
  autoDisableAfterMs?: number
  /** Told when delivery disables an endpoint (410, or failing for `autoDisableAfterMs`), on the instance that did it. */
  onEndpointDisabled?: (notice: EndpointDisabledNotice) => void | Promise<void>
  /** Run this instance's dispatcher. Default true; false for instances that only serve the API. */
  dispatcher?: boolean
  /** Sends deliveries. Default: HTTP with undici (keep-alive, connect-time address check). */
  transport?: WebhookTransport
  /** An attempt without a 2xx within this fails (ms). Default 15,000. */
  timeoutMs?: number
  /**
   * How long a claimed attempt belongs to its dispatcher (ms): one whose process died is
   * attempted again after this. Must exceed `timeoutMs`. Default `timeoutMs` + 30,000.
   */
  leaseMs?: number
  /**
   * Delivered and failed deliveries and their events are purged after this (ms), and the events
   * feed (`GET /v1/events`) keeps events this long. At least the length of `retrySchedule`. Default 30 days.
   */
  retentionMs?: number
  /** How often an idle dispatcher looks for due deliveries (ms) when nothing wakes it. Default 1,000. */
  pollIntervalMs?: number
  /** Attempts in flight at once per instance. Default 64. */
  concurrency?: number
  /**
   * Attempts in flight at once to one endpoint, across every instance; an endpoint whose last
   * attempt failed, whose breaker is open or whose attempt is slow gets one. Default 4.
   */
  endpointConcurrency?: number
  /**
   * Attempts in flight at once to one company's healthy endpoints, across every instance; its
   * failing or slow endpoints together get half as many more. Default 16.
   */
  companyConcurrency?: number
  /** Failed attempts in a row that open an endpoint's circuit breaker (its deliveries pause, then one probe). Default 5. */
  breakerThreshold?: number
  /** The breaker's first pause (ms); each failed probe doubles it. Default 30,000. */
  breakerPauseMs?: number
  /** The breaker's longest pause (ms). Default 300,000. */
  breakerMaxPauseMs?: number
  /**
   * Told when an endpoint's breaker opens (it kept failing; its deliveries are paused), on the
   * instance whose attempt opened it — before the endpoint is ever disabled.
   */
  onEndpointFailing?: (notice: EndpointFailingNotice) => void | Promise<void>
}

/** Every option, so an unknown one is refused; `satisfies` keeps the lists in step with the types. */
const KNOWN_OPTIONS = {
  resources: true,
  storage: true,
  keyStore: true,
  modules: true,
  writes: true,
  idempotency: true,
  invalidations: true,
  webhooks: true,
  audit: true,
  usage: true,
  invites: true,
  idempotencyOptions: true,
  prefix: true,
  clock: true,
  keyCache: true,
  moduleCacheTtlMs: true,
  lastUsedThrottleMs: true,
  rateLimit: true,
  webhookOptions: true,
  openapi: true,
  listConcurrency: true,
  answerCacheBytes: true,
  metrics: true,
} satisfies Record<keyof WorkforceApiOptions, true>

/** Options of `app.register` that Fastify itself reads for every plugin. */
/** What Fastify's `register` itself reads from a plugin's options. */
export const FASTIFY_REGISTER_OPTIONS = ['logLevel', 'logSerializers']

const KNOWN_NESTED: Record<string, readonly string[]> = {
  keyCache: Object.keys({ max: true, ttlMs: true } satisfies Record<keyof NonNullable<WorkforceApiOptions['keyCache']>, true>),
  idempotencyOptions: Object.keys({ leaseMs: true, retentionMs: true, purgeIntervalMs: true, purgeBatch: true } satisfies Record<
    keyof NonNullable<WorkforceApiOptions['idempotencyOptions']>,
    true
  >),
  rateLimit: Object.keys({ max: true, timeWindow: true, redis: true, failedAuth: true } satisfies Record<keyof RateLimitOptions, true>),
  'rateLimit.failedAuth': ['max', 'timeWindow', 'lookups'],
  openapi: Object.keys({ referencePage: true, title: true, description: true } satisfies Record<keyof OpenApiOptions, true>),
  listConcurrency: Object.keys({ perCompany: true, queuePerCompany: true } satisfies Record<keyof ListConcurrencyOptions, true>),
  metrics: Object.keys({ registry: true, processMetrics: true, pool: true, readPool: true } satisfies Record<keyof MetricsOptions, true>),
  webhookOptions: Object.keys({
    secretKey: true,
    allowPrivateDestinations: true,
    retrySchedule: true,
    autoDisableAfterMs: true,
    onEndpointDisabled: true,
    dispatcher: true,
    transport: true,
    timeoutMs: true,
    leaseMs: true,
    retentionMs: true,
    pollIntervalMs: true,
    concurrency: true,
    endpointConcurrency: true,
    companyConcurrency: true,
    breakerThreshold: true,
    breakerPauseMs: true,
    breakerMaxPauseMs: true,
    onEndpointFailing: true,
  } satisfies Record<keyof WebhookOptions, true>),
}

/**
 * Refuses an option the plugin does not know (top level and inside its option objects), naming
 * it and the closest known name: a typo would otherwise be silently ignored.
 */
function checkKnownKeys(options: object): void {
  const known = [...Object.keys(KNOWN_OPTIONS), ...FASTIFY_REGISTER_OPTIONS]
  refuseUnknown(options, known, '')
  for (const [path, keys] of Object.entries(KNOWN_NESTED)) {
    const value = path.split('.').reduce<unknown>((at, key) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), options)
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype) {
      refuseUnknown(value, keys, `${path}.`)
    }
  }
}

/**
 * Refuses a key of `value` that is not in `known`, suggesting the closest known name (a typo).
 * `plugin` names whose option it is (the admin plugin's checks use it too).
 */
export function refuseUnknown(value: object, known: readonly string[], prefix: string, plugin = 'fastify-workforce-api'): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue
    const closest = closestName(key, known)
    fail(`${prefix}${key}`, `is not an option of ${plugin}${closest === undefined ? '' : `; did you mean "${prefix}${closest}"?`}`, OPTION_ERROR_CODES.unknown)
  }
}


/**
 * Checks options at registration so a wiring mistake fails `app.ready()` with a message
 * naming the option, instead of failing the first request.
 */
export function checkOptions(options: Partial<WorkforceApiOptions>): ResourceCatalogue {
  checkKnownKeys(options)
  const { storage, keyStore, modules, clock, keyCache, prefix } = options
  if (storage === null || typeof storage !== 'object') fail('storage', 'is required and must implement the Storage port', presence(storage))
  const catalogue = resourceCatalogue(options.resources)
  const problem = catalogue.storageProblem(storage)
  if (problem !== undefined) fail(...problem)
  if (keyStore === null || typeof keyStore !== 'object') fail('keyStore', 'is required and must implement the KeyStore port', presence(keyStore))
  for (const method of ['find', 'create', 'setState', 'list'] as const) {
    if (typeof keyStore[method] !== 'function') fail(`keyStore.${method}`, 'must be a function')
  }
  if (modules === null || typeof modules !== 'object' || typeof modules.isActive !== 'function') {
    fail('modules', 'is required and must implement the ModuleRegistry port (isActive)', presence(modules))
  }
  if (options.writes !== undefined) {
    if (options.writes === null || typeof options.writes.transaction !== 'function') fail('writes', 'must implement the WriteStorage port (transaction)')
    const store = options.idempotency
    if (store === undefined || store === null) fail('idempotency', 'is required when "writes" is set', presence(store))
    for (const method of ['begin', 'complete', 'renew', 'release', 'purgeExpired'] as const) {
      if (typeof store[method] !== 'function') fail(`idempotency.${method}`, 'must be a function')
    }
  }
  if (options.invalidations !== undefined && typeof options.invalidations?.subscribe !== 'function') fail('invalidations', 'must have a subscribe() method')
  if (options.invites !== undefined && typeof options.invites?.sendInvite !== 'function') fail('invites', 'must have a sendInvite() method')
  const timings = options.idempotencyOptions
  if (timings !== undefined) {
    checkInteger('idempotencyOptions.leaseMs', timings.leaseMs, 1, 24 * 60 * 60 * 1000)
    checkInteger('idempotencyOptions.retentionMs', timings.retentionMs, 1, Number.MAX_SAFE_INTEGER)
    checkInteger('idempotencyOptions.purgeIntervalMs', timings.purgeIntervalMs, 1, 2_147_483_647)
    checkInteger('idempotencyOptions.purgeBatch', timings.purgeBatch, 1, 100_000)
  }
  if (clock !== undefined && typeof clock?.now !== 'function') fail('clock', 'must have a now() method')
  if (prefix !== undefined && (typeof prefix !== 'string' || (prefix !== '' && !prefix.startsWith('/')))) {
    fail('prefix', 'must be a string starting with "/"')
  }
  if (keyCache !== undefined) {
    checkInteger('keyCache.max', keyCache.max, 1, Number.MAX_SAFE_INTEGER)
    checkInteger('keyCache.ttlMs', keyCache.ttlMs, 0, MAX_KEY_CACHE_TTL_MS)
  }
  checkInteger('moduleCacheTtlMs', options.moduleCacheTtlMs, 0, 60_000)
  checkRateLimit(options.rateLimit)
  checkOpenApi(options.openapi)
  checkListConcurrency(options.listConcurrency)
  checkMetrics(options.metrics)
  checkInteger('answerCacheBytes', options.answerCacheBytes, 0, 64 * 1024 * 1024 * 1024)
  checkInteger('lastUsedThrottleMs', options.lastUsedThrottleMs, 0, Number.MAX_SAFE_INTEGER)
  if (options.webhooks !== undefined) {
    for (const method of ['createEndpoint', 'claimDue', 'finishAttempt', 'publish', 'purgeFinished'] as const) {
      if (typeof options.webhooks?.[method] !== 'function') fail(`webhooks.${method}`, 'must be a function')
    }
  }
  checkWebhookOptions(options.webhookOptions)
  return catalogue
}

function checkWebhookOptions(webhook: WebhookOptions | undefined): void {
  if (webhook === undefined) return
  if (webhook === null || typeof webhook !== 'object') fail('webhookOptions', 'must be an object')
  const { secretKey, retrySchedule } = webhook
  if (secretKey !== undefined) {
    const bytes = typeof secretKey === 'string' ? Buffer.from(secretKey, 'base64') : Buffer.isBuffer(secretKey) ? secretKey : undefined
    if (bytes?.length !== 32) fail('webhookOptions.secretKey', 'must be 32 bytes, as base64 (openssl rand -base64 32) or a Buffer')
  }
  if (retrySchedule !== undefined) {
    if (!Array.isArray(retrySchedule) || retrySchedule.length > 50) fail('webhookOptions.retrySchedule', 'must be an array of at most 50 delays in ms')
    retrySchedule.forEach((delay, index) => checkInteger(`webhookOptions.retrySchedule[${index}]`, delay, 1, 7 * 24 * 60 * 60 * 1000))
  }
  checkInteger('webhookOptions.autoDisableAfterMs', webhook.autoDisableAfterMs, 1, Number.MAX_SAFE_INTEGER)
  checkInteger('webhookOptions.timeoutMs', webhook.timeoutMs, 1, 60_000)
  checkInteger('webhookOptions.leaseMs', webhook.leaseMs, 1, 24 * 60 * 60 * 1000)
  if (webhook.leaseMs !== undefined && webhook.leaseMs <= (webhook.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs)) {
    fail('webhookOptions.leaseMs', 'must exceed webhookOptions.timeoutMs (an attempt still running must keep its claim)')
  }
  checkInteger('webhookOptions.retentionMs', webhook.retentionMs, 1, Number.MAX_SAFE_INTEGER)
  // The events feed keeps events for the retention period: at least as long as a delivery may
  // still be retried, so a client can always find in the feed what a failing endpoint missed.
  const retried = (retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS).reduce((total, delay) => total + delay, 0)
  if ((webhook.retentionMs ?? WEBHOOK_DEFAULTS.retentionMs) < retried) {
    fail('webhookOptions.retentionMs', `must be at least the length of the retry schedule (${retried} ms): the events feed keeps events that long`)
  }
  checkInteger('webhookOptions.pollIntervalMs', webhook.pollIntervalMs, 10, 60_000)
  checkInteger('webhookOptions.concurrency', webhook.concurrency, 1, 10_000)
  checkInteger('webhookOptions.endpointConcurrency', webhook.endpointConcurrency, 1, 1_000)
  checkInteger('webhookOptions.companyConcurrency', webhook.companyConcurrency, 1, 10_000)
  checkInteger('webhookOptions.breakerThreshold', webhook.breakerThreshold, 1, 1_000)
  checkInteger('webhookOptions.breakerPauseMs', webhook.breakerPauseMs, 1, 24 * 60 * 60 * 1000)
  checkInteger('webhookOptions.breakerMaxPauseMs', webhook.breakerMaxPauseMs, 1, 24 * 60 * 60 * 1000)
  if ((webhook.breakerMaxPauseMs ?? WEBHOOK_DEFAULTS.breakerMaxPauseMs) < (webhook.breakerPauseMs ?? WEBHOOK_DEFAULTS.breakerPauseMs)) {
    fail('webhookOptions.breakerMaxPauseMs', 'must be at least webhookOptions.breakerPauseMs')
  }
  if (webhook.onEndpointFailing !== undefined && typeof webhook.onEndpointFailing !== 'function') fail('webhookOptions.onEndpointFailing', 'must be a function')
  if (webhook.transport !== undefined && typeof webhook.transport?.send !== 'function') fail('webhookOptions.transport', 'must have a send() method')
  if (webhook.onEndpointDisabled !== undefined && typeof webhook.onEndpointDisabled !== 'function') fail('webhookOptions.onEndpointDisabled', 'must be a function')
  for (const flag of ['allowPrivateDestinations', 'dispatcher'] as const) {
    if (webhook[flag] !== undefined && typeof webhook[flag] !== 'boolean') fail(`webhookOptions.${flag}`, 'must be a boolean')
  }
}

function checkListConcurrency(limits: unknown): void {
  if (limits === undefined || limits === false) return
  if (limits === null || typeof limits !== 'object') fail('listConcurrency', 'must be false or an object')
  const { perCompany, queuePerCompany } = limits as ListConcurrencyOptions
  checkInteger('listConcurrency.perCompany', perCompany, 1, 10_000)
  checkInteger('listConcurrency.queuePerCompany', queuePerCompany, 0, 100_000)
}

function checkMetrics(metrics: unknown): void {
  if (metrics === undefined || typeof metrics === 'boolean') return
  if (metrics === null || typeof metrics !== 'object') fail('metrics', 'must be a boolean or an object')
  const { registry, processMetrics, pool, readPool } = metrics as MetricsOptions
  const has = (value: unknown, methods: readonly string[]) => value !== null && typeof value === 'object' && methods.every((name) => name in value)
  if (registry !== undefined && !has(registry, ['registerMetric', 'metrics', 'getSingleMetric'])) fail('metrics.registry', "must be a prom-client Registry (new Registry() from 'prom-client')")
  if (processMetrics !== undefined && typeof processMetrics !== 'boolean') fail('metrics.processMetrics', 'must be a boolean')
  if (pool !== undefined && !has(pool, ['totalCount', 'idleCount', 'waitingCount'])) fail('metrics.pool', 'must be a pg Pool (totalCount, idleCount, waitingCount)')
  if (readPool !== undefined && !has(readPool, ['queued', 'running', 'threads'])) fail('metrics.readPool', "must be the SQLite adapter's readPool (queued, running, threads)")
  if (registry !== undefined) {
    const taken = ['workforce_http_requests_total', 'workforce_http_request_duration_seconds'].find((name) => registry.getSingleMetric(name) !== undefined)
    if (taken !== undefined) fail('metrics.registry', `already has ${taken}: register the plugin's metrics on a registry once (one registry per app)`)
  }
}

function checkOpenApi(openapi: unknown): void {
  if (openapi === undefined || typeof openapi === 'boolean') return
  if (openapi === null || typeof openapi !== 'object') fail('openapi', 'must be a boolean or an object')
  const { referencePage, title, description } = openapi as OpenApiOptions
  if (referencePage !== undefined && typeof referencePage !== 'boolean') fail('openapi.referencePage', 'must be a boolean')
  if (title !== undefined && (typeof title !== 'string' || title.trim() === '')) fail('openapi.title', 'must be a non-empty string')
  if (description !== undefined && typeof description !== 'string') fail('openapi.description', 'must be a string')
}

function checkRateLimit(rateLimit: unknown): void {
  if (rateLimit === undefined || rateLimit === false) return
  if (rateLimit === null || typeof rateLimit !== 'object') fail('rateLimit', 'must be false or an object')
  const { max, timeWindow, redis, failedAuth } = rateLimit as RateLimitOptions
  checkInteger('rateLimit.max', max, 1, 1_000_000_000)
  checkInteger('rateLimit.timeWindow', timeWindow, 1_000, 86_400_000)
  if (redis !== undefined && !(typeof redis === 'string' ? /^rediss?:\/\//.test(redis) : typeof (redis as { defineCommand?: unknown })?.defineCommand === 'function')) {
    fail('rateLimit.redis', 'must be an ioredis client or a redis:// URL')
  }
  if (failedAuth !== undefined) {
    if (failedAuth === null || typeof failedAuth !== 'object') fail('rateLimit.failedAuth', 'must be an object')
    checkInteger('rateLimit.failedAuth.max', failedAuth.max, 1, 1_000_000_000)
    checkInteger('rateLimit.failedAuth.timeWindow', failedAuth.timeWindow, 1_000, 86_400_000)
    checkInteger('rateLimit.failedAuth.lookups', failedAuth.lookups, 0, 1_000_000_000)
  }
}

function checkInteger(name: string, value: unknown, min: number, max: number): void {
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(name, `must be an integer from ${min} to ${max}`)
  }
}

/** The contract's resources and the host's `resources`, checked; a bad declaration is a `WorkforceOptionError` naming it. */
function resourceCatalogue(resources: unknown): ResourceCatalogue {
  if (resources !== undefined && !Array.isArray(resources)) fail('resources', 'must be an array of resource declarations (defineResource)')
  return new ResourceCatalogue(CONTRACT_RESOURCES, (resources ?? []) as unknown[])
}

function fail(option: string, problem: string, code: WorkforceOptionError['code'] = OPTION_ERROR_CODES.invalid): never {
  throw new WorkforceOptionError(code, option, problem)
}

/** The code for a required option that failed its check: absent, or present but wrong. */
function presence(value: unknown): WorkforceOptionError['code'] {
  return value === undefined || value === null ? OPTION_ERROR_CODES.missing : OPTION_ERROR_CODES.invalid
}
