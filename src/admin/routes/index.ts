import type { FastifyInstance } from 'fastify'
import type { AdminContext } from '../admin-context.js'
import { mountAdminRoute, type AdminResource } from '../admin-route.js'
import { audit } from './audit.js'
import { deliveries } from './deliveries.js'
import { endpoints } from './endpoints.js'
import { keys } from './keys.js'
import { meta } from './meta.js'
import { usage } from './usage.js'

/**
 * Every resource of the admin API (docs/admin-api.md), in the order of its document. This one
 * list drives registration, and so the admin OpenAPI document and the portal's generated types.
 */
export const ADMIN_RESOURCES: readonly AdminResource[] = [meta, keys, endpoints, deliveries, usage, audit]

/**
 * Mounts every admin route on `app` (the guarded context), each scoped to the company the
 * host's `authorize` returned: another company's key or endpoint answers like an unknown one.
 */
export function registerAdminRoutes(app: FastifyInstance, context: AdminContext): void {
  for (const resource of ADMIN_RESOURCES) {
    for (const route of resource.routes(context)) mountAdminRoute(app, route)
  }
}
