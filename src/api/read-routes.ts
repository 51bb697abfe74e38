import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { NotFoundError } from '../errors.js'
import type { ResourceReader, Storage } from '../ports/storage.js'
import type { Scope } from '../scopes.js'
import { TooManyListReads, type CompanyReadLimiter } from './company-read-limiter.js'
import { filterContext, type FilterContext } from './filters.js'
import { DEFAULT_PAGE, DEFAULT_PER_PAGE, ItemEnvelope, ListEnvelope, PageQuery, pageWindow, paginated } from './pagination.js'
import { ListPages } from './list-pages.js'
import { companyOf, type ApiContext, type ApiResource, type RouteSpec } from './route-spec.js'
import { IdParams, NoQuery } from './wire.js'

/** The `Storage` members that are list-and-get readers. */
export type ReaderName = Exclude<keyof Storage, 'company'>

/**
 * A readable resource: its wire schema, its filters, and how records become wire objects.
 * `readRoutes` turns it into `GET /v1/<name>` and `GET /v1/<name>/:id`.
 */
export interface ReadResource<R, F, P extends TProperties, W extends TSchema> {
  name: ReaderName
  /** One record, in prose: `user`, `to-do`. */
  singular: string
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

/** The list and by-id routes of `resource`. */
export function readRoutes<R extends { id: number }, F, P extends TProperties, W extends TSchema>(
  resource: ReadResource<R, F, P, W>,
  context: ApiContext,
): RouteSpec[] {
  const { storage } = context
  const reader = resource.reader(storage)
  const pages = context.pages ?? new ListPages()
  const { reads } = context
  const { seek } = reader
  const querystring = Type.Object({ ...PageQuery, ...resource.filters }, { additionalProperties: false })
  const { name, scope } = resource
  const title = `${name[0]?.toUpperCase()}${name.slice(1)}`
  return [
    {
      method: 'GET',
      url: `/v1/${name}`,
      operationId: `list${title}`,
      summary: `List ${name}`,
      tag: name,
      scope,
      schema: { querystring, response: { 200: ListEnvelope(resource.item) } },
      async handler(request, reply) {
        const { page = DEFAULT_PAGE, per_page: perPage = DEFAULT_PER_PAGE, ...query } = request.query as PageParams
        const companyId = companyOf(request)
        const filter = await resource.toFilter(query as unknown as Static<TObject<P>>, filterContext(storage, companyId))
        const window = pageWindow(page, perPage)
        const list = () => (seek === undefined ? reader.list(companyId, filter, window) : pages.list(name, seek, companyId, filter, window))
        const result = reads === undefined ? await list() : await limited(reads, companyId, list, reply)
        return paginated(result, page, perPage, resource.render)
      },
    },
    {
      method: 'GET',
      url: `/v1/${name}/:id`,
      operationId: `get${title.replace(/s$/, '')}`,
      summary: `Get one ${resource.singular}`,
      tag: name,
      scope,
      schema: { querystring: NoQuery, params: IdParams, response: { 200: ItemEnvelope(resource.item) } },
      async handler(request) {
        const { id } = request.params as Static<typeof IdParams>
        const record = await reader.get(companyOf(request), id)
        if (record === null) throw new NotFoundError('Resource not found')
        return { data: resource.render(record) }
      },
    },
  ]
}

/**
 * A list read within the company's share of the storage (`CompanyReadLimiter`). Lists only: a
 * by-id read is one primary-key lookup, whose cost does not grow with the company.
 */
async function limited<T>(reads: CompanyReadLimiter, companyId: number, list: () => Promise<T>, reply: FastifyReply): Promise<T> {
  try {
    return await reads.run(companyId, list)
  } catch (error) {
    if (error instanceof TooManyListReads) reply.header('retry-after', String(error.retryAfterSeconds))
    throw error
  }
}

/** A resource that is only read: its two routes. */
export function readOnlyResource<R extends { id: number }, F, P extends TProperties, W extends TSchema>(resource: ReadResource<R, F, P, W>): ApiResource {
  return {
    name: resource.name,
    storage: { [resource.name]: 'reader' },
    routes: (context) => readRoutes(resource, context),
  }
}
