import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { API_ERROR_CODES, errorEnvelope, STATUS_CODES, ValidationError } from '../errors.js'
import { StatementTimeout, StorageUnavailable, WriteConflict } from '../ports/errors.js'
import { RESPONSE_HEADERS } from './response-headers.js'
import type { StageResponses } from './stage.js'

/**
 * What the error handler answers for a failure in any stage or route — the key lookup, before
 * any header is stamped, included. A `WriteConflict` only a write can meet.
 */
export const RENDER_RESPONSES: StageResponses = {
  stage: 'render',
  anywhere: true,
  responses: [
    // The events feed checks scopes and modules itself, for the event types a request names.
    { status: 403, code: 'forbidden', when: (route) => route.scope === undefined && route.expiringCursor === true },
    { status: 409, code: 'conflict', when: (route) => route.method !== 'GET' },
    { status: 410, code: 'cursor_expired', when: (route) => route.expiringCursor === true },
    { status: 500, code: 'internal_error' },
    { status: 503, code: 'service_unavailable', headers: ['Retry-After'] },
    { status: 504, code: 'query_timeout' },
  ],
}

/**
 * Errors of Fastify's router, before the API runs (`workforceFrameworkErrors` below renders
 * them): a URL that cannot be decoded, on any route; a path parameter past `maxParamLength`.
 */
export const FRAMEWORK_ERRORS_RESPONSES: StageResponses = {
  stage: 'router',
  responses: [
    { status: 400, code: 'bad_request' },
    { status: 414, code: 'uri_too_long', when: (route) => route.schema.params !== undefined },
  ],
}

/**
 * Renders every error of our routes in the spec's envelope, Fastify's own included
 * (malformed JSON, body too large, unsupported media type). A 5xx never shows internals:
 * the client gets a generic message and the request id; the log gets the error. A database
 * that cannot answer (`StorageUnavailable`) is a 503 with `Retry-After`, not a 500; a statement
 * the database stopped for running past its own bound (`StatementTimeout`) is a 504
 * `query_timeout` without `Retry-After`, neither an outage (503) nor a bug (500); and a
 * `WriteConflict` no route turned into its own 409 (an adapter's unique index the plugin did
 * not foresee) is a 409 `conflict`, not a 500. All are recognised from any copy of the package
 * (src/ports/errors.ts).
 */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error instanceof ValidationError) {
    reply.code(422).send(errorEnvelope(error.code, error.message, 422, error.details))
    return
  }
  if (error instanceof StorageUnavailable) {
    request.log.warn({ err: error, reqId: request.id }, 'workforce-api: storage unavailable')
    reply
      .code(503)
      .header('retry-after', String(error.retryAfterSeconds))
      .send(errorEnvelope('service_unavailable', `The service is temporarily unavailable; retry after ${error.retryAfterSeconds} s (request ${request.id})`, 503))
    return
  }
  if (error instanceof StatementTimeout) {
    // No Retry-After: the same request would cost the same again; the server is up.
    request.log.warn({ err: error, reqId: request.id }, 'workforce-api: statement timeout')
    reply.code(504).send(errorEnvelope('query_timeout', queryTimeoutMessage(request.id), 504))
    return
  }
  if (error instanceof WriteConflict) {
    request.log.info({ err: error, reqId: request.id }, 'workforce-api: write conflict')
    reply.code(409).send(errorEnvelope('conflict', 'The request conflicts with the current state of the resource', 409))
    return
  }
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500
  if (status >= 500) {
    request.log.error({ err: error, reqId: request.id }, 'workforce-api: request failed')
    reply.code(status).send(errorEnvelope(STATUS_CODES[status] ?? 'internal_error', `Internal server error (request ${request.id})`, status))
    return
  }
  if (status === 401) reply.header('www-authenticate', 'Bearer')
  const code = API_ERROR_CODES.has(error.code) ? error.code : (STATUS_CODES[status] ?? 'bad_request')
  reply.code(status).send(errorEnvelope(code, error.message, status))
}

/** The client's message for a `StatementTimeout`: what happened, that it is not an outage, and what helps. */
export function queryTimeoutMessage(requestId: string): string {
  return (
    `This request took longer than the database allows for one statement and was stopped (request ${requestId}); ` +
    'it is not an outage: a narrower filter answers sooner'
  )
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply): void {
  reply.code(404).send(errorEnvelope('not_found', `No route ${request.method} ${request.url.split('?')[0]}`, 404))
}

/**
 * For the host's `Fastify({ frameworkErrors })`: errors Fastify raises before any route or
 * plugin runs (a malformed percent-encoded URL) in the same envelope. A plugin cannot set
 * this option; the CLI server and the example do.
 *
 * @example
 * const app = Fastify({ frameworkErrors: workforceFrameworkErrors })
 */
export function workforceFrameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400
  // Raised before any hook runs, so the headers every API response carries are set here too.
  reply.code(status).headers(RESPONSE_HEADERS).send(errorEnvelope(STATUS_CODES[status] ?? 'bad_request', error.message, status))
}
