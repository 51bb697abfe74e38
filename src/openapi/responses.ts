import type { RouteSpec } from '../api/route-spec.js'
import { queryTimeoutMessage } from '../corridor/render.js'
import { errorEnvelope, UNAUTHORIZED_MESSAGE } from '../errors.js'

/**
 * What the reference document says about responses beyond each route's success body: the
 * headers the corridor sets, and which error statuses a route can give. Every error is the
 * spec's envelope (section 7); the components below name each status once, with an example,
 * and operations point at them.
 */

export interface HeaderObject {
  /** The header's name on the wire; the key of `HEADERS` is its name in `components.headers`. */
  name: string
  description: string
  required?: boolean
  schema: Record<string, unknown>
}

const Integer = { type: 'integer', minimum: 0 }

/** Response headers, by the name the document uses in `components.headers`. */
export const HEADERS: Record<string, HeaderObject> = {
  'X-RateLimit-Limit': {
    name: 'X-RateLimit-Limit',
    description: "Requests this API key may make per window (the key's own limit, or the default of 600 per 60 s). Sent on every response once the key is known, unless the host turned rate limiting off.",
    schema: Integer,
  },
  'X-RateLimit-Remaining': { name: 'X-RateLimit-Remaining', description: 'Requests left in the current window.', schema: Integer },
  'X-RateLimit-Reset': { name: 'X-RateLimit-Reset', description: 'Seconds until the current window ends and the budget is full again.', schema: Integer },
  'Retry-After': { name: 'Retry-After', description: 'Seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 1 } },
  'Retry-After-In-Flight': {
    name: 'Retry-After',
    description: 'Present when another request with the same `Idempotency-Key` is still in flight: seconds to wait before retrying with that key.',
    schema: { type: 'integer', minimum: 1 },
  },
  'Idempotent-Replay': {
    name: 'Idempotent-Replay',
    description: 'Present, with the value `true`, when this is the stored response of an earlier request with the same `Idempotency-Key`, replayed verbatim.',
    schema: { type: 'string', enum: ['true'] },
  },
  Location: { name: 'Location', description: 'The path of the created resource.', required: true, schema: { type: 'string' } },
  'WWW-Authenticate': { name: 'WWW-Authenticate', description: 'Always `Bearer`.', required: true, schema: { type: 'string', enum: ['Bearer'] } },
}

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const

export interface ErrorResponse {
  name: string
  description: string
  code: string
  example: string
  /** Keys of `HEADERS`. */
  headers: readonly string[]
}

/** Every error status the API's routes give, as a reusable `components.responses` entry. */
export const ERROR_RESPONSES: Record<number, ErrorResponse> = {
  400: {
    name: 'BadRequest',
    description:
      "The request is malformed: the body of a change is not valid JSON, or the URL cannot be decoded (a broken percent-encoding such as `%zz`). Fastify's router refuses such a URL before the API runs; it answers in this envelope when the server uses `workforceServerOptions()` (as `workforce-api serve` does), which also refuses an HTTP/1.1 request without `Host` here.",
    code: 'bad_request',
    example: 'Body is not valid JSON but content-type is set to \'application/json\'',
    headers: [...RATE_LIMIT_HEADERS],
  },
  401: {
    name: 'Unauthorized',
    description: 'The API key is missing, malformed, unknown, revoked or expired. Every credential failure gets this same response: it never says which.',
    code: 'unauthorized',
    example: UNAUTHORIZED_MESSAGE,
    headers: ['WWW-Authenticate'],
  },
  403: {
    name: 'Forbidden',
    description: "The key is valid but lacks this operation's scope, or the scope's platform module is not active for your company.",
    code: 'forbidden',
    example: 'This API key lacks the scope todos:write',
    headers: [...RATE_LIMIT_HEADERS],
  },
  404: {
    name: 'NotFound',
    description: 'No record with this id exists in your company. Records of other companies are never visible: they are not found either.',
    code: 'not_found',
    example: 'Resource not found',
    headers: [...RATE_LIMIT_HEADERS, 'Idempotent-Replay'],
  },
  409: {
    name: 'Conflict',
    description:
      'A request with the same `Idempotency-Key` is still in flight (wait `Retry-After` and retry with the same key), or the change conflicts with the current state (for example, the user already belongs to your company).',
    code: 'conflict',
    example: 'A request with this Idempotency-Key is still in flight; retry shortly',
    headers: [...RATE_LIMIT_HEADERS, 'Idempotent-Replay', 'Retry-After-In-Flight'],
  },
  413: {
    name: 'PayloadTooLarge',
    description: 'The body is larger than 256 KiB.',
    code: 'payload_too_large',
    example: 'Request body is too large',
    headers: [...RATE_LIMIT_HEADERS],
  },
  414: {
    name: 'UriTooLong',
    description:
      "A path parameter is longer than the server's `maxParamLength` (Fastify's default: 100 characters); no id is. Fastify's router refuses it before the API runs; it answers in this envelope when the server uses `workforceServerOptions()` (as `workforce-api serve` does).",
    code: 'uri_too_long',
    example: "'/api/public/v1/todos/1111111111…' is exceeding the max param length",
    headers: [],
  },
  415: {
    name: 'UnsupportedMediaType',
    description: 'The body is not `application/json`.',
    code: 'unsupported_media_type',
    example: "Unsupported Media Type: text/plain",
    headers: [...RATE_LIMIT_HEADERS],
  },
  422: {
    name: 'ValidationFailed',
    description: 'A query parameter, path parameter, header or body field is invalid. `details` lists each offending input by name.',
    code: 'validation_error',
    example: 'The request is invalid',
    headers: [...RATE_LIMIT_HEADERS, 'Idempotent-Replay'],
  },
  429: {
    name: 'RateLimited',
    description:
      "This API key spent its request budget for the window, or the request failed authentication from an address that made too many failed authentications (a valid key is still served from it). Wait `Retry-After` seconds.",
    code: 'rate_limited',
    example: 'Rate limit of 600 requests per 60 s exceeded for this API key; retry after 12 seconds',
    headers: [...RATE_LIMIT_HEADERS, 'Retry-After'],
  },
  500: {
    name: 'InternalError',
    description: 'Something failed on our side. The message carries the request id to quote to support; it never shows internals.',
    code: 'internal_error',
    example: 'Internal server error (request req-1)',
    headers: [],
  },
  503: {
    name: 'ServiceUnavailable',
    description: 'The service cannot reach its storage for a moment. Nothing was changed; retry after `Retry-After` seconds.',
    code: 'service_unavailable',
    example: 'The service is temporarily unavailable; retry after 1 s (request req-1)',
    headers: ['Retry-After'],
  },
  504: {
    name: 'QueryTimeout',
    description:
      'The request needed a database statement that ran longer than the database allows for one statement, and the database stopped it. This is not an outage: other requests are answered as usual, and retrying the same request costs the same again, so there is no `Retry-After`. A narrower filter (or a later `updated_since`) answers sooner.',
    code: 'query_timeout',
    example: queryTimeoutMessage('req-1'),
    headers: [],
  },
}

/** The 422 example shows `details`, whose shape every validation error shares. */
export function errorExample(status: number): unknown {
  const response = ERROR_RESPONSES[status] as ErrorResponse
  if (status === 422) return errorEnvelope(response.code, response.example, status, [{ field: 'per_page', message: 'must be <= 100' }])
  return errorEnvelope(response.code, response.example, status)
}

/** The error statuses `route` can answer with, in ascending order. */
export function errorStatusesOf(route: RouteSpec): number[] {
  // 400 on every route: a URL that cannot be decoded is refused whatever the method. 503 and
  // 504 on every route: each reads the storage (the key, at least), and any statement may meet
  // an outage (503) or the database's own bound on one statement (504).
  const statuses = new Set([400, 401, 403, 422, 429, 500, 503, 504])
  // 414: the router's limit on a path parameter's length, before the id's own validation.
  if (route.schema.params !== undefined) for (const status of [404, 414]) statuses.add(status)
  if (route.method !== 'GET') for (const status of [409, 413, 415]) statuses.add(status)
  return [...statuses].sort((a, b) => a - b)
}

/** The headers of a route's success response. */
export function successHeadersOf(route: RouteSpec, status: number): string[] {
  const headers: string[] = [...RATE_LIMIT_HEADERS]
  if (route.method !== 'GET') headers.push('Idempotent-Replay')
  if (status === 201) headers.push('Location')
  return headers
}
