import type { TSchema } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../ports/clock.js'
import type { WriteStorage, WriteTransaction } from '../ports/write-storage.js'
import { ItemEnvelope } from './pagination.js'
import { companyOf, type EventRenderer, type RouteSpec, type WriteContext } from './route-spec.js'
import { IdParams, NoQuery } from './wire.js'

/**
 * The write a domain function runs in: its transaction, the company, the instant the change is
 * stamped with, and how its events are rendered (the plugin's resource catalogue).
 */
export interface WriteScope {
  tx: WriteTransaction
  companyId: number
  now: Date
  events: EventRenderer
}

/**
 * Records the event `type` of `record` (as stored after the change; before it, for a deletion)
 * in the write's transaction. An update passes `previous`, the record as it was read before the
 * change, so the event says what changed (`previous_attributes`).
 */
export async function recordChange(scope: WriteScope, type: string, record: unknown, previous?: unknown): Promise<void> {
  await scope.tx.recordEvent(scope.events.renderEvent({ type, companyId: scope.companyId, record, previous }, scope.now))
}

/** What a write produces: the response body, and work to do once it is committed. */
export interface WriteOutcome {
  body: unknown
  headers?: Record<string, string>
  /** Runs after commit (e.g. sending an invitation); a failure is logged, the response stands. */
  afterCommit?: () => Promise<void>
}

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Largest accepted write body; larger is a 413. The largest valid to-do (10,000 characters of
 * notes, 500 of title) is about 130 KiB when a client escapes every character as `\uXXXX`.
 */
export const MAX_BODY_BYTES = 256 * 1024

/**
 * The one path every mutation takes: run the domain work in a transaction, serialize the
 * response with the route's schema, and — when the request holds an idempotency slot —
 * store that exact response in the same transaction. If the slot was lost meanwhile (our
 * lease expired and a retry took over), the transaction rolls back: no side effect twice.
 */
export async function commitWrite(
  request: FastifyRequest,
  reply: FastifyReply,
  writes: WriteStorage,
  clock: Clock,
  status: number,
  work: (tx: WriteTransaction, now: Date) => Promise<WriteOutcome>,
): Promise<string> {
  const attempt = request.idempotency
  const { payload, headers, afterCommit } = await writes.transaction(async (tx) => {
    // Stamped once the transaction holds the store, not before waiting for it: a write that
    // queued behind another must not carry a time earlier than reads that ran meanwhile,
    // or an updated_since sync starting in between would never see it.
    const now = new Date(clock.now())
    const outcome = await work(tx, now)
    reply.code(status) // the route's serializer is chosen by status
    const headers = { 'content-type': JSON_TYPE, ...outcome.headers }
    const serialized = reply.serialize(outcome.body) as string
    if (attempt !== null) await attempt.completeWithin(tx, { status, headers, body: serialized }, now)
    return { payload: serialized, headers, afterCommit: outcome.afterCommit }
  })
  reply.headers(headers)
  attempt?.committed()
  if (afterCommit !== undefined) {
    afterCommit().catch((error: unknown) => request.log.error({ err: error, reqId: request.id }, 'workforce-api: after-commit work failed'))
  }
  return payload
}

/** A write route as its resource declares it; `writeRoute` adds what every write route shares. */
export interface WriteRouteDeclaration extends Pick<RouteSpec, 'method' | 'url' | 'operationId' | 'summary' | 'tag' | 'scope'> {
  /** The request body's schema; none for an action such as `activate`. */
  body?: TSchema
  /** Whether the path carries an `:id`. */
  byId?: boolean
  /** The success status: 201 for a creation, 200 otherwise. */
  status: 200 | 201
  /** The resource's wire schema; the response is `{ data: item }`. */
  item: TSchema
  /** The domain work, inside the write's transaction. */
  run(request: FastifyRequest, scope: WriteScope): Promise<WriteOutcome>
}

/**
 * A mutating route: no query parameters, the shared body limit, the `{ data }` envelope, and
 * its work run through `commitWrite` (one transaction with its event and idempotency record).
 */
export function writeRoute(context: WriteContext, declaration: WriteRouteDeclaration): RouteSpec {
  const { body, byId, status, item, run, ...route } = declaration
  return {
    ...route,
    schema: {
      querystring: NoQuery,
      ...(byId === true ? { params: IdParams } : {}),
      ...(body === undefined ? {} : { body }),
      response: { [status]: ItemEnvelope(item) },
    },
    bodyLimit: MAX_BODY_BYTES,
    async handler(request, reply) {
      const companyId = companyOf(request)
      return commitWrite(request, reply, context.writes, context.clock, status, (tx, now) => run(request, { tx, companyId, now, events: context.events }))
    },
  }
}
