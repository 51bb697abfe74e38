import { Type } from '@sinclair/typebox'
import { withoutCompany, type AdminContext } from '../admin-context.js'
import type { AdminResource, AdminRouteSpec } from '../admin-route.js'
import * as S from '../schemas.js'

const HOUR_MS = 60 * 60 * 1000
const USAGE_DAYS = 7

/** Requests per key per hour, as the usage port recorded them (`recorded: false` without one). */
export const usage: AdminResource = {
  name: 'usage',
  routes: ({ api, session }: AdminContext): AdminRouteSpec[] => {
    const { ports, clock } = api
    return [
      {
        method: 'GET',
        url: '/usage',
        summary: 'Requests per key per hour over the last 7 days',
        schema: {
          response: { 200: Type.Object({ data: Type.Array(S.UsageRowView), since: Type.String({ format: 'date-time' }), recorded: Type.Boolean() }) },
        },
        handler: async (request) => {
          const now = clock.now()
          const since = new Date(now - (now % HOUR_MS) - USAGE_DAYS * 24 * HOUR_MS)
          if (ports.usage === undefined) return { data: [], since: since.toISOString(), recorded: false }
          const rows = await ports.usage.hourly(session(request).companyId, since)
          return {
            data: rows.map(withoutCompany).map((row) => ({
              ...row,
              hour: row.hour.toISOString(),
              last_rate_limited_at: row.last_rate_limited_at?.toISOString() ?? null,
              // A store written before the count was added has none (src/ports/usage-store.ts).
              not_modified: row.not_modified ?? 0,
            })),
            since: since.toISOString(),
            recorded: true,
          }
        },
      },
    ]
  },
}
