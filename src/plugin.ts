import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import type { ResourceCatalogue } from './api/catalogue.js'
import { eventFeedRoutes } from './api/events-feed.js'
import { ListPages } from './api/list-pages.js'
import { ANSWER_CACHE_BYTES, AnswerCache } from './api/answer-cache.js'
import { CompanyReadLimiter } from './api/company-read-limiter.js'
import { mountRoute, type WriteContext } from './api/route-spec.js'
import { KeyVerifier } from './auth/key-verifier.js'
import { ModuleCache } from './auth/module-cache.js'
import { corridorStages, registerCorridor, type RouteTableEntry } from './corridor/index.js'
import { DEFAULT_RATE_LIMIT_MAX, DEFAULT_RATE_LIMIT_WINDOW_MS, resolveRateLimits } from './corridor/rate-limit.js'
import { UsageMeter } from './usage/usage-meter.js'
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_PURGE_BATCH,
  IDEMPOTENCY_PURGE_INTERVAL_MS,
  IDEMPOTENCY_RETENTION_MS,
  type IdempotencySettings,
} from './corridor/idempotency.js'
import { InvitationManager } from './invitations/invitation-manager.js'
import { registerRequestMetrics, resolveMetrics } from './metrics/request-metrics.js'
import type { WorkforceMetrics } from './metrics/workforce-metrics.js'
import type { Registry } from 'prom-client'
import { KeyManager } from './keys/key-manager.js'
import { checkOptions, MODULE_CACHE_TTL_MS, WEBHOOK_DEFAULTS, type WorkforceApiOptions } from './options.js'
import { systemClock, type Clock } from './ports/clock.js'
import type { IdempotencyStore } from './ports/idempotency-store.js'
import { portsOf, type WorkforcePorts } from './ports/index.js'
import type { InvalidationFeed } from './ports/invalidation-feed.js'
import type { InviteSender } from './ports/invite-sender.js'
import { registerOpenApiDocument } from './openapi/document.js'
import { registerPublicRoutes } from './openapi/public-routes.js'
import { WebhookDispatcher } from './webhooks/dispatcher.js'
import { EventPublisher } from './webhooks/event-publisher.js'
import { httpWebhookTransport } from './webhooks/http-transport.js'
import { DEFAULT_RETRY_SCHEDULE_MS } from './webhooks/retry.js'
import { SecretBox } from './webhooks/secret-box.js'
import { WebhookManager } from './webhooks/webhook-manager.js'

/** What the plugin adds to the host's Fastify instance. */
export interface WorkforceApiDecorator {
  /** Key administration: create (plaintext shown once), disable, enable, revoke, list. */
  keys: KeyManager
  /**
   * The host's side of invitations: `accept` or `decline` a pending membership once the host
   * has authenticated the invited person. Needs the `writes` option (else `unavailable`).
   */
  invitations: InvitationManager
  /** Webhook endpoints for the host's company-settings screens: create, rotate, deliveries, redeliver, recover. */
  webhooks: WebhookManager
  /** The host publishes events for changes made outside the API, inside its own transaction. */
  events: EventPublisher
  /** The resources this API serves (the contract's and the host's `resources`), with their scopes, modules and event types. */
  resources: ResourceCatalogue
  /** Every mounted API route with the corridor stages that guard it; complete once the app is ready. */
  routes: readonly RouteTableEntry[]
  /** The ports and clock the plugin was registered with, for companion plugins (`workforceAdmin`). */
  ports: Readonly<WorkforcePorts>
  clock: Clock
  /**
   * The prom-client registry our metrics are on (`metrics` option), for the host to serve or
   * merge with its own (`Registry.merge([own, app.workforceApi.metricsRegistry])`); null when
   * metrics are off.
   */
  metricsRegistry: Registry | null
  /**
   * What the host configured that its users may be told (the admin API's `GET /settings`): a
   * key's default rate budget (`null` when `rateLimit: false`) and whether webhook
   * destinations may be http and private addresses (`webhookOptions.allowPrivateDestinations`).
   */
  settings: Readonly<{ rateLimit: Readonly<{ max: number; timeWindowMs: number }> | null; allowPrivateDestinations: boolean }>
}

declare module 'fastify' {
  interface FastifyInstance {
    workforceApi: WorkforceApiDecorator
  }
}

const DEFAULT_TITLE = 'Workforce public API'

interface ApiContextOptions extends WorkforceApiOptions {
  verifier: KeyVerifier
  moduleCache: ModuleCache
  clock: Clock
  table: RouteTableEntry[]
  catalogue: ResourceCatalogue
  metering: WorkforceMetrics | undefined
}

/**
 * The API's routes in their own encapsulated context, so the prefix, the error handler,
 * the strict validator and the corridor apply to our routes only, never to the host's.
 */
const api = fp(
  async (app: FastifyInstance, options: ApiContextOptions) => {
    const { storage, writes, idempotency, verifier, clock, catalogue } = options
    // checkOptions guarantees both or neither.
    const writable = writes !== undefined && idempotency !== undefined
    const limits = options.rateLimit === false ? undefined : await resolveRateLimits(options.rateLimit ?? {}, app.log)
    if (limits !== undefined) app.addHook('onClose', () => limits.close())
    const { metering } = options
    if (metering !== undefined) registerRequestMetrics(app, metering)
    await registerCorridor(
      app,
      corridorStages({
        verifier,
        modules: options.moduleCache,
        catalogue,
        idempotency: writable ? idempotencySettings(idempotency, clock, options.idempotencyOptions) : undefined,
        rateLimit: limits === undefined || metering === undefined ? limits?.settings : { ...limits.settings, onStoreError: () => metering.rateLimitStoreErrors.inc() },
      }),
      options.table,
    )
    if (options.usage !== undefined) meterUsage(app, new UsageMeter(options.usage, clock, app.log))
    const prefix = options.prefix ?? ''
    const writeContext: WriteContext | undefined = writable
      ? { writes, clock, events: catalogue, invites: options.invites ?? loggingInviteSender(app), locationOf: (path) => `${prefix}${path}` }
      : undefined
    const reads = options.listConcurrency === false ? undefined : new CompanyReadLimiter(options.listConcurrency)
    const answerBytes = options.answerCacheBytes ?? ANSWER_CACHE_BYTES
    const answers = answerBytes === 0 ? undefined : new AnswerCache(answerBytes)
    const routes = catalogue.routes({ storage, writes: writeContext, pages: new ListPages(), ...(answers === undefined ? {} : { answers }), ...(reads === undefined ? {} : { reads }) })
    // The events feed lists what the webhook store keeps: without one there are no events.
    if (options.webhooks !== undefined) routes.push(...eventFeedRoutes({ store: options.webhooks, catalogue, modules: options.moduleCache }))
    const openapi = options.openapi ?? true
    if (openapi !== false) {
      const settings = openapi === true ? {} : openapi
      await registerOpenApiDocument(app, { prefix, routes, catalogue, title: settings.title ?? DEFAULT_TITLE, description: settings.description })
    }
    for (const route of routes) mountRoute(app, route)
    if (openapi !== false) await registerPublicRoutes(app, prefix, openapi !== true && openapi.referencePage === true)
  },
  { name: 'fastify-workforce-api-routes', fastify: '5.x', encapsulate: true },
)

/** Counts every answer to a request with a valid key (429 included) for the admin API's usage view. */
function meterUsage(app: FastifyInstance, meter: UsageMeter): void {
  app.addHook('onResponse', async (request, reply) => {
    const auth = request.workforceAuth
    if (auth !== null && auth !== undefined) meter.count(auth.companyId, auth.keyId, reply.statusCode)
  })
  app.addHook('onReady', async () => meter.start())
  app.addHook('onClose', async () => meter.stop())
}

const plugin: FastifyPluginAsync<WorkforceApiOptions> = async (app, options) => {
  const catalogue = checkOptions(options)
  const clock = options.clock ?? systemClock
  const verifier = new KeyVerifier({
    keyStore: options.keyStore,
    clock,
    cacheMax: options.keyCache?.max,
    cacheTtlMs: options.keyCache?.ttlMs,
    lastUsedThrottleMs: options.lastUsedThrottleMs,
    onTouchError: (error) => app.log.warn({ err: error }, 'workforce-api: could not record key use'),
  })
  const moduleCache = new ModuleCache(options.modules, options.moduleCacheTtlMs ?? MODULE_CACHE_TTL_MS, clock)
  followInvalidations(app, options.invalidations, verifier, moduleCache)
  const table: RouteTableEntry[] = []
  const metering = resolveMetrics(options.metrics)
  if (metering !== undefined && options.webhooks !== undefined) metering.watchBacklog(options.webhooks, clock)
  if (metering !== undefined) app.addHook('onClose', async () => metering.unregister())
  app.decorate('workforceApi', {
    keys: new KeyManager(options.keyStore, clock, (keyId) => verifier.invalidate(keyId), catalogue.scopes, options.storage),
    invitations: new InvitationManager(options.writes, clock, catalogue),
    webhooks: startWebhooks(app, options, clock, catalogue, metering),
    events: new EventPublisher(options.webhooks, clock, catalogue),
    resources: catalogue,
    routes: table,
    ports: portsOf(options),
    clock,
    metricsRegistry: metering?.registry ?? null,
    settings: {
      rateLimit:
        options.rateLimit === false
          ? null
          : { max: options.rateLimit?.max ?? DEFAULT_RATE_LIMIT_MAX, timeWindowMs: options.rateLimit?.timeWindow ?? DEFAULT_RATE_LIMIT_WINDOW_MS },
      allowPrivateDestinations: options.webhookOptions?.allowPrivateDestinations ?? false,
    },
  })
  await app.register(api, { ...options, verifier, moduleCache, clock, table, catalogue, metering, prefix: options.prefix ?? '' })
}

/**
 * The workforce public API as a Fastify plugin.
 *
 * The outer plugin is not encapsulated, so the host sees `app.workforceApi`; it mounts the
 * routes in an encapsulated child (`encapsulate: true`) under `prefix`.
 *
 * @example
 * import workforceApi from 'fastify-workforce-api'
 * import { openSqliteAdapter } from 'fastify-workforce-api/sqlite'
 *
 * const { storage, keyStore, modules } = await openSqliteAdapter({ filename: 'app.db' })
 * await app.register(workforceApi, { prefix: '/api/public', storage, keyStore, modules })
 * const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })
 */
export const workforceApi = fp(plugin, { name: 'fastify-workforce-api', fastify: '5.x' })

function idempotencySettings(store: IdempotencyStore, clock: Clock, timings: WorkforceApiOptions['idempotencyOptions'] = {}): IdempotencySettings {
  return {
    store,
    clock,
    leaseMs: timings.leaseMs ?? IDEMPOTENCY_LEASE_MS,
    retentionMs: timings.retentionMs ?? IDEMPOTENCY_RETENTION_MS,
    purgeIntervalMs: timings.purgeIntervalMs ?? IDEMPOTENCY_PURGE_INTERVAL_MS,
    purgeBatch: timings.purgeBatch ?? IDEMPOTENCY_PURGE_BATCH,
  }
}

/**
 * The webhook manager and, unless turned off for this instance, the dispatcher, which starts
 * when the app is ready and stops when it closes. Both need the store and `secretKey`.
 */
function startWebhooks(app: FastifyInstance, options: WorkforceApiOptions, clock: Clock, catalogue: ResourceCatalogue, metering: WorkforceMetrics | undefined): WebhookManager {
  const store = options.webhooks
  const settings = options.webhookOptions ?? {}
  if (store === undefined) return new WebhookManager(undefined, 'Webhooks need a webhook store: pass the "webhooks" port')
  if (settings.secretKey === undefined) {
    return new WebhookManager(undefined, 'Webhooks need webhookOptions.secretKey (32 bytes, base64) to seal signing secrets')
  }
  const box = new SecretBox(settings.secretKey)
  const policy = { allowPrivate: settings.allowPrivateDestinations ?? false }
  let dispatcher: WebhookDispatcher | undefined
  if (settings.dispatcher !== false) {
    const timeoutMs = settings.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs
    dispatcher = new WebhookDispatcher({
      store,
      box,
      clock,
      log: app.log,
      transport: settings.transport ?? httpWebhookTransport({ ...policy, timeoutMs }),
      retrySchedule: settings.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS,
      autoDisableAfterMs: settings.autoDisableAfterMs ?? WEBHOOK_DEFAULTS.autoDisableAfterMs,
      timeoutMs,
      // Longer than any attempt, so a live attempt's claim never runs out under it.
      leaseMs: settings.leaseMs ?? timeoutMs + 30_000,
      batch: WEBHOOK_DEFAULTS.batch,
      concurrency: settings.concurrency ?? WEBHOOK_DEFAULTS.concurrency,
      endpointConcurrency: settings.endpointConcurrency ?? WEBHOOK_DEFAULTS.endpointConcurrency,
      companyConcurrency: settings.companyConcurrency ?? WEBHOOK_DEFAULTS.companyConcurrency,
      slowAttemptMs: WEBHOOK_DEFAULTS.slowAttemptMs,
      breaker: {
        threshold: settings.breakerThreshold ?? WEBHOOK_DEFAULTS.breakerThreshold,
        pauseMs: settings.breakerPauseMs ?? WEBHOOK_DEFAULTS.breakerPauseMs,
        maxPauseMs: settings.breakerMaxPauseMs ?? WEBHOOK_DEFAULTS.breakerMaxPauseMs,
      },
      pollIntervalMs: settings.pollIntervalMs ?? WEBHOOK_DEFAULTS.pollIntervalMs,
      retentionMs: settings.retentionMs ?? WEBHOOK_DEFAULTS.retentionMs,
      purgeIntervalMs: WEBHOOK_DEFAULTS.purgeIntervalMs,
      purgeBatch: WEBHOOK_DEFAULTS.purgeBatch,
      shutdownGraceMs: WEBHOOK_DEFAULTS.shutdownGraceMs,
      ...(settings.onEndpointDisabled === undefined ? {} : { onEndpointDisabled: settings.onEndpointDisabled }),
      ...(settings.onEndpointFailing === undefined ? {} : { onEndpointFailing: settings.onEndpointFailing }),
      ...(metering === undefined ? {} : { observeDelivery: (outcome, payload, at) => metering.observeDelivery(outcome, payload, at) }),
    })
    const running = dispatcher
    app.addHook('onReady', () => running.start())
    app.addHook('onClose', () => running.stop())
  }
  return new WebhookManager({ store, box, clock, policy, events: catalogue, wake: () => dispatcher?.wake() })
}

/** The default `InviteSender`: the host sends email; until it says how, we log the invitation. */
function loggingInviteSender(app: FastifyInstance): InviteSender {
  return {
    async sendInvite(invitation) {
      app.log.info({ invitation }, 'workforce-api: invitation to send (no InviteSender configured)')
    },
  }
}

/**
 * Follows the host's invalidation feed, if it has one, while the app runs: a key or module
 * changed anywhere is forgotten here at once, and everything is forgotten after a gap in the
 * feed (messages may have been missed). Without a feed, the cache TTLs bound staleness.
 */
function followInvalidations(app: FastifyInstance, feed: InvalidationFeed | undefined, verifier: KeyVerifier, modules: ModuleCache): void {
  if (feed === undefined) return
  let stop: (() => Promise<void>) | undefined
  app.addHook('onReady', async () => {
    stop = await feed.subscribe(
      (change) => (change.kind === 'key' ? verifier.invalidate(change.keyId) : modules.invalidate(change.companyId, change.module)),
      () => {
        verifier.clear()
        modules.clear()
      },
    )
  })
  app.addHook('onClose', async () => stop?.())
}
