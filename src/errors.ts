import createError from '@fastify/error'
import { Type, type Static } from '@sinclair/typebox'

/**
 * The error catalogue. Every non-2xx response of the API is one of these codes,
 * rendered by the corridor's error handler (`src/corridor/render.ts`) as
 * `{"error":{"code","message","status","details?"}}` (spec section 7).
 */

/** One offending input: `field` names the query parameter, path parameter, header or body field. */
export const ErrorDetail = Type.Object({ field: Type.String(), message: Type.String() })
export type ErrorDetail = Static<typeof ErrorDetail>

/** The spec's error envelope (section 7), as a schema so every error response can be documented. */
export const ErrorEnvelope = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    status: Type.Integer(),
    /** Present on `validation_error` only: one entry per offending input. */
    details: Type.Optional(Type.Array(ErrorDetail)),
  }),
})
export type ErrorEnvelope = Static<typeof ErrorEnvelope>

export function errorEnvelope(code: string, message: string, status: number, details?: ErrorDetail[]): ErrorEnvelope {
  return { error: details === undefined ? { code, message, status } : { code, message, status, details } }
}

/** The byte-identical message of every credential failure (spec 5.4). */
export const UNAUTHORIZED_MESSAGE = 'Invalid or missing API key'

export const UnauthorizedError = createError('unauthorized', UNAUTHORIZED_MESSAGE, 401)
export const ForbiddenError = createError('forbidden', '%s', 403)
export const NotFoundError = createError('not_found', '%s', 404)
export const ConflictError = createError('conflict', '%s', 409)
/** The events feed's cursor is older than the retained history: the client must sync again from scratch (docs/api.md). */
export class CursorExpiredError extends Error {
  readonly code = 'cursor_expired'
  readonly statusCode = 410
  constructor(message: string) {
    super(message)
    this.name = 'CursorExpiredError'
  }
}
/** Spec 7: 429 with `Retry-After`; the code is ours (the spec leaves it open). */
export const RateLimitedError = createError('rate_limited', '%s', 429)

export class ValidationError extends Error {
  readonly code = 'validation_error'
  readonly statusCode = 422
  constructor(readonly details: ErrorDetail[]) {
    super('The request is invalid')
    this.name = 'ValidationError'
  }
}

/** The codes our own errors carry; any other error is named by its status (`STATUS_CODES`). */
export const API_ERROR_CODES: ReadonlySet<string> = new Set(['unauthorized', 'forbidden', 'not_found', 'conflict', 'cursor_expired', 'rate_limited', 'validation_error'])

/** Maps an HTTP status of a Fastify or unknown error to the API's error code. */
export const STATUS_CODES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'validation_error',
  429: 'rate_limited',
  431: 'headers_too_large',
  500: 'internal_error',
  503: 'service_unavailable',
}

/**
 * Stable codes of the errors `app.register(workforceApi, …)` rejects `ready()` with, as
 * Fastify's own `FST_ERR_*`: hosts and tests match the code, the message names the option.
 */
export const OPTION_ERROR_CODES = {
  /** A required option is absent or null. */
  missing: 'WFA_ERR_OPTION_MISSING',
  /** An option is present but of the wrong shape or out of range. */
  invalid: 'WFA_ERR_OPTION_INVALID',
  /** An option the plugin does not know: a typo such as `prefx`, or one meant for another plugin. */
  unknown: 'WFA_ERR_OPTION_UNKNOWN',
} as const

/** A wiring mistake found at registration. `option` is its dotted path, e.g. `keyCache.ttlMs`. */
export class WorkforceOptionError extends TypeError {
  constructor(
    readonly code: (typeof OPTION_ERROR_CODES)[keyof typeof OPTION_ERROR_CODES],
    readonly option: string,
    problem: string,
  ) {
    super(`fastify-workforce-api: option "${option}" ${problem}`)
    this.name = 'WorkforceOptionError'
  }
}

/** The status each code of ours answers with: the catalogue's codes are one status each. */
export const API_ERROR_STATUS = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  validation_error: 422,
  rate_limited: 429,
} as const
export type ApiErrorCode = keyof typeof API_ERROR_STATUS

/**
 * Why a manager of `app.workforceApi` refused (keys, webhooks, invitations, events), and the
 * code an HTTP route (the admin API) answers that refusal with. One table for every manager:
 * a new reason is one line here, not a branch in each error handler.
 */
export const REFUSAL_CODES = {
  /** Unknown id (or another company's, which reads the same). */
  not_found: 'not_found',
  /** Bad input the route's schema could not see (a scope name, a URL, an instant). */
  invalid_input: 'validation_error',
  /** A step the lifecycle forbids in the current state. */
  invalid_transition: 'conflict',
  /** Invitations: the membership is accepted, there is nothing pending. */
  not_pending: 'conflict',
  /** Invitations: the person is already a member under another user id. */
  already_member: 'conflict',
  /** The port behind the manager is not configured: there is nothing to find. */
  unavailable: 'not_found',
} as const satisfies Record<string, ApiErrorCode>
export type RefusalReason = keyof typeof REFUSAL_CODES

/**
 * The base of the managers' refusals (`KeyManagementError`, `WebhookAdminError`,
 * `InvitationError`, `EventPublishError`). Hosts and tests match on `reason`; an HTTP route
 * renders `apiCode` with its status (`API_ERROR_STATUS`) through `refusalAsApiError`. The code
 * is a getter, not a `code`/`statusCode` field, so Fastify's own error handler in a host's
 * route treats these errors as it always did.
 */
export abstract class WorkforceRefusal<R extends RefusalReason = RefusalReason> extends Error {
  constructor(
    message: string,
    readonly reason: R,
  ) {
    super(message)
  }

  /** The catalogue code an HTTP route answers this refusal with. */
  get apiCode(): ApiErrorCode {
    return REFUSAL_CODES[this.reason]
  }

  /** What an HTTP client may read: the message, unless it speaks of the host's configuration. */
  get publicMessage(): string {
    return this.message
  }
}

/**
 * The catalogue error an HTTP route throws for `refusal`: a 422 `validation_error` naming the
 * body, or the code's own error (404 `not_found`, 409 `conflict`) with the public message.
 */
export function refusalAsApiError(refusal: WorkforceRefusal): Error {
  const code = refusal.apiCode
  if (code === 'validation_error') return new ValidationError([{ field: 'body', message: refusal.publicMessage }])
  const RefusalError = REFUSAL_ERRORS[code]
  return new RefusalError(refusal.publicMessage)
}

const REFUSAL_ERRORS: Readonly<Record<Exclude<ApiErrorCode, 'validation_error'>, new (message: string) => Error>> = {
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  conflict: ConflictError,
  rate_limited: RateLimitedError,
}
