import type { FastifyRequest } from 'fastify'
import type { AuthenticatedKey } from '../auth/key-verifier.js'
import type { ModuleCache } from '../auth/module-cache.js'
import { ForbiddenError } from '../errors.js'
import { SCOPE_MODULES } from '../scopes.js'
import type { CorridorStage } from './stage.js'

/**
 * Scope and module (spec 5.5): the key must hold the route's scope, and the scope's platform
 * module must be active for the company. Either failure is a 403 naming what is missing.
 */
export function authorize(modules: ModuleCache): CorridorStage {
  return {
    name: 'authorize',
    hooksFor({ scope }) {
      const module = SCOPE_MODULES[scope]
      const onRequest = async (request: FastifyRequest) => {
        const auth = request.workforceAuth as AuthenticatedKey
        if (!auth.scopes.has(scope)) throw new ForbiddenError(`This API key lacks the ${scope} scope`)
        if (!(await modules.isActive(auth.companyId, module))) {
          throw new ForbiddenError(`The ${module} module is not active for this company`)
        }
      }
      return { onRequest }
    },
  }
}
