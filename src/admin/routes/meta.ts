import { Type } from '@sinclair/typebox'
import type { AdminContext } from '../admin-context.js'
import type { AdminResource } from '../admin-route.js'
import * as S from '../schemas.js'

const ModuleState = Type.Object({ module: Type.String(), enabled: Type.Boolean() })

/** What the host configured that the screens explain to their users (`app.workforceApi.settings`). */
const Settings = Type.Object(
  {
    rate_limit: Type.Union([
      Type.Object({
        default_max: Type.Integer({ minimum: 1, description: 'Requests per window for a key without its own `rate_limit`.' }),
        window_ms: Type.Integer({ minimum: 1, description: 'The length of the window, in milliseconds; a key’s own `rate_limit` counts in the same window.' }),
      }),
      Type.Null({ description: 'Rate limiting is off (`rateLimit: false`): a key’s `rate_limit` is kept but not enforced.' }),
    ]),
    webhooks: Type.Object({
      http_allowed: Type.Boolean({ description: 'Endpoint URLs may be `http://` as well as `https://`: a development setting (`allowPrivateDestinations`).' }),
      private_addresses_allowed: Type.Boolean({ description: 'Endpoints may be on loopback, private and link-local addresses (the same setting).' }),
    }),
  },
  { additionalProperties: false },
)

/** Who is signed in, the host's settings, the scope catalogue and the company's platform modules: what the screens read first. */
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
        url: '/settings',
        summary: 'What the host configured: the default rate limit of a key, and the webhook destinations allowed',
        schema: { response: { 200: Settings } },
        handler: async () => {
          const { rateLimit, allowPrivateDestinations } = api.settings
          return {
            rate_limit: rateLimit === null ? null : { default_max: rateLimit.max, window_ms: rateLimit.timeWindowMs },
            webhooks: { http_allowed: allowPrivateDestinations, private_addresses_allowed: allowPrivateDestinations },
          }
        },
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
