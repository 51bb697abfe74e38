import createError from '@fastify/error'

/**
 * The error catalogue. Every non-2xx response of the API is one of these codes,
 * rendered by the encapsulated error handler as
 * `{"error":{"code","message","status","details?"}}` (spec section 7).
 */

/** One offending input: `field` names the query parameter, path parameter, header or body field. */
export interface ErrorDetail {
  field: string
  message: string
}

/** The byte-identical message of every credential failure (spec 5.4). */
export const UNAUTHORIZED_MESSAGE = 'Invalid or missing API key'

export const UnauthorizedError = createError('unauthorized', UNAUTHORIZED_MESSAGE, 401)
export const ForbiddenError = createError('forbidden', '%s', 403)
export const NotFoundError = createError('not_found', '%s', 404)
export const ConflictError = createError('conflict', '%s', 409)

export class ValidationError extends Error {
  readonly code = 'validation_error'
  readonly statusCode = 422
  constructor(readonly details: ErrorDetail[]) {
    super('The request is invalid')
    this.name = 'ValidationError'
  }
}

/** Maps an HTTP status of a Fastify or unknown error to the API's error code. */
export const STATUS_CODES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_error',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'service_unavailable',
}
