import { StorageUnavailable } from '../ports/errors.js'
import type { ListResult, ResourceReader } from '../ports/storage.js'
import { MAX_PER_PAGE } from './pagination.js'

/**
 * Searches started again from scratch, at most, when the list changed between two of one
 * search's reads so that they contradict each other. Each search is a handful of `list()` calls
 * against a list that changes between requests, not within microseconds: reaching the limit
 * means the rows move faster than they can be read, answered with a 503 and `Retry-After`.
 */
export const KEYSET_SEARCH_ATTEMPTS = 4

type Lister<T> = Pick<ResourceReader<T, unknown>, 'list'>

/** Rows found right after an id in one `list()` answer: `offset` is where the first of them was. */
interface Found<T> {
  rows: T[]
  offset: number
  total: number
  /** The answer ended before its window did: nothing follows `rows`. */
  end: boolean
}

/**
 * Keyset paging for a reader without `seek` (the memory adapter, a host's own reader): the
 * first `limit` rows with an id above `after`, and the list's total, through `list()` alone.
 *
 * `list()` takes offsets, so the offset where ids pass `after` is found by a binary search over
 * windows of the list (about log2(total / window) calls), and the rows are taken from one
 * answer that also holds the row before them, or starts the list: that answer proves no row
 * above `after` came earlier. A longer page is read on in windows that overlap by one row whose
 * id must still be there. A change between two calls is therefore either harmless or seen, and
 * a contradiction starts the search again. Windows stay within the `list()` contract (at most
 * `MAX_PER_PAGE` rows, docs/adapters.md section 2).
 *
 * @example
 * const { rows, total } = await rowsAfterByList(storage.todos, companyId, {}, 1042, 26)
 */
export async function rowsAfterByList<T extends { id: number }, F>(reader: Lister<T>, companyId: number, filter: F, after: number, limit: number): Promise<ListResult<T>> {
  // The rows wanted and the row before them, so the search's last read answers alone; at least
  // two rows, the one before the boundary and the one after it.
  const span = Math.max(2, Math.min(limit + 1, MAX_PER_PAGE))
  let found = await locate(reader, companyId, filter, after, span)
  const { total } = found
  const rows = [...found.rows]
  while (rows.length < limit && !found.end && rows.length > 0) {
    const last = (rows.at(-1) as T).id
    // Read on from the last row taken; if it is no longer where it was, find what follows it anew.
    const anchor = found.offset + found.rows.length - 1
    const next = await reader.list(companyId, filter, { offset: anchor, limit: span })
    found =
      next.rows[0]?.id === last
        ? { rows: next.rows.slice(1), offset: anchor + 1, total: next.total, end: next.rows.length < span }
        : await locate(reader, companyId, filter, last, span)
    rows.push(...found.rows)
  }
  return { rows: rows.slice(0, limit), total }
}

/** The rows right after `after` in one `list()` answer, found by a binary search over offsets. */
async function locate<T extends { id: number }, F>(reader: Lister<T>, companyId: number, filter: F, after: number, span: number): Promise<Found<T>> {
  for (let attempt = 0; attempt < KEYSET_SEARCH_ATTEMPTS; attempt++) {
    // Rows before `low` have ids at or below `after`; rows from `high` on, ids above it.
    let low = 0
    let high: number | undefined
    // Each read narrows the range or answers; a range turned inside out means the list changed.
    while (high === undefined || low <= high) {
      // The first read learns the total; then halve the range; once it is empty, read the row
      // before the boundary together with the rows after it.
      const offset = high === undefined ? 0 : low < high ? low + Math.floor((high - low) / 2) : Math.max(0, low - 1)
      const { rows, total } = await reader.list(companyId, filter, { offset, limit: span })
      high ??= total
      const first = rows.findIndex((row) => row.id > after)
      if (first > 0 || (first === 0 && offset === 0)) {
        // A row at or below `after` and then the rows above it, or the very start of the list.
        return { rows: rows.slice(first), offset: offset + first, total, end: rows.length < span }
      }
      if (first === 0) {
        high = Math.min(high, offset)
      } else if (rows.length === span) {
        low = offset + span
      } else if (rows.length > 0 || offset === 0) {
        // The list ends in this window, every row of it at or below `after`: nothing follows.
        return { rows: [], offset: offset + rows.length, total, end: true }
      } else {
        high = Math.min(high, offset) // past the end
      }
    }
  }
  throw new StorageUnavailable(`The list changed during each of ${KEYSET_SEARCH_ATTEMPTS} searches for the rows after id ${after}`)
}
