import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import type { StageResponses } from '../corridor/stage.js'

/**
 * What conditional reads add to the corridor's answers (`CORRIDOR`, src/corridor/index.ts): every
 * read's 200 and 304 carry the answer's `ETag`. The 304 itself is a success of the route, not a
 * refusal: the reference document gives every read one (src/openapi/document.ts).
 */
export const CONDITIONAL_RESPONSES: StageResponses = {
  stage: 'conditional',
  responses: [],
  stamps: [{ headers: ['ETag'], statuses: (status) => status === 200 || status === 304, when: (route) => route.method === 'GET' }],
}

/** The media type of every answer; set by hand where the bytes are sent as a string. */
const JSON_MEDIA_TYPE = 'application/json; charset=utf-8'

/**
 * A GET's answer, serialized once: its bytes and their entity tag. A route can return one
 * instead of an object (a remembered answer, `AnswerCache`): it is sent as it is, neither
 * rendered nor serialized again.
 */
export class SerializedAnswer {
  constructor(
    readonly body: string,
    readonly etag: string,
  ) {}
}

/**
 * The strong entity tag of `body`: the first 132 bits of its SHA-256 (22 base64url characters),
 * so the tag changes exactly when the bytes do, and two instances that answer the same bytes
 * give the same tag (docs/decisions.md, "Conditional requests and kept answers").
 */
export function entityTag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`
}

/** Serializes `payload` with the route's own response schema (status 200) and tags it. */
export function serializeAnswer(reply: FastifyReply, payload: unknown): SerializedAnswer {
  // The route's fast-json-stringify serializer: always a string.
  const body = reply.serialize(payload) as string
  return new SerializedAnswer(body, entityTag(body))
}

/**
 * Whether `If-None-Match` names `etag` (RFC 9110 13.1.2): `*`, or a comma-separated list of
 * tags compared weakly (a `W/` prefix is ignored), so a tag a client or proxy marked weak
 * still matches.
 */
export function noneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false
  const value = Array.isArray(header) ? header.join(',') : header
  if (value.trim() === '*') return true
  for (const candidate of value.split(',')) {
    const tag = candidate.trim()
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true
  }
  return false
}

/** Sends `answer` with its tag, or `304 Not Modified` without a body when the client holds it. */
export function sendAnswer(request: FastifyRequest, reply: FastifyReply, answer: SerializedAnswer): FastifyReply {
  reply.header('etag', answer.etag)
  if (noneMatchHits(request.headers['if-none-match'], answer.etag)) return reply.code(304).send()
  return reply.header('content-type', JSON_MEDIA_TYPE).send(answer.body)
}

/**
 * Every GET route's handler, wrapped: its 200 answer is serialized once, tagged, and sent or
 * answered 304 (`mountRoute`). A handler that returns a `SerializedAnswer` skips rendering and
 * serializing; any other status (an error thrown, a reply already sent) passes untouched.
 */
export function conditionalHandler(handler: RouteHandlerMethod): RouteHandlerMethod {
  return async function conditional(this: unknown, request, reply) {
    const result: unknown = await (handler as (this: unknown, ...args: unknown[]) => unknown).call(this, request, reply)
    if (reply.sent || reply.statusCode !== 200 || result === reply) return result
    return sendAnswer(request, reply, result instanceof SerializedAnswer ? result : serializeAnswer(reply, result))
  } as RouteHandlerMethod
}
