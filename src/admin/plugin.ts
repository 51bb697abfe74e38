import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { handleError, handleNotFound } from '../corridor/render.js'
import { setResponseHeaders } from '../corridor/response-headers.js'
import { createValidatorCompiler } from '../corridor/validate.js'
import { OPTION_ERROR_CODES, refusalAsApiError, WorkforceOptionError, WorkforceRefusal } from '../errors.js'
import { adminContext } from './admin-context.js'
import { registerAdminDocument } from './document.js'
import { checkAdminOptions, type WorkforceAdminOptions } from './options.js'
import { registerPortal } from './portal.js'
import { registerAdminRoutes } from './routes/index.js'
import { adminStages, registerAdminStages } from './stages.js'

/**
 * The admin context's error handler: the managers' refusals (`WorkforceRefusal`: keys,
 * webhooks) carry their catalogue code (`src/errors.ts`, `REFUSAL_CODES`), so they render like
 * any error of ours; the rest is the public API's rendering.
 */
function handleAdminError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  handleError((error instanceof WorkforceRefusal ? refusalAsApiError(error) : error) as FastifyError, request, reply)
  // The admin API's session is the host's, not a bearer key.
  if (reply.statusCode === 401) reply.removeHeader('www-authenticate')
}

const routes = fp(
  async (app: FastifyInstance, options: WorkforceAdminOptions) => {
    const api = app.workforceApi
    app.setValidatorCompiler(createValidatorCompiler() as never)
    app.setErrorHandler(handleAdminError)
    app.setNotFoundHandler(handleNotFound)
    app.decorateRequest('adminSession', null)
    app.decorateRequest('adminAudit', null)
    app.decorateRequest('idempotency', null)
    app.addHook('onRequest', setResponseHeaders)
    await registerAdminDocument(app, options.prefix ?? '')
    if (options.portal === true) await registerPortal(app)
    await app.register(async (guarded) => {
      registerAdminStages(guarded, adminStages(options, api))
      registerAdminRoutes(guarded, adminContext(api))
    })
  },
  { name: 'fastify-workforce-admin-routes', fastify: '5.x', encapsulate: true },
)

const plugin: FastifyPluginAsync<WorkforceAdminOptions> = async (app, options) => {
  checkAdminOptions(options)
  if (!app.hasDecorator('workforceApi')) {
    throw new WorkforceOptionError(OPTION_ERROR_CODES.missing, 'workforceApi', '(workforceAdmin) must be registered first, on the same instance: the admin API uses its ports')
  }
  const { ports } = app.workforceApi
  if (ports.audit === undefined) {
    throw new WorkforceOptionError(OPTION_ERROR_CODES.missing, 'audit', '(workforceAdmin) needs the audit port on workforceApi: every admin change is recorded')
  }
  if (ports.idempotency === undefined) {
    throw new WorkforceOptionError(OPTION_ERROR_CODES.missing, 'idempotency', '(workforceAdmin) needs the idempotency port on workforceApi: admin changes accept an Idempotency-Key')
  }
  await app.register(routes, { ...options, prefix: options.prefix ?? '' })
}

/**
 * The admin API (docs/admin-api.md) and, with `portal: true`, the integrations portal: the
 * company-settings screens for API keys, webhook endpoints, deliveries and the audit trail.
 * Register it after `workforceApi`, under a prefix of the host's settings area.
 *
 * @example
 * await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter) })
 * await app.register(workforceAdmin, {
 *   prefix: '/settings/integrations/api',
 *   authorize: async (request) => mySession(request), // { companyId, actor: { id, name } } or null
 *   portal: true,
 * })
 */
export const workforceAdmin = fp(plugin, { name: 'fastify-workforce-admin', fastify: '5.x', dependencies: ['fastify-workforce-api'] })
