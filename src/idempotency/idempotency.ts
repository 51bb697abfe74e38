import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ConflictError, ValidationError } from '../errors.js'
import { bearerToken } from '../auth/api-key.js'
import { withHook } from '../http/route-hooks.js'
import type { Clock } from '../ports/clock.js'
import type { IdempotencyStore, StoredResponse } from '../ports/idempotency-store.js'
import type { RouteAccess } from '../resources/read-routes.js'
import { idempotencySlot, requestFingerprint } from './fingerprint.js'

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000
export const IDEMPOTENCY_LEASE_MS = 60_000
export const IDEMPOTENCY_PURGE_INTERVAL_MS = 60_000
export const IDEMPOTENCY_PURGE_BATCH = 500

/** Spec 4.4: the methods whose retries are made safe. */
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** 1–255 printable ASCII characters (space to tilde). */
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/
/** Refusals that are not recorded: the client fixes the credential or waits, then retries the same key. */
const NOT_RECORDED = new Set([401, 403, 429])

/** The idempotency slot a request holds while it executes. */
export interface IdempotencyAttempt {
  slot: string
  token: string
  /** Set once the response is stored (in the write's transaction, or by the onSend hook). */
  completed: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyAttempt | null
  }
}

export interface IdempotencySettings {
  store: IdempotencyStore
  clock: Clock
  leaseMs: number
  retentionMs: number
  purgeIntervalMs: number
  purgeBatch: number
}

/**
 * Idempotent retries (spec 4.4), in the corridor after auth and before the handler:
 * - `preValidation` claims the slot, or replays a stored response, or refuses (409 in flight, 422 mismatch);
 * - a mutation stores its response inside its own transaction (`commitWrite`);
 * - `onSend` stores any other response (4xx), or frees the slot (5xx, 401, 403, 429).
 * It runs before validation so that a 422 for a bad body is recorded and replayed like any 4xx.
 */
export function registerIdempotency(app: FastifyInstance, settings: IdempotencySettings): void {
  const { store, clock } = settings
  app.decorateRequest('idempotency', null)

  const claim = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key']
    if (header === undefined) return
    // Only a key sent as Authorization: Bearer scopes a slot; with X-Api-Key the header is ignored.
    const token = bearerToken(request.headers.authorization)
    if (token === undefined) return
    if (typeof header !== 'string' || !KEY_SHAPE.test(header)) {
      throw new ValidationError([{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }])
    }
    const now = clock.now()
    // The scheme is case-insensitive: `bearer k` and `Bearer k` are one credential, one slot.
    const slot = idempotencySlot(`Bearer ${token}`, header)
    const attemptToken = randomUUID()
    const result = await store.begin({
      slot,
      token: attemptToken,
      fingerprint: requestFingerprint(request.method, request.url.split('?')[0] as string, request.body),
      companyId: (request.workforceAuth as { companyId: number }).companyId,
      now: new Date(now),
      leaseUntil: new Date(now + settings.leaseMs),
      expiredBefore: new Date(now - settings.retentionMs),
    })
    switch (result.state) {
      case 'started':
        request.idempotency = { slot, token: attemptToken, completed: false }
        return
      case 'replay':
        return replay(reply, result.response)
      case 'in_flight':
        reply.header('retry-after', '1')
        throw new ConflictError('A request with this Idempotency-Key is still in flight; retry shortly')
      case 'mismatch':
        throw new ValidationError([
          { field: 'Idempotency-Key', message: 'was already used for a different request (method, path or body)' },
        ])
    }
  }

  const record = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const attempt = request.idempotency
    if (attempt === null || attempt.completed) return payload
    attempt.completed = true
    const status = reply.statusCode
    try {
      if (status >= 500 || NOT_RECORDED.has(status)) {
        await store.release(attempt.slot, attempt.token)
      } else {
        await store.complete(attempt.slot, attempt.token, storedResponse(reply, payload), new Date(clock.now()))
      }
    } catch (error) {
      // The response itself is fine; the slot's lease will run out and a retry executes.
      request.log.error({ err: error, reqId: request.id }, 'workforce-api: could not record the idempotent response')
    }
    return payload
  }

  // Only the API's mutating routes carry these hooks (spec 4.4); GETs never run them.
  app.addHook('onRoute', (route) => {
    const mutating = [route.method].flat().some((method) => MUTATING.has(method))
    if (!mutating || (route.config as Partial<RouteAccess> | undefined)?.scope === undefined) return
    route.preValidation = withHook(route.preValidation, claim, 'first')
    route.onSend = withHook(route.onSend, record, 'last')
  })

  let timer: NodeJS.Timeout | undefined
  app.addHook('onReady', async () => {
    timer = setInterval(() => void purge(app, settings), settings.purgeIntervalMs)
    timer.unref()
  })
  app.addHook('onClose', async () => clearInterval(timer))
}

function replay(reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply
    .code(response.status)
    .headers(response.headers)
    .header('idempotent-replay', 'true')
    .header('idempotent-replayed', 'true')
    .send(response.body)
}

function storedResponse(reply: FastifyReply, payload: unknown): StoredResponse {
  const headers: Record<string, string> = {}
  for (const name of ['content-type', 'location', 'retry-after']) {
    const value = reply.getHeader(name)
    if (value !== undefined) headers[name] = String(value)
  }
  return { status: reply.statusCode, headers, body: typeof payload === 'string' ? payload : String(payload ?? '') }
}

/** Deletes expired records in batches until a batch comes back short. */
export async function purge(app: FastifyInstance, settings: IdempotencySettings): Promise<number> {
  const before = new Date(settings.clock.now() - settings.retentionMs)
  let total = 0
  try {
    for (;;) {
      const deleted = await settings.store.purgeExpired(before, settings.purgeBatch)
      total += deleted
      if (deleted < settings.purgeBatch) return total
    }
  } catch (error) {
    app.log.warn({ err: error }, 'workforce-api: purging expired idempotency records failed')
    return total
  }
}

