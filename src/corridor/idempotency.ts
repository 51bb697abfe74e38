import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { RouteSpec } from '../api/route-spec.js'
import { bearerToken } from '../auth/api-key.js'
import { ConflictError, ValidationError } from '../errors.js'
import type { Clock } from '../ports/clock.js'
import type { IdempotencyStore, StoredResponse } from '../ports/idempotency-store.js'
import type { WriteTransaction } from '../ports/write-storage.js'
import { idempotencySlot, requestFingerprint } from './idempotency-fingerprint.js'
import type { CorridorStage, StageResponses } from './stage.js'

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000
/**
 * How long an in-flight marker blocks its slot without a heartbeat. The corridor renews it
 * every third of this while the request runs, so it only runs out when its holder died: a
 * crashed request blocks its key for at most this long.
 */
export const IDEMPOTENCY_LEASE_MS = 10_000
/** Heartbeats per lease: two may be missed (a slow database) before the lease runs out. */
const RENEWALS_PER_LEASE = 3
export const IDEMPOTENCY_PURGE_INTERVAL_MS = 60_000
export const IDEMPOTENCY_PURGE_BATCH = 500

/** Spec 4.4: the methods whose retries are made safe. */
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** 1–255 printable ASCII characters (space to tilde). */
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/
/** Refusals that are not recorded: the client fixes the credential or waits, then retries the same key. */
const NOT_RECORDED: ReadonlySet<number> = new Set([401, 403, 429])

/** Spec 4.4: the stage guards the routes of a mutating method, and no other. */
export function isMutation(route: Pick<RouteSpec, 'method'>): boolean {
  return MUTATING.has(route.method)
}

/** Whether a response of this status is stored, and so replayed to a retry of the same key. */
function isRecorded(status: number): boolean {
  return status < 500 && !NOT_RECORDED.has(status)
}

/**
 * A retry while the first request runs is a 409 with `Retry-After`; a key that is malformed or
 * was used for another request is a 422. A replay is a stored response, marked `Idempotent-Replay`.
 */
export const IDEMPOTENCY_RESPONSES: StageResponses = {
  stage: 'idempotency',
  responses: [
    { status: 409, code: 'conflict', headers: ['Retry-After-In-Flight'], when: isMutation },
    { status: 422, code: 'validation_error', when: isMutation },
  ],
  stamps: [{ headers: ['Idempotent-Replay'], statuses: isRecorded, when: isMutation }],
}

/**
 * The idempotency slot a request holds while it executes. It is settled exactly once: by the
 * write's own transaction (`completeWithin`, then `committed`) or, for any other response,
 * by this stage's `onSend` hook.
 */
export class IdempotencyAttempt {
  #settled = false
  #heartbeat: NodeJS.Timeout | undefined

  constructor(
    readonly slot: string,
    readonly token: string,
  ) {}

  /**
   * Calls `renew` every `everyMs` until the slot is settled or `renew` says it was lost. The
   * timer is unref'd: it never keeps a process alive.
   */
  keepAlive(renew: () => Promise<boolean>, everyMs: number, onError: (error: unknown) => void): void {
    this.#heartbeat = setInterval(() => {
      renew().then((held) => {
        if (!held) this.stopHeartbeat()
      }, onError)
    }, everyMs)
    this.#heartbeat.unref()
  }

  /**
   * Stores `response` inside the write's transaction, so the side effect and its record
   * commit together. If our lease ran out and a retry took the slot over, throws a 409:
   * the transaction rolls back and no side effect runs twice.
   */
  async completeWithin(tx: WriteTransaction, response: StoredResponse, now: Date): Promise<void> {
    if (!(await tx.completeIdempotency(this.slot, this.token, response, now))) {
      throw new ConflictError('This request took longer than its idempotency lease and a retry took over; it was rolled back')
    }
  }

  /** The write committed with its record: nothing is left for `onSend` to store. */
  committed(): void {
    this.settle()
  }

  /** True once, for whoever settles the slot first; stops the heartbeat. */
  settle(): boolean {
    this.stopHeartbeat()
    if (this.#settled) return false
    this.#settled = true
    return true
  }

  /** Stops renewing; the lease then runs out unless the slot is settled first. */
  stopHeartbeat(): void {
    clearInterval(this.#heartbeat)
    this.#heartbeat = undefined
  }
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
 * Idempotent retries (spec 4.4), on mutating routes, after authorization and before validation:
 * - `preValidation` claims the slot, or replays a stored response, or refuses (409 in flight, 422 mismatch);
 * - a mutation stores its response inside its own transaction (`commitWrite`);
 * - `onSend` stores any other response (4xx), or frees the slot (5xx, 401, 403, 429).
 * It runs before validation so that a 422 for a bad body is recorded and replayed like any 4xx.
 */
export function idempotency(settings: IdempotencySettings): CorridorStage {
  const claim = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key']
    if (header === undefined) return
    // Only a key sent as Authorization: Bearer scopes a slot; with X-Api-Key the header is ignored.
    const token = bearerToken(request.headers.authorization)
    if (token === undefined) return
    // The scheme is case-insensitive: `bearer k` and `Bearer k` are one credential, one slot.
    const slot = idempotencySlot(`Bearer ${token}`, checkedKey(header))
    return claimSlot(settings, request, reply, slot, (request.workforceAuth as { companyId: number }).companyId)
  }
  const record = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => recordResponse(settings, request, reply, payload)

  const stopHeartbeat = async (request: FastifyRequest) => {
    request.idempotency?.stopHeartbeat()
  }

  return {
    name: IDEMPOTENCY_RESPONSES.stage,
    setup(app) {
      app.decorateRequest('idempotency', null)
      let timer: NodeJS.Timeout | undefined
      app.addHook('onReady', async () => {
        timer = setInterval(() => void purge(app, settings), settings.purgeIntervalMs)
        timer.unref()
      })
      app.addHook('onClose', async () => clearInterval(timer))
    },
    // Spec 4.4: only mutating methods; GETs never run these hooks. `onResponse` stops the
    // heartbeat of a request whose response never reached `onSend` (the client went away).
    hooksFor: (route) => (isMutation(route) ? { preValidation: claim, onSend: record, onResponse: stopHeartbeat } : null),
  }
}

/** The `Idempotency-Key` header, checked: 1 to 255 printable ASCII characters. */
export function checkedKey(header: string | string[]): string {
  if (typeof header !== 'string' || !KEY_SHAPE.test(header)) {
    throw new ValidationError([{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }])
  }
  return header
}

/**
 * Claims `slot` for this request: starts an attempt (kept alive while the request runs),
 * replays the stored response, or refuses (409 in flight, 422 for another request). The public
 * API and the admin API differ only in what a slot is made of.
 */
export async function claimSlot(
  settings: Pick<IdempotencySettings, 'store' | 'clock' | 'leaseMs' | 'retentionMs'>,
  request: FastifyRequest,
  reply: FastifyReply,
  slot: string,
  companyId: number,
  /** Turns a stored body back into the one to send (the admin API stores its answers sealed). */
  openBody: (stored: string) => string = (stored) => stored,
): Promise<FastifyReply | undefined> {
  const { store, clock } = settings
  const now = clock.now()
  const attemptToken = randomUUID()
  const result = await store.begin({
    slot,
    token: attemptToken,
    fingerprint: requestFingerprint(request.method, request.url.split('?')[0] as string, request.body),
    companyId,
    now: new Date(now),
    leaseUntil: new Date(now + settings.leaseMs),
    expiredBefore: new Date(now - settings.retentionMs),
  })
  switch (result.state) {
    case 'started': {
      const attempt = new IdempotencyAttempt(slot, attemptToken)
      attempt.keepAlive(
        () => store.renew(slot, attemptToken, new Date(clock.now() + settings.leaseMs)),
        Math.max(1, Math.floor(settings.leaseMs / RENEWALS_PER_LEASE)),
        (error) => request.log.warn({ err: error, reqId: request.id }, 'workforce-api: could not renew an idempotency lease'),
      )
      request.idempotency = attempt
      return undefined
    }
    case 'replay':
      return replay(reply, { ...result.response, body: openBody(result.response.body) })
    case 'in_flight':
      reply.header('retry-after', '1')
      throw new ConflictError('A request with this Idempotency-Key is still in flight; retry shortly')
    case 'mismatch':
      throw new ValidationError([{ field: 'Idempotency-Key', message: 'was already used for a different request (method, path or body)' }])
  }
}

/** `onSend`: stores the response of the request's attempt (a 4xx too), or frees the slot (5xx, 401, 403, 429). */
export async function recordResponse(
  settings: Pick<IdempotencySettings, 'store' | 'clock'>,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  /** Turns the body into the one to store (the admin API seals its answers). */
  storeBody: (body: string) => string = (body) => body,
): Promise<unknown> {
  const attempt = request.idempotency
  if (attempt === null || !attempt.settle()) return payload
  const status = reply.statusCode
  try {
    if (!isRecorded(status)) {
      await settings.store.release(attempt.slot, attempt.token)
    } else {
      const response = storedResponse(reply, payload)
      await settings.store.complete(attempt.slot, attempt.token, { ...response, body: storeBody(response.body) }, new Date(settings.clock.now()))
    }
  } catch (error) {
    // The response itself is fine; the slot's lease will run out and a retry executes.
    request.log.error({ err: error, reqId: request.id }, 'workforce-api: could not record the idempotent response')
  }
  return payload
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

