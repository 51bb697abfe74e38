import type { FastifyInstance } from 'fastify'
import type { RouteSpec } from '../api/route-spec.js'
import type { StageResponses } from './stage.js'

/** Fastify parses a body on every method but GET (and HEAD): on every write of ours. */
function takesBody(route: Pick<RouteSpec, 'method'>): boolean {
  return route.method !== 'GET'
}

/**
 * Fastify parses the body between the `onRequest` stages (authorize included) and the
 * `preValidation` ones (idempotency): a body that is not JSON (400), too large for the route's
 * `bodyLimit` (413) or of another media type (415) is refused after the rate limit stamped its
 * headers and before the idempotency stage holds a slot.
 */
export const PARSE_BODY_RESPONSES: StageResponses = {
  stage: 'parse-body',
  responses: [
    { status: 400, code: 'bad_request', when: takesBody },
    { status: 413, code: 'payload_too_large', when: takesBody },
    { status: 415, code: 'unsupported_media_type', when: takesBody },
  ],
}

/** Bodies are JSON only: any other media type is a 415, not a string body that fails later. */
export function acceptJsonBodiesOnly(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain')
}
