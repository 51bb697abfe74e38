import type { FastifyReply, FastifyRequest } from 'fastify'
import createError from '@fastify/error'
import { ForbiddenError } from '../errors.js'
import { checkedKey, claimSlot, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_RETENTION_MS, recordResponse } from '../corridor/idempotency.js'
import { idempotencySlot } from '../corridor/idempotency-fingerprint.js'
import type { Clock } from '../ports/clock.js'
import type { IdempotencyStore } from '../ports/idempotency-store.js'
import type { AdminSession, WorkforceAdminOptions } from './options.js'
import { ReplaySeal } from './replay-seal.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The host's user and company of an admin request; set by `workforceAdmin` before any handler. */
    adminSession: AdminSession | null
  }
}

/** The host's `authorize` said no: its own session, so no `WWW-Authenticate` challenge. */
const NotSignedIn = createError('unauthorized', 'Not signed in', 401)

export const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** The header the default cross-site check asks for: a cross-site form or image cannot send it. */
export const ADMIN_REQUEST_HEADER = 'x-requested-with'
export const ADMIN_REQUEST_VALUE = 'workforce-admin'

/** The host's `authorize`, on every admin request: 401 in the API's envelope when it says no. */
export function authorizeWith(authorize: WorkforceAdminOptions['authorize']) {
  return async (request: FastifyRequest): Promise<void> => {
    const session = await authorize(request)
    if (session === null || session === undefined) throw new NotSignedIn()
    if (!Number.isSafeInteger(session.companyId) || session.companyId < 1 || typeof session.actor?.id !== 'string' || typeof session.actor.name !== 'string') {
      throw new TypeError('workforceAdmin: authorize() must return { companyId: positive integer, actor: { id: string, name: string } } or null')
    }
    request.adminSession = session
  }
}

/**
 * Cross-site request refusal for mutations: a JSON content type (a cross-site form cannot send
 * one without a CORS preflight) and either the host's own check or `X-Requested-With`.
 */
export function refuseCrossSite(csrf: WorkforceAdminOptions['csrf']) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!MUTATING.has(request.method)) return
    const type = request.headers['content-type']
    if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type)) {
      throw new ForbiddenError('Admin changes must be sent as application/json')
    }
    const allowed = csrf === undefined ? request.headers[ADMIN_REQUEST_HEADER] === ADMIN_REQUEST_VALUE : await csrf(request)
    if (!allowed) {
      throw new ForbiddenError(csrf === undefined ? `Admin changes must carry the header X-Requested-With: ${ADMIN_REQUEST_VALUE}` : 'The request failed the cross-site request check')
    }
  }
}

/**
 * `Idempotency-Key` on admin mutations, on the public API's idempotency store: the slot is the
 * company, the host's user and the key, so two users (or companies) never share one. The
 * response is recorded after the change commits (the key and webhook stores do not share the
 * store's transaction): a process that dies in between lets a retry run the change again.
 * The stored answer is sealed under the Idempotency-Key: it may hold a secret shown once.
 */
export function adminIdempotency(store: IdempotencyStore, clock: Clock) {
  const settings = { store, clock, leaseMs: IDEMPOTENCY_LEASE_MS, retentionMs: IDEMPOTENCY_RETENTION_MS }
  const seals = new WeakMap<FastifyRequest, ReplaySeal>()
  const claim = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key']
    if (header === undefined || !MUTATING.has(request.method)) return
    const session = request.adminSession as AdminSession
    const key = checkedKey(header)
    const slot = idempotencySlot(`workforce-admin\n${session.companyId}\n${session.actor.id}`, key)
    // Answers hold secrets shown once: stored sealed under the Idempotency-Key (replay-seal.ts).
    const seal = new ReplaySeal(key, slot)
    seals.set(request, seal)
    return claimSlot(settings, request, reply, slot, session.companyId, (stored) => seal.open(stored))
  }
  const record = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const seal = seals.get(request)
    return seal === undefined ? payload : recordResponse(settings, request, reply, payload, (body) => seal.seal(body))
  }
  const stop = async (request: FastifyRequest) => {
    request.idempotency?.stopHeartbeat()
  }
  return { claim, record, stop }
}
