import type { FastifyReply, FastifyRequest } from 'fastify'
import { ConflictError } from '../errors.js'
import type { Clock } from '../ports/clock.js'
import type { WriteStorage, WriteTransaction } from '../ports/write-storage.js'

/** What the write routes of every resource need from the plugin. */
export interface WriteRouteContext {
  writes: WriteStorage
  clock: Clock
  companyOf(request: FastifyRequest): number
  /** Public path of a resource, for `Location` headers. */
  locationOf(path: string): string
}

/** What a write produces: the response, and work to do once it is committed. */
export interface WriteOutcome {
  status: number
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
  work: (tx: WriteTransaction, now: Date) => Promise<WriteOutcome>,
): Promise<string> {
  const attempt = request.idempotency
  const { payload, headers, afterCommit } = await writes.transaction(async (tx) => {
    // Stamped once the transaction holds the store, not before waiting for it: a write that
    // queued behind another must not carry a time earlier than reads that ran meanwhile,
    // or an updated_since sync starting in between would never see it.
    const now = new Date(clock.now())
    const outcome = await work(tx, now)
    reply.code(outcome.status) // the route's serializer is chosen by status
    const headers = { 'content-type': JSON_TYPE, ...outcome.headers }
    const serialized = reply.serialize(outcome.body) as string
    if (attempt !== null) {
      const held = await tx.completeIdempotency(attempt.slot, attempt.token, { status: outcome.status, headers, body: serialized }, now)
      if (!held) {
        throw new ConflictError('This request took longer than its idempotency lease and a retry took over; it was rolled back')
      }
    }
    return { payload: serialized, headers, afterCommit: outcome.afterCommit }
  })
  reply.headers(headers)
  if (attempt !== null) attempt.completed = true
  if (afterCommit !== undefined) {
    afterCommit().catch((error: unknown) => request.log.error({ err: error, reqId: request.id }, 'workforce-api: after-commit work failed'))
  }
  return payload
}
