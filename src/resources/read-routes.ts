import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { NotFoundError, ValidationError } from '../errors.js'
import { DEFAULT_PAGE, DEFAULT_PER_PAGE, ItemEnvelope, ListEnvelope, PageQuery, pageWindow, paginated } from '../http/pagination.js'
import { IdParams } from '../http/schema.js'
import type { ResourceReader, Storage } from '../ports/storage.js'
import type { Scope } from '../scopes.js'
import { parseInstant } from '../time/calendar.js'

/** What a list filter may need beyond the query: the tenant and its time zone. */
export interface FilterContext {
  companyId: number
  /** The company's IANA time zone; loaded only when a day filter on an instant asks for it. */
  companyTimeZone(): Promise<string>
}

/**
 * One read-only resource: its wire schema, its filters, and how records become wire objects.
 * `registerReadRoutes` turns it into `GET /v1/<name>` and `GET /v1/<name>/:id`.
 */
export interface ReadResource<R, F, P extends TProperties, W extends TSchema> {
  name: string
  scope: Scope
  item: W
  /** Filter parameters beyond `page` and `per_page`. */
  filters: P
  reader(storage: Storage): ResourceReader<R, F>
  /** Turns validated query parameters into the port's filter; throws `ValidationError` on a cross-field error. */
  toFilter(query: Static<TObject<P>>, context: FilterContext): F | Promise<F>
  render(record: R): Static<W>
}

interface PageParams {
  page?: number
  per_page?: number
}

/** Declared on each route; the auth hook reads it to check the scope and the scope's module. */
export interface RouteAccess {
  scope: Scope
}

export function registerReadRoutes<R, F, P extends TProperties, W extends TSchema>(
  app: FastifyInstance,
  storage: Storage,
  companyOf: (request: FastifyRequest) => number,
  resource: ReadResource<R, F, P, W>,
): void {
  const reader = resource.reader(storage)
  const querystring = Type.Object({ ...PageQuery, ...resource.filters }, { additionalProperties: false })
  const config: RouteAccess = { scope: resource.scope }

  app.get(
    `/v1/${resource.name}`,
    { schema: { querystring, response: { 200: ListEnvelope(resource.item) } }, config },
    async (request) => {
      const { page = DEFAULT_PAGE, per_page: perPage = DEFAULT_PER_PAGE, ...query } = request.query as PageParams
      const companyId = companyOf(request)
      const filter = await resource.toFilter(query as unknown as Static<TObject<P>>, filterContext(storage, companyId))
      const result = await reader.list(companyId, filter, pageWindow(page, perPage))
      return paginated(result, page, perPage, resource.render)
    },
  )

  app.get(
    `/v1/${resource.name}/:id`,
    { schema: { params: IdParams, response: { 200: ItemEnvelope(resource.item) } }, config },
    async (request) => {
      const { id } = request.params as Static<typeof IdParams>
      const record = await reader.get(companyOf(request), id)
      if (record === null) throw new NotFoundError('Resource not found')
      return { data: resource.render(record) }
    },
  )
}

function filterContext(storage: Storage, companyId: number): FilterContext {
  return {
    companyId,
    async companyTimeZone() {
      const company = await storage.company(companyId)
      if (company === null) throw new NotFoundError('Company not found')
      return company.timezone
    },
  }
}

/** `updated_since`, already format-checked, as the instant the port compares with `>=`. */
export function updatedSince(value: string | undefined): Date | undefined {
  return value === undefined ? undefined : (parseInstant(value) ?? undefined)
}

/** Rejects a window whose first day is after its last (`date_from`/`date_to`, `due_from`/`due_to`). */
export function checkDayRange(fromName: string, from: string | undefined, toName: string, to: string | undefined): void {
  if (from !== undefined && to !== undefined && from > to) {
    throw new ValidationError([{ field: fromName, message: `must not be after ${toName}` }])
  }
}

/** A `Date` as the wire's UTC, millisecond, `Z` timestamp. */
export function timestamp(date: Date): string {
  return date.toISOString()
}
