import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

/**
 * Headers on every response of the API, errors and replays included. Responses carry
 * personal data (or say something about a credential): no cache, shared or private, may keep
 * them; and a browser must never sniff a JSON body into something executable.
 */
export const RESPONSE_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const

/** A context-wide `onRequest` hook: set before any stage can refuse the request. */
export function setResponseHeaders(_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  reply.headers(RESPONSE_HEADERS)
  done()
}
