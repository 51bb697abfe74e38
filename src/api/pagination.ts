import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { ListResult, PageWindow } from '../ports/storage.js'

export const DEFAULT_PAGE = 1
export const DEFAULT_PER_PAGE = 25
export const MAX_PER_PAGE = 100
/** Keeps `(page - 1) * per_page` a safe integer in every database. */
export const MAX_PAGE = 2_147_483_647

/** `page` and `per_page` (spec 4.2), shared by every list endpoint's query schema. */
export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE })),
}

export const Pagination = Type.Object({
  page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  total_pages: Type.Integer(),
})

/** `{ data: [...], pagination }`: the list envelope of spec 4.2. */
export function ListEnvelope<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), pagination: Pagination })
}

/** `{ data: {...} }`: the single-resource envelope. */
export function ItemEnvelope<T extends TSchema>(item: T) {
  return Type.Object({ data: item })
}

export function pageWindow(page: number, perPage: number): PageWindow {
  return { limit: perPage, offset: (page - 1) * perPage }
}

export function paginated<T, W>(result: ListResult<T>, page: number, perPage: number, render: (row: T) => W) {
  return {
    data: result.rows.map(render),
    pagination: {
      page,
      per_page: perPage,
      total: result.total,
      total_pages: Math.ceil(result.total / perPage),
    } satisfies Static<typeof Pagination>,
  }
}
