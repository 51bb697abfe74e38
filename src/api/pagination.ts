import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { ListResult, PageWindow } from '../ports/storage.js'

export const DEFAULT_PAGE = 1
export const DEFAULT_PER_PAGE = 25
export const MAX_PER_PAGE = 100
/** Keeps `(page - 1) * per_page` a safe integer in every database. */
export const MAX_PAGE = 2_147_483_647

/**
 * `page` on a keyset answer: its rows are found from an id, not counted from the start, so it
 * has no page number. `page` stays an integer (spec 4.2); 0 is never a real page (they are 1-based).
 */
export const KEYSET_PAGE = 0

/**
 * `page` and `per_page` (spec 4.2), shared by every list endpoint's query schema, and the
 * additive keyset parameter `starting_after` (docs/api.md, section 4).
 */
export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE })),
  starting_after: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        'Keyset paging: only records with an id above this one (`0`: from the first), in id order, with the same filters and `per_page`. ' +
        'The id need not exist (a deleted record\'s id works). Pass the previous answer\'s `pagination.next_starting_after` to read on: ' +
        'a deletion during the walk cannot make you miss a record. Not with `page`.',
    }),
  ),
}

export const Pagination = Type.Object({
  page: Type.Integer({ description: 'The page number; `0` on an answer to `starting_after`, whose rows are not counted from the start.' }),
  per_page: Type.Integer(),
  total: Type.Integer({ description: 'Records matching the filters, across all pages (not only those after `starting_after`).' }),
  total_pages: Type.Integer({ description: '`ceil(total / per_page)`.' }),
  has_more: Type.Optional(Type.Boolean({ description: 'Only on an answer to `starting_after`: whether records follow the last one in `data`.' })),
  next_starting_after: Type.Optional(
    Type.Integer({
      description:
        'Only on an answer to `starting_after`: the `starting_after` of the next request, the id of the last record in `data` ' +
        '(the `starting_after` sent, when `data` is empty).',
    }),
  ),
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

/**
 * The envelope of a `starting_after` answer: the page's fields keep their types (`page` is
 * `KEYSET_PAGE`; `total` and `total_pages` describe the whole list), and two fields say how
 * to read on. `result.rows` holds up to `perPage + 1` rows: the extra one only says more follow.
 */
export function keysetPaginated<T extends { id: number }, W>(result: ListResult<T>, startingAfter: number, perPage: number, render: (row: T) => W) {
  const rows = result.rows.slice(0, perPage)
  return {
    data: rows.map(render),
    pagination: {
      page: KEYSET_PAGE,
      per_page: perPage,
      total: result.total,
      total_pages: Math.ceil(result.total / perPage),
      has_more: result.rows.length > perPage,
      next_starting_after: rows.at(-1)?.id ?? startingAfter,
    } satisfies Static<typeof Pagination>,
  }
}
