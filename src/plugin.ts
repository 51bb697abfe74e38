import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { apiRoutes } from './api/index.js'
import { mountRoute, type WriteContext } from './api/route-spec.js'
import { KeyVerifier } from './auth/key-verifier.js'
import { ModuleCache } from './auth/module-cache.js'
import { corridorStages, registerCorridor, type RouteTableEntry } from './corridor/index.js'
import { resolveRateLimits } from './corridor/rate-limit.js'
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_PURGE_BATCH,
  IDEMPOTENCY_PURGE_INTERVAL_MS,
  IDEMPOTENCY_RETENTION_MS,
  type IdempotencySettings,
} from './corridor/idempotency.js'
import { InvitationManager } from './invitations/invitation-manager.js'
import { KeyManager } from './keys/key-manager.js'
import { checkOptions, MODULE_CACHE_TTL_MS, type WorkforceApiOptions } from './options.js'
import { systemClock, type Clock } from './ports/clock.js'
import type { IdempotencyStore } from './ports/idempotency-store.js'
import type { InvalidationFeed } from './ports/invalidation-feed.js'
import type { InviteSender } from './ports/invite-sender.js'

/** What the plugin adds to the host's Fastify instance. */
export interface WorkforceApiDecorator {
  /** Key administration: create (plaintext shown once), disable, enable, revoke, list. */
  keys: KeyManager
  /**
   * The host's side of invitations: `accept` or `decline` a pending membership once the host
   * has authenticated the invited person. Needs the `writes` option (else `unavailable`).
   */
  invitations: InvitationManager
  /** Every mounted API route with the corridor stages that guard it; complete once the app is ready. */
  routes: readonly RouteTableEntry[]
}

declare module 'fastify' {
  interface FastifyInstance {
    workforceApi: WorkforceApiDecorator
  }
}

interface ApiContextOptions extends WorkforceApiOptions {
  verifier: KeyVerifier
  moduleCache: ModuleCache
  clock: Clock
  table: RouteTableEntry[]
}

/**
 * The API's routes in their own encapsulated context, so the prefix, the error handler,
 * the strict validator and the corridor apply to our routes only, never to the host's.
 */
const api = fp(
  async (app: FastifyInstance, options: ApiContextOptions) => {
    const { storage, writes, idempotency, verifier, clock } = options
    // checkOptions guarantees both or neither.
    const writable = writes !== undefined && idempotency !== undefined
    const limits = options.rateLimit === false ? undefined : await resolveRateLimits(options.rateLimit ?? {}, app.log)
    if (limits !== undefined) app.addHook('onClose', () => limits.close())
    await registerCorridor(
      app,
      corridorStages({
        verifier,
        modules: options.moduleCache,
        idempotency: writable ? idempotencySettings(idempotency, clock, options.idempotencyOptions) : undefined,
        rateLimit: limits?.settings,
      }),
      options.table,
    )
    const prefix = options.prefix ?? ''
    const writeContext: WriteContext | undefined = writable
      ? { writes, clock, invites: options.invites ?? loggingInviteSender(app), locationOf: (path) => `${prefix}${path}` }
      : undefined
    for (const route of apiRoutes({ storage, writes: writeContext })) mountRoute(app, route)
  },
  { name: 'fastify-workforce-api-routes', fastify: '5.x', encapsulate: true },
)

const plugin: FastifyPluginAsync<WorkforceApiOptions> = async (app, options) => {
  checkOptions(options)
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
  app.decorate('workforceApi', {
    keys: new KeyManager(options.keyStore, clock, (keyId) => verifier.invalidate(keyId)),
    invitations: new InvitationManager(options.writes, clock),
    routes: table,
  })
  await app.register(api, { ...options, verifier, moduleCache, clock, table, prefix: options.prefix ?? '' })
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
