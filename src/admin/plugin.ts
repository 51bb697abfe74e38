import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { handleError, handleNotFound } from '../corridor/render.js'
import { setResponseHeaders } from '../corridor/response-headers.js'
import { createValidatorCompiler } from '../corridor/validate.js'
import { errorEnvelope, OPTION_ERROR_CODES, ValidationError, WorkforceOptionError } from '../errors.js'
import { KeyManagementError } from '../keys/key-manager.js'
import { WebhookAdminError } from '../webhooks/webhook-manager.js'
import { registerAdminDocument } from './document.js'
import { adminIdempotency, authorizeWith, refuseCrossSite } from './guard.js'
import { checkAdminOptions, type WorkforceAdminOptions } from './options.js'
import { registerPortal } from './portal.js'
import { registerAdminRoutes } from './routes.js'

/**
 * Refusals of the key and webhook managers in the API's envelope: unknown → 404, a lifecycle
 * step that is not allowed → 409, bad input → 422, webhooks not configured → 404.
 */
function handleAdminError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error instanceof KeyManagementError || error instanceof WebhookAdminError) {
    const status = { not_found: 404, invalid_transition: 409, invalid_input: 422, unavailable: 404 }[error.reason]
    if (status === 422) {
      handleError(new ValidationError([{ field: 'body', message: error.message }]) as unknown as FastifyError, request, reply)
      return
    }
    const code = status === 409 ? 'conflict' : 'not_found'
    reply.code(status).send(errorEnvelope(code, error.reason === 'unavailable' ? 'Webhooks are not set up for this API' : error.message, status))
    return
  }
  handleError(error, request, reply)
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
      const idempotency = adminIdempotency(api.ports.idempotency as NonNullable<typeof api.ports.idempotency>, api.clock)
      guarded.addHook('onRequest', authorizeWith(options.authorize))
      guarded.addHook('onRequest', refuseCrossSite(options.csrf))
      guarded.addHook('preValidation', idempotency.claim)
      guarded.addHook('onSend', idempotency.record)
      guarded.addHook('onResponse', idempotency.stop)
      const onAudit = options.onAudit
      if (onAudit !== undefined) {
        guarded.addHook('onResponse', async (request, reply) => {
          if (reply.statusCode >= 300 || request.adminAudit === null) return
          for (const entry of request.adminAudit) {
            try {
              await onAudit(structuredClone(entry))
            } catch (error) {
              request.log.warn({ err: error, reqId: request.id }, 'workforce-admin: onAudit failed')
            }
          }
        })
      }
      registerAdminRoutes(guarded, api)
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
