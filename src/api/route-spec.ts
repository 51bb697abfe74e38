import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify'
import type { AuthenticatedKey } from '../auth/key-verifier.js'
import type { Clock } from '../ports/clock.js'
import type { InviteSender } from '../ports/invite-sender.js'
import type { Storage } from '../ports/storage.js'
import type { ChangeEvent, WriteStorage } from '../ports/write-storage.js'
import type { AnswerCache } from './answer-cache.js'
import type { CompanyReadLimiter } from './company-read-limiter.js'
import { conditionalHandler } from './conditional.js'
import type { ListPages } from './list-pages.js'

export interface RouteSchemas {
  querystring?: TSchema
  params?: TSchema
  body?: TSchema
  /** Success bodies by status; errors are the envelope (`ErrorEnvelope` in `src/errors.ts`). */
  response: Record<number, TSchema>
}

/**
 * One route of the public API, declared once. The corridor reads it to guard the route
 * (the scope → authenticate and authorize; a mutating method → idempotency), and the same
 * declaration carries what a reference document needs (operation id, summary, tag, schemas).
 *
 * @example
 * const route: RouteSpec = {
 *   method: 'GET', url: '/v1/company', operationId: 'getCompany', summary: 'Get your company',
 *   tag: 'company', scope: 'company:read',
 *   schema: { querystring: NoQuery, response: { 200: ItemEnvelope(Company) } },
 *   handler: async (request) => ({ data: … }),
 * }
 */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'PATCH'
  /** Path under the plugin's prefix, e.g. `/v1/todos/:id`. */
  url: string
  /** Stable and unique, e.g. `listTodos`. */
  operationId: string
  /** One line a reader understands without the spec. */
  summary: string
  /** The resource the route belongs to: one tag per resource. */
  tag: string
  /**
   * The one scope the key must hold (its resource's read or write scope); its platform module
   * must be active (spec 5). Absent on the events feed only: any valid key may call it, and it
   * shows each key the event types its scopes and modules allow.
   */
  scope?: string
  /** The route resumes from a cursor that can expire: it may answer 410 `cursor_expired`. */
  expiringCursor?: boolean
  schema: RouteSchemas
  /** Largest accepted body in bytes; larger is a 413. */
  bodyLimit?: number
  handler: RouteHandlerMethod
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The declaration of a route mounted by `mountRoute`: the corridor's `onRoute` listener reads it. */
    workforceRoute?: RouteSpec
  }
}

/**
 * Mounts `spec` on `app` (the API's encapsulated context). A GET's answer is tagged and may be
 * answered 304 (`conditionalHandler`): every read, ours or a host's, takes `If-None-Match`.
 */
export function mountRoute(app: FastifyInstance, spec: RouteSpec): void {
  app.route({
    method: spec.method,
    url: spec.url,
    schema: { ...spec.schema, operationId: spec.operationId, summary: spec.summary, tags: [spec.tag] },
    config: { workforceRoute: spec },
    ...(spec.bodyLimit === undefined ? {} : { bodyLimit: spec.bodyLimit }),
    handler: spec.method === 'GET' ? conditionalHandler(spec.handler) : spec.handler,
  })
}

/** The declaration of a route mounted by `mountRoute`, or `undefined` for any other route. */
export function routeSpecOf(route: RouteOptions): RouteSpec | undefined {
  return (route.config as { workforceRoute?: RouteSpec } | undefined)?.workforceRoute
}

/** Renders an event inside the transaction of its change (`ResourceCatalogue.renderEvent`). */
export interface EventRenderer {
  /** `previous`: for an `*.updated` event, the record before the change (`previous_attributes`). */
  renderEvent(input: { type: string; companyId: number; record: unknown; previous?: unknown }, now: Date): ChangeEvent
}

/** What the write routes need beyond storage: present only when the host configured writes. */
export interface WriteContext {
  writes: WriteStorage
  clock: Clock
  /** Renders the events a write records (the plugin's resource catalogue). */
  events: EventRenderer
  invites: InviteSender
  /** Public path of a resource, for `Location` headers. */
  locationOf(path: string): string
}

/** What a resource needs to declare its routes. */
export interface ApiContext {
  storage: Storage
  /** Totals and page boundaries of large lists, shared by the resources of one app (`list-pages.ts`). */
  pages?: ListPages
  /** Each company's share of list reads in flight, shared by the resources of one app (`company-read-limiter.ts`); without it, unlimited. */
  reads?: CompanyReadLimiter
  /** Answers kept by version, shared by the resources of one app (`answer-cache.ts`); without it, every read runs its query. */
  answers?: AnswerCache
  /** Without it the API is read-only and no write route is declared. */
  writes?: WriteContext
}

/** The tenant of an authenticated request (set by the corridor's authenticate stage). */
export function companyOf(request: FastifyRequest): number {
  return (request.workforceAuth as AuthenticatedKey).companyId
}
