import type { FastifyReply, FastifyRequest } from 'fastify'
import { presentedKey, repeatsCredential } from '../auth/api-key.js'
import type { AuthenticatedKey, KeyVerifier } from '../auth/key-verifier.js'
import { UnauthorizedError } from '../errors.js'
import type { CorridorStage, StageResponses } from './stage.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified key of the request; set by the authenticate stage on every API route. */
    workforceAuth: AuthenticatedKey | null
    /**
     * Set by the failed-auth limit (`./rate-limit.ts`) when the request's address has spent
     * its failed-authentication budget; `null` otherwise.
     */
    workforceAuthGate: AuthGate | null
  }
}

/**
 * How a request from an address that spent its failed-authentication budget is verified: its
 * key still counts (a valid key is served), but the key store is asked only when the gate
 * allows it, and a failure is the gate's 429 instead of the 401.
 */
export interface AuthGate {
  /**
   * Whether the key store may be asked about `keyId`; asked for cached ids too (`cached`), so
   * the gate's own work takes the same time for ids this process knows and ids it does not.
   */
  admit(keyId: string, cached: boolean): Promise<boolean>
  /** The answer to a failed authentication; sets its headers (`Retry-After`) on `reply`. */
  refusal(reply: FastifyReply): Error
}

/** Every credential failure is this one 401 (the gate's 429 is the failed-auth limit's). */
export const AUTHENTICATE_RESPONSES: StageResponses = {
  stage: 'authenticate',
  responses: [{ status: 401, code: 'unauthorized', headers: ['WWW-Authenticate'] }],
}

/**
 * Key → company and scopes (spec 5). Every credential failure — missing, malformed, unknown,
 * revoked, expired, a repeated credential header — is the same 401 (spec 5.4), or, from an
 * address past its failed-authentication budget, the same 429 whatever the failure.
 */
export function authenticate(verifier: KeyVerifier): CorridorStage {
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    const gate = request.workforceAuthGate
    const refuse = () => (gate === null ? new UnauthorizedError() : gate.refusal(reply))
    if (repeatsCredential(request.raw.rawHeaders)) throw refuse()
    const auth = await verifier.verify(presentedKey(request.headers), gate === null ? {} : { admit: gate.admit })
    if (auth === null) throw refuse()
    request.workforceAuth = auth
  }
  return {
    name: AUTHENTICATE_RESPONSES.stage,
    setup(app) {
      app.decorateRequest('workforceAuth', null)
      app.decorateRequest('workforceAuthGate', null)
    },
    hooksFor: () => ({ onRequest }),
  }
}
