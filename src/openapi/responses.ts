import type { RouteSpec } from '../api/route-spec.js'
import { CORRIDOR } from '../corridor/index.js'
import { queryTimeoutMessage } from '../corridor/render.js'
import type { DocumentedHeader, StageResponses } from '../corridor/stage.js'
import { errorEnvelope, UNAUTHORIZED_MESSAGE } from '../errors.js'

/**
 * What the reference document says about responses beyond each route's success body: which
 * error statuses a route can give and the headers on each response. Both are derived from the
 * corridor (`CORRIDOR` in src/corridor/index.ts), where each stage declares, beside its code,
 * the responses it can give, their headers and the routes they concern; this file only adds
 * the prose. Every error is the spec's envelope (section 7); the components below name each
 * status once, with an example, and operations point at them.
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
export const HEADERS: Record<DocumentedHeader, HeaderObject> = {
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
  ETag: {
    name: 'ETag',
    description:
      'A strong tag of this answer: it changes exactly when the answer would. Send it back in `If-None-Match` to be answered `304 Not Modified`, without a body, while nothing changed.',
    required: true,
    schema: { type: 'string', pattern: '^"[A-Za-z0-9_-]{22}"$' },
  },
}

/** What `If-None-Match` means on every read (`components.parameters`). */
export const IF_NONE_MATCH_PARAMETER = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'The `ETag` of an answer you hold (or several, comma-separated; `*` matches any). While the answer is unchanged the API answers `304 Not Modified` without a body, and the request does not spend your rate budget (it still counts in your usage, as not modified). A key whose budget is spent gets 429 as for any request.',
  schema: { type: 'string' },
  example: '"q1XhZr6vNw3kTtYb0mJc8A"',
}

/** The `304` of every read. */
export const NOT_MODIFIED_DESCRIPTION =
  'Not modified: the answer is the one whose `ETag` you sent in `If-None-Match`. No body; the rate limit headers say the budget, which this answer did not spend.'

/** The prose of one error status's `components.responses` entry. */
interface ErrorProse {
  name: string
  description: string
  example: string
}

export interface ErrorResponse extends ErrorProse {
  /** The `error.code` the corridor's stages declare for the status. */
  code: string
  /** Keys of `HEADERS`, as the stages that give the status set them. */
  headers: readonly DocumentedHeader[]
}

/** What the document says of each error status some stage of the corridor declares. */
const ERROR_PROSE: Record<number, ErrorProse> = {
  400: {
    name: 'BadRequest',
    description:
      "The request is malformed: the body of a change is not valid JSON, or the URL cannot be decoded (a broken percent-encoding such as `%zz`). Fastify's router refuses such a URL before the API runs; it answers in this envelope when the server uses `workforceServerOptions()` (as `workforce-api serve` does), which also refuses an HTTP/1.1 request without `Host` here.",
    example: 'Body is not valid JSON but content-type is set to \'application/json\'',
  },
  401: {
    name: 'Unauthorized',
    description: 'The API key is missing, malformed, unknown, revoked or expired. Every credential failure gets this same response: it never says which.',
    example: UNAUTHORIZED_MESSAGE,
  },
  403: {
    name: 'Forbidden',
    description: "The key is valid but lacks this operation's scope, or the scope's platform module is not active for your company.",
    example: 'This API key lacks the scope todos:write',
  },
  404: {
    name: 'NotFound',
    description: 'No record with this id exists in your company. Records of other companies are never visible: they are not found either.',
    example: 'Resource not found',
  },
  410: {
    name: 'CursorExpired',
    description:
      'The cursor passed as `after` is older than the retained event history, so events after it may be gone: a copy that followed it would silently drift. Sync again from scratch: take `GET /v1/events/cursor`, read every list, then follow the feed from that cursor.',
    example: 'This cursor is older than the retained event history: some events after it are gone.',
  },
  409: {
    name: 'Conflict',
    description:
      'A request with the same `Idempotency-Key` is still in flight (wait `Retry-After` and retry with the same key), or the change conflicts with the current state (for example, the user already belongs to your company).',
    example: 'A request with this Idempotency-Key is still in flight; retry shortly',
  },
  413: {
    name: 'PayloadTooLarge',
    description: 'The body is larger than 256 KiB.',
    example: 'Request body is too large',
  },
  414: {
    name: 'UriTooLong',
    description:
      "A path parameter is longer than the server's `maxParamLength` (Fastify's default: 100 characters); no id is. Fastify's router refuses it before the API runs; it answers in this envelope when the server uses `workforceServerOptions()` (as `workforce-api serve` does).",
    example: "'/api/public/v1/todos/1111111111…' is exceeding the max param length",
  },
  415: {
    name: 'UnsupportedMediaType',
    description: 'The body is not `application/json`.',
    example: "Unsupported Media Type: text/plain",
  },
  422: {
    name: 'ValidationFailed',
    description: 'A query parameter, path parameter, header or body field is invalid. `details` lists each offending input by name.',
    example: 'The request is invalid',
  },
  429: {
    name: 'RateLimited',
    description:
      "This API key spent its request budget for the window, or the request failed authentication from an address that made too many failed authentications (a valid key is still served from it). Wait `Retry-After` seconds.",
    example: 'Rate limit of 600 requests per 60 s exceeded for this API key; retry after 12 s',
  },
  500: {
    name: 'InternalError',
    description: 'Something failed on our side. The message carries the request id to quote to support; it never shows internals.',
    example: 'Internal server error (request req-1)',
  },
  503: {
    name: 'ServiceUnavailable',
    description: 'The service cannot reach its storage for a moment. Nothing was changed; retry after `Retry-After` seconds.',
    example: 'The service is temporarily unavailable; retry after 1 s (request req-1)',
  },
  504: {
    name: 'QueryTimeout',
    description:
      'The request needed a database statement that ran longer than the database allows for one statement, and the database stopped it. This is not an outage: other requests are answered as usual, and retrying the same request costs the same again, so there is no `Retry-After`. A narrower filter (or a later `updated_since`) answers sooner.',
    example: queryTimeoutMessage('req-1'),
  },
}

/** The 422 example shows `details`, whose shape every validation error shares. */
export function errorExample(status: number): unknown {
  const response = ERROR_RESPONSES[status] as ErrorResponse
  if (status === 422) return errorEnvelope(response.code, response.example, status, [{ field: 'per_page', message: 'must be <= 100' }])
  return errorEnvelope(response.code, response.example, status)
}

/**
 * The error statuses `route` can answer with, in ascending order: every status a place of the
 * corridor declares for a route like it.
 */
export function errorStatusesOf(route: RouteSpec, corridor: readonly StageResponses[] = CORRIDOR): number[] {
  const statuses = new Set(corridor.flatMap((place) => place.responses.filter((response) => response.when?.(route) ?? true).map(({ status }) => status)))
  return [...statuses].sort((a, b) => a - b)
}

/**
 * The headers of a route's success response: those every stage stamps on it (all of them run
 * before the route), in corridor order, then the route's own `Location` on a 201.
 */
export function successHeadersOf(route: RouteSpec, status: number, corridor: readonly StageResponses[] = CORRIDOR): DocumentedHeader[] {
  const headers = stampedHeaders(corridor, corridor.length - 1, status, route)
  if (status === 201) headers.push('Location')
  return headers
}

/**
 * The headers of one error status, on any route: for each place that declares it, what the
 * stages up to that place stamp on it (none for a place that answers anywhere), then what the
 * place sets itself; stamped headers first, each once.
 */
export function errorHeadersOf(status: number, corridor: readonly StageResponses[] = CORRIDOR): DocumentedHeader[] {
  const stamped: DocumentedHeader[] = []
  const own: DocumentedHeader[] = []
  corridor.forEach((place, index) => {
    for (const response of place.responses.filter((candidate) => candidate.status === status)) {
      if (place.anywhere !== true) stamped.push(...stampedHeaders(corridor, index, status))
      own.push(...(response.headers ?? []))
    }
  })
  return [...new Set([...stamped, ...own])]
}

/** The headers the places up to `last` (inclusive) stamp on a response of `status` (on `route`, when given). */
function stampedHeaders(corridor: readonly StageResponses[], last: number, status: number, route?: RouteSpec): DocumentedHeader[] {
  const headers = corridor
    .slice(0, last + 1)
    .flatMap((place) => place.stamps ?? [])
    .filter((stamp) => (stamp.statuses?.(status) ?? true) && (route === undefined || (stamp.when?.(route) ?? true)))
    .flatMap((stamp) => stamp.headers)
  return [...new Set(headers)]
}

/** The one `error.code` the places of the corridor give with `status`. */
function declaredCode(status: number, corridor: readonly StageResponses[]): string {
  const codes = new Set(corridor.flatMap((place) => place.responses.filter((response) => response.status === status).map(({ code }) => code)))
  if (codes.size !== 1) throw new Error(`openapi: the corridor declares ${codes.size === 0 ? 'no' : 'several'} codes for ${status}: ${[...codes].join(', ')}`)
  return [...codes][0] as string
}

/**
 * Every error status the corridor declares, as a reusable `components.responses` entry. A
 * declared status without prose here, or prose for a status no place declares, fails here.
 */
export function errorResponsesOf(corridor: readonly StageResponses[] = CORRIDOR): Record<number, ErrorResponse> {
  const declared = new Set(corridor.flatMap((place) => place.responses.map(({ status }) => status)))
  for (const status of declared) if (ERROR_PROSE[status] === undefined) throw new Error(`openapi: no prose for status ${status}, which the corridor declares`)
  for (const status of Object.keys(ERROR_PROSE).map(Number)) {
    if (!declared.has(status)) throw new Error(`openapi: prose for status ${status}, which no place of the corridor declares`)
  }
  return Object.fromEntries(
    [...declared]
      .sort((a, b) => a - b)
      .map((status) => [status, { ...(ERROR_PROSE[status] as ErrorProse), code: declaredCode(status, corridor), headers: errorHeadersOf(status, corridor) }]),
  )
}

/** Every error status the API's routes give, as a reusable `components.responses` entry. */
export const ERROR_RESPONSES: Record<number, ErrorResponse> = errorResponsesOf()
