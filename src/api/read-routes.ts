import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { NotFoundError, ValidationError } from '../errors.js'
import { getOperationId, listOperationId } from './operation-ids.js'
import type { ListDeclaration, ResourceDeclaration } from './resource.js'
import { TooManyListReads, type CompanyReadLimiter } from './company-read-limiter.js'
import { filterContext } from './filters.js'
import { DEFAULT_PAGE, DEFAULT_PER_PAGE, ItemEnvelope, keysetPaginated, ListEnvelope, PageQuery, pageWindow, paginated } from './pagination.js'
import { answerKey, type AnswerCache } from './answer-cache.js'
import { serializeAnswer, type SerializedAnswer } from './conditional.js'
import { rowsAfterByList } from './keyset-fallback.js'
import { filterKey, ListPages } from './list-pages.js'
import { companyOf, type ApiContext, type RouteSpec } from './route-spec.js'
import { IdParams, NoQuery } from './wire.js'

interface PageParams {
  page?: number
  per_page?: number
  starting_after?: number
}

/** The list and by-id routes of `resource`, read through `list`. */
export function readRoutes<R extends { id: number }, F, P extends TProperties, W extends TSchema>(
  resource: Pick<ResourceDeclaration<string, R, F, P, W>, 'name' | 'singular' | 'scope' | 'item' | 'render'>,
  list: ListDeclaration<R, F, P>,
  context: ApiContext,
): RouteSpec[] {
  const { storage } = context
  const reader = list.reader(storage)
  const pages = context.pages ?? new ListPages()
  const { reads, answers } = context
  const { seek } = reader
  /**
   * With a version to key it by (`seek`), an answer is kept (`AnswerCache`): while the company's
   * rows are unchanged a read, or its 304, costs one version lookup. `answer` builds it otherwise.
   */
  const remembered =
    seek === undefined || answers === undefined
      ? (_companyId: number, _question: string, answer: () => Promise<SerializedAnswer>) => answer()
      : async (companyId: number, question: string, answer: () => Promise<SerializedAnswer>) => {
          const key = answerKey(name, companyId, question, await seek.version(companyId))
          const kept = answers.get(key)
          if (kept !== undefined) return kept
          const fresh = await answer()
          answers.set(key, fresh)
          return fresh
        }
  const querystring = Type.Object({ ...PageQuery, ...list.filters }, { additionalProperties: false })
  const { name, scope } = resource
  return [
    {
      method: 'GET',
      url: `/v1/${name}`,
      operationId: listOperationId(name),
      summary: `List ${name}`,
      tag: name,
      scope,
      schema: { querystring, response: { 200: ListEnvelope(resource.item) } },
      async handler(request, reply) {
        const { page, per_page: perPage = DEFAULT_PER_PAGE, starting_after: startingAfter, ...query } = request.query as PageParams
        if (page !== undefined && startingAfter !== undefined) {
          // Two answers to "where does this page start": refused rather than one silently ignored.
          throw new ValidationError([{ field: 'starting_after', message: 'cannot be combined with page' }])
        }
        const companyId = companyOf(request)
        const filter = await list.toFilter(query as unknown as Static<TObject<P>>, filterContext(storage, companyId))
        const run = <T>(read: () => Promise<T>) => (reads === undefined ? read() : limited(reads, companyId, read, reply))
        const where = filterKey(filter)
        if (startingAfter !== undefined) {
          return remembered(companyId, `after ${startingAfter} ${perPage} ${where}`, async () => {
            // One row more than the page: whether another follows (`has_more`).
            const limit = perPage + 1
            const result = await run(() =>
              seek === undefined
                ? rowsAfterByList(reader, companyId, filter, startingAfter, limit)
                : pages.after(name, seek, companyId, filter, startingAfter, limit),
            )
            return serializeAnswer(reply, keysetPaginated(result, startingAfter, perPage, resource.render))
          })
        }
        const pageNumber = page ?? DEFAULT_PAGE
        return remembered(companyId, `page ${pageNumber} ${perPage} ${where}`, async () => {
          const window = pageWindow(pageNumber, perPage)
          const result = await run(() => (seek === undefined ? reader.list(companyId, filter, window) : pages.list(name, seek, companyId, filter, window)))
          return serializeAnswer(reply, paginated(result, pageNumber, perPage, resource.render))
        })
      },
    },
    {
      method: 'GET',
      url: `/v1/${name}/:id`,
      operationId: getOperationId(name),
      summary: `Get one ${resource.singular}`,
      tag: name,
      scope,
      schema: { querystring: NoQuery, params: IdParams, response: { 200: ItemEnvelope(resource.item) } },
      async handler(request, reply) {
        const { id } = request.params as Static<typeof IdParams>
        const companyId = companyOf(request)
        return remembered(companyId, `id ${id}`, async () => {
          const record = await reader.get(companyId, id)
          if (record === null) throw new NotFoundError('Resource not found')
          return serializeAnswer(reply, { data: resource.render(record) })
        })
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
