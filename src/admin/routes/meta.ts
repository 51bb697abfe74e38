import { Type } from '@sinclair/typebox'
import type { AdminContext } from '../admin-context.js'
import type { AdminResource } from '../admin-route.js'
import * as S from '../schemas.js'

const ModuleState = Type.Object({ module: Type.String(), enabled: Type.Boolean() })

/** Who is signed in, the scope catalogue and the company's platform modules: what the screens read first. */
export const meta: AdminResource = {
  name: 'meta',
  routes: ({ api, scopes, session }: AdminContext) => {
    const moduleStates = (companyId: number) =>
      Promise.all(api.resources.modules.map(async (module) => ({ module, enabled: await api.ports.modules.isActive(companyId, module) })))
    return [
      {
        method: 'GET',
        url: '/session',
        summary: 'Who is signed in',
        schema: { response: { 200: Type.Object({ company_id: Type.Integer(), actor: Type.Object({ id: Type.String(), name: Type.String() }) }) } },
        handler: async (request) => ({ company_id: session(request).companyId, actor: session(request).actor }),
      },
      {
        method: 'GET',
        url: '/scopes',
        summary: 'The scopes a key can have, grouped by platform module',
        schema: { response: { 200: S.data(Type.Array(S.ScopeGroup)) } },
        handler: async (request) => {
          const modules = await moduleStates(session(request).companyId)
          return { data: modules.map(({ module, enabled }) => ({ module, enabled, scopes: scopes.get(module) ?? [] })) }
        },
      },
      {
        method: 'GET',
        url: '/modules',
        summary: "The company's platform modules (read-only)",
        schema: { response: { 200: S.data(Type.Array(ModuleState)) } },
        handler: async (request) => ({ data: await moduleStates(session(request).companyId) }),
      },
    ]
  },
}
