import type { FastifyInstance, RouteHandlerMethod } from 'fastify'
import type { RouteSchemas } from '../api/route-spec.js'
import type { AdminContext } from './admin-context.js'

/** The one tag of the admin document: its audience is the host's settings screens. */
export const ADMIN_TAG = 'Integrations admin'

/**
 * One route of the admin API, declared once, like the public API's `RouteSpec`: the admin
 * stages (`./stages.ts`) guard every one alike, and the admin document (`./document.ts`)
 * reads the summary and schemas from the same declaration. No scope: the host's session
 * decides who may call it.
 *
 * @example
 * const route: AdminRouteSpec = {
 *   method: 'GET', url: '/modules', summary: "The company's platform modules (read-only)",
 *   schema: { response: { 200: S.data(Type.Array(ModuleState)) } },
 *   handler: async (request) => ({ data: … }),
 * }
 */
export interface AdminRouteSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** Path under the admin prefix, e.g. `/keys/:key_id/rotate`. */
  url: string
  /** One line the admin document shows. */
  summary: string
  schema: RouteSchemas
  handler: RouteHandlerMethod
}

/** One resource of the admin API (keys, endpoints, deliveries…): its routes, in document order. */
export interface AdminResource {
  name: string
  routes(context: AdminContext): AdminRouteSpec[]
}

/** Mounts `spec` on the admin API's guarded context. */
export function mountAdminRoute(app: FastifyInstance, spec: AdminRouteSpec): void {
  app.route({ method: spec.method, url: spec.url, schema: { tags: [ADMIN_TAG], summary: spec.summary, ...spec.schema }, handler: spec.handler })
}
