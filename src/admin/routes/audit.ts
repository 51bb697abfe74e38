import { Type } from '@sinclair/typebox'
import { NotFoundError } from '../../errors.js'
import type { AdminContext } from '../admin-context.js'
import type { AdminResource, AdminRouteSpec } from '../admin-route.js'
import * as S from '../schemas.js'

/** The audit trail of admin changes, read side (the key and webhook stores write it in their transactions). */
export const audit: AdminResource = {
  name: 'audit',
  routes: ({ api, session }: AdminContext): AdminRouteSpec[] => [
    {
      method: 'GET',
      url: '/audit',
      summary: 'The audit trail of admin changes, newest first',
      schema: { querystring: S.AuditQuery, response: { 200: Type.Object({ data: Type.Array(S.AuditEntryView), has_more: Type.Boolean() }) } },
      handler: async (request) => {
        const query = request.query as typeof S.AuditQuery.static
        const store = api.ports.audit
        if (store === undefined) throw new NotFoundError('No audit trail is configured')
        const page = await store.list(session(request).companyId, { limit: query.limit ?? 50, ...(query.before === undefined ? {} : { before: query.before }) })
        return {
          data: page.entries.map((entry) => ({
            id: entry.id,
            at: entry.at.toISOString(),
            actor: { id: entry.actor_id, name: entry.actor_name },
            ip: entry.ip,
            action: entry.action,
            target_type: entry.target_type,
            target_id: entry.target_id,
            details: entry.details,
          })),
          has_more: page.has_more,
        }
      },
    },
  ],
}
