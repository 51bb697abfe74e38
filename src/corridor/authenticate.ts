import type { FastifyRequest } from 'fastify'
import { presentedKey, repeatsCredential } from '../auth/api-key.js'
import type { AuthenticatedKey, KeyVerifier } from '../auth/key-verifier.js'
import { UnauthorizedError } from '../errors.js'
import type { CorridorStage } from './stage.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified key of the request; set by the authenticate stage on every API route. */
    workforceAuth: AuthenticatedKey | null
  }
}

/**
 * Key → company and scopes (spec 5). Every credential failure — missing, malformed, unknown,
 * revoked, expired, a repeated credential header — is the same 401 (spec 5.4).
 */
export function authenticate(verifier: KeyVerifier): CorridorStage {
  const onRequest = async (request: FastifyRequest) => {
    if (repeatsCredential(request.raw.rawHeaders)) throw new UnauthorizedError()
    const auth = await verifier.verify(presentedKey(request.headers))
    if (auth === null) throw new UnauthorizedError()
    request.workforceAuth = auth
  }
  return {
    name: 'authenticate',
    setup(app) {
      app.decorateRequest('workforceAuth', null)
    },
    hooksFor: () => ({ onRequest }),
  }
}
