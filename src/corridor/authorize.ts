import type { FastifyRequest } from 'fastify'
import type { AuthenticatedKey } from '../auth/key-verifier.js'
import type { ModuleCache } from '../auth/module-cache.js'
import { ForbiddenError } from '../errors.js'
import type { ResourceCatalogue } from '../api/catalogue.js'
import type { CorridorStage, StageResponses } from './stage.js'

/** A missing scope and an inactive module are the same 403, on every route with a scope (all but the events feed). */
export const AUTHORIZE_RESPONSES: StageResponses = {
  stage: 'authorize',
  responses: [{ status: 403, code: 'forbidden', when: (route) => route.scope !== undefined }],
}

/**
 * Scope and module (spec 5.5): the key must hold the route's scope, and the scope's platform
 * module must be active for the company. Either failure is a 403 naming what is missing.
 */
export function authorize(modules: ModuleCache, catalogue: Pick<ResourceCatalogue, 'moduleOf'>): CorridorStage {
  return {
    name: AUTHORIZE_RESPONSES.stage,
    hooksFor({ scope }) {
      // A route without a scope (the events feed) narrows what each key sees itself.
      if (scope === undefined) return null
      const module = catalogue.moduleOf(scope)
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
