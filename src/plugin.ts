import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { LRUCache } from 'lru-cache'
import { presentedKey } from './auth/api-key.js'
import { KeyVerifier, type AuthenticatedKey } from './auth/key-verifier.js'
import { ForbiddenError, UnauthorizedError } from './errors.js'
import { handleError, handleNotFound } from './http/error-handler.js'
import { withHook } from './http/route-hooks.js'
import { createValidatorCompiler } from './http/validation.js'
import { KeyManager } from './keys/key-manager.js'
import { checkOptions, MODULE_CACHE_TTL_MS, type WorkforceApiOptions } from './options.js'
import { systemClock, type Clock } from './ports/clock.js'
import type { ModuleRegistry, PlatformModule } from './ports/module-registry.js'
import { absences } from './resources/absences.js'
import { registerCompanyRoute } from './resources/company.js'
import { employees } from './resources/employees.js'
import { expenses } from './resources/expenses.js'
import { projects } from './resources/projects.js'
import { registerReadRoutes, type RouteAccess } from './resources/read-routes.js'
import { roles } from './resources/roles.js'
import { shifts } from './resources/shifts.js'
import { todos } from './resources/todos.js'
import { users } from './resources/users.js'
import { SCOPE_MODULES, type Scope } from './scopes.js'
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_PURGE_BATCH,
  IDEMPOTENCY_PURGE_INTERVAL_MS,
  IDEMPOTENCY_RETENTION_MS,
  registerIdempotency,
} from './idempotency/idempotency.js'
import type { InviteSender } from './ports/invite-sender.js'
import { registerTodoWrites } from './writes/todos.js'
import type { WriteRouteContext } from './writes/commit-write.js'
import { registerUserWrites } from './writes/users.js'

/** What the plugin adds to the host's Fastify instance. */
export interface WorkforceApiDecorator {
  /** Key administration: create (plaintext shown once), disable, enable, revoke, list. */
  keys: KeyManager
}

declare module 'fastify' {
  interface FastifyInstance {
    workforceApi: WorkforceApiDecorator
  }
  interface FastifyRequest {
    /** The verified key of the request; set by the auth hook on every API route. */
    workforceAuth: AuthenticatedKey | null
  }
}

/**
 * The API's routes in their own encapsulated context, so the prefix, the error handler,
 * the strict validator and the auth hook apply to our routes only, never to the host's.
 */
const routes = fp(
  async (app: FastifyInstance, options: WorkforceApiOptions & { verifier: KeyVerifier; clock: Clock }) => {
    const { storage, verifier, clock } = options
    const moduleActive = cachedModuleCheck(options.modules, options.moduleCacheTtlMs ?? MODULE_CACHE_TTL_MS, clock)

    app.setValidatorCompiler(createValidatorCompiler())
    app.setErrorHandler(handleError)
    app.setNotFoundHandler(handleNotFound)
    app.decorateRequest('workforceAuth', null)
    // Bodies are JSON only: any other media type is a 415, not a string body that fails later.
    app.removeContentTypeParser('text/plain')

    // HTTP → auth (key → company, scopes) → scope/module check → handler (style.md).
    // Each route declares its scope once, in `config`; routes without one (our 404) are open.
    const authenticate = (scope: Scope) => async (request: FastifyRequest) => {
      const auth = await verifier.verify(presentedKey(request.headers))
      if (auth === null) throw new UnauthorizedError()
      if (!auth.scopes.has(scope)) throw new ForbiddenError(`This API key lacks the ${scope} scope`)
      const module = SCOPE_MODULES[scope]
      if (!(await moduleActive(auth.companyId, module))) {
        throw new ForbiddenError(`The ${module} module is not active for this company`)
      }
      request.workforceAuth = auth
    }
    app.addHook('onRoute', (route) => {
      const scope = (route.config as Partial<RouteAccess> | undefined)?.scope
      if (scope !== undefined) route.onRequest = withHook(route.onRequest, authenticate(scope), 'first')
    })

    const companyOf = (request: FastifyRequest) => (request.workforceAuth as AuthenticatedKey).companyId
    registerReadRoutes(app, storage, companyOf, users)
    registerReadRoutes(app, storage, companyOf, employees)
    registerReadRoutes(app, storage, companyOf, roles)
    registerCompanyRoute(app, storage, companyOf)
    registerReadRoutes(app, storage, companyOf, projects)
    registerReadRoutes(app, storage, companyOf, shifts)
    registerReadRoutes(app, storage, companyOf, absences)
    registerReadRoutes(app, storage, companyOf, expenses)
    registerReadRoutes(app, storage, companyOf, todos)

    if (options.writes !== undefined && options.idempotency !== undefined) {
      const timings = options.idempotencyOptions ?? {}
      // After auth (onRequest) and before validation: see registerIdempotency.
      registerIdempotency(app, {
        store: options.idempotency,
        clock,
        leaseMs: timings.leaseMs ?? IDEMPOTENCY_LEASE_MS,
        retentionMs: timings.retentionMs ?? IDEMPOTENCY_RETENTION_MS,
        purgeIntervalMs: timings.purgeIntervalMs ?? IDEMPOTENCY_PURGE_INTERVAL_MS,
        purgeBatch: timings.purgeBatch ?? IDEMPOTENCY_PURGE_BATCH,
      })
      const prefix = options.prefix ?? ''
      const context: WriteRouteContext = { writes: options.writes, clock, companyOf, locationOf: (path) => `${prefix}${path}` }
      registerUserWrites(app, context, options.invites ?? loggingInviteSender(app))
      registerTodoWrites(app, context)
    }
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
  app.decorate('workforceApi', { keys: new KeyManager(options.keyStore, clock, (keyId) => verifier.invalidate(keyId)) })
  await app.register(routes, { ...options, verifier, clock, prefix: options.prefix ?? '' })
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

/** The default `InviteSender`: the host sends email; until it says how, we log the invitation. */
function loggingInviteSender(app: FastifyInstance): InviteSender {
  return {
    async sendInvite(invitation) {
      app.log.info({ invitation }, 'workforce-api: invitation to send (no InviteSender configured)')
    },
  }
}

function cachedModuleCheck(registry: ModuleRegistry, ttlMs: number, clock: Clock) {
  if (ttlMs === 0) return (companyId: number, module: PlatformModule) => registry.isActive(companyId, module)
  const cache = new LRUCache<string, boolean>({ max: 10_000, ttl: ttlMs, perf: { now: () => clock.now() }, ttlResolution: 0 })
  return async (companyId: number, module: PlatformModule) => {
    const key = `${companyId}:${module}`
    const hit = cache.get(key)
    if (hit !== undefined) return hit
    const active = await registry.isActive(companyId, module)
    cache.set(key, active)
    return active
  }
}
