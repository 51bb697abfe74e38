import { LRUCache } from 'lru-cache'
import type { ListResult, ListVersion, PageWindow, SeekableReader, SeekWindow } from '../ports/storage.js'

/** Lists (company, resource, filter) whose totals and boundaries one process remembers. */
export const LIST_CACHE_ENTRIES = 5_000
/** Boundaries remembered in all, across lists (about 40 bytes each). */
export const MAX_MARKS = 1_000_000
/**
 * Boundaries remembered per list. A walk of 1,000,000 rows at `per_page=100` leaves 10,000;
 * past this, every other one is dropped, which keeps a sequential walk's own boundary (always
 * the newest) and at most doubles the distance a jump seeks.
 */
export const MAX_MARKS_PER_LIST = 20_000

/** Where a page can start seeking: the rows at `offset` and after are exactly those with an id above `after`. */
interface Mark {
  offset: number
  after: number
}

interface ListMemory {
  /** The exact total at a version (`countKey`), and that version's rank. */
  total?: { version: string; rank: number; value: number }
  /** Boundaries valid while the list's rows keep their order at `walkVersion`. */
  walkVersion?: string
  walkRank: number
  marks: Mark[]
}

const countKey = (v: ListVersion) => `${v.appends}.${v.updates}.${v.removals}`
/**
 * Orders versions: every counter only grows, so of two versions seen, the later has the larger
 * sum. A slow request never replaces what a later one remembered.
 */
const rank = (v: ListVersion) => v.appends + v.updates + v.removals
/**
 * Which changes move rows to other offsets. New rows append (spec 4.2.1), so an append never
 * does. An update can move a row in or out of a filter; it cannot change an unfiltered list.
 */
const walkKey = (v: ListVersion, filtered: boolean) => (filtered ? `${v.updates}.${v.removals}` : `${v.removals}`)

/**
 * Serves list pages through an adapter's `SeekableReader` at a cost that does not grow with the
 * company (docs/decisions.md, "Lists at scale"): the exact total is counted once per version of
 * the company's rows, and a page seeks from the nearest boundary an earlier page left, instead
 * of skipping every row before it. Each answer is checked against the version of the snapshot
 * it came from; when a change moved rows meanwhile, the page is computed again from the start.
 * Per process: versions live in the database, so another instance's change is seen at once.
 */
export class ListPages {
  readonly #memory = new LRUCache<string, ListMemory>({
    max: LIST_CACHE_ENTRIES,
    maxSize: MAX_MARKS,
    sizeCalculation: (memory) => memory.marks.length + 1,
  })

  async list<T extends { id: number }, F>(
    resource: string,
    seek: SeekableReader<T, F>,
    companyId: number,
    filter: F,
    window: PageWindow,
  ): Promise<ListResult<T>> {
    const { key, memory, filtered } = this.#memoryOf(resource, companyId, filter)
    if (memory.total === undefined && window.offset > 0) {
      // A jump into a list this process knows nothing of: its total first, so the page can be
      // found from whichever end is nearer (at most half the rows to skip, not all of them).
      await this.#total(seek, companyId, filter, memory, undefined)
    }
    const result = await this.#counted(seek, companyId, filter, memory, () => this.#page(seek, companyId, filter, window, memory, filtered))
    // Set again: the size counts the boundaries this page added.
    this.#memory.set(key, memory)
    return result
  }

  /**
   * The first `limit` rows with an id above `after` (keyset paging: `after` need not be a row's
   * id), and the list's exact total, remembered with the pages' own. One seek: no offset is
   * known, so no boundary is remembered or used.
   */
  async after<T extends { id: number }, F>(resource: string, seek: SeekableReader<T, F>, companyId: number, filter: F, after: number, limit: number): Promise<ListResult<T>> {
    const { key, memory } = this.#memoryOf(resource, companyId, filter)
    const result = await this.#counted(seek, companyId, filter, memory, () => seek.page(companyId, filter, { after, skip: 0, limit }))
    this.#memory.set(key, memory)
    return result
  }

  #memoryOf<F>(resource: string, companyId: number, filter: F): { key: string; memory: ListMemory; filtered: boolean } {
    const text = filterKey(filter)
    const key = `${companyId}\u0000${resource}\u0000${text}`
    return { key, memory: this.#memory.get(key) ?? { walkRank: -1, marks: [] }, filtered: text !== '{}' }
  }

  /** `read`'s rows with the total of the same version: when a change landed between the two, both are read again. */
  async #counted<T, F>(
    seek: SeekableReader<T, F>,
    companyId: number,
    filter: F,
    memory: ListMemory,
    read: () => Promise<{ rows: T[]; version: ListVersion | null }>,
  ): Promise<ListResult<T>> {
    let page = await read()
    let total: number
    if (page.version === null) {
      // No row matched: a past-the-end page (or an empty list), found without a boundary.
      total = await this.#total(seek, companyId, filter, memory, await seek.version(companyId))
    } else {
      total = await this.#total(seek, companyId, filter, memory, page.version)
      if (memory.total?.version !== countKey(page.version)) {
        // A change landed between the page and the count: answer both from one later moment.
        page = await read()
        if (page.version !== null) total = await this.#total(seek, companyId, filter, memory, page.version)
      }
    }
    return { rows: page.rows, total }
  }

  /** The total at `version` (remembered, or counted now); with no version, counted now. */
  async #total<T, F>(seek: SeekableReader<T, F>, companyId: number, filter: F, memory: ListMemory, version: ListVersion | undefined): Promise<number> {
    if (version !== undefined && memory.total !== undefined && memory.total.version === countKey(version)) return memory.total.value
    const counted = await seek.count(companyId, filter)
    if (memory.total === undefined || rank(counted.version) > memory.total.rank) {
      memory.total = { version: countKey(counted.version), rank: rank(counted.version), value: counted.total }
    }
    return counted.total
  }

  async #page<T extends { id: number }, F>(
    seek: SeekableReader<T, F>,
    companyId: number,
    filter: F,
    window: PageWindow,
    memory: ListMemory,
    filtered: boolean,
  ): Promise<{ rows: T[]; version: ListVersion | null }> {
    // What this plan relies on, taken now: other requests may change the memory meanwhile.
    const mark = nearestMark(memory.marks, window.offset)
    const markVersion = memory.walkVersion
    const counted = memory.total
    const fromEnd = counted !== undefined && mark.offset < window.offset ? endWindow(counted.value, window) : undefined
    const seekDistance = window.offset - mark.offset
    // From the end when that is shorter than from the nearest boundary: a jump to the last page.
    const plan: SeekWindow =
      fromEnd !== undefined && fromEnd.skip < seekDistance
        ? { after: 0, skip: fromEnd.skip, limit: fromEnd.limit, fromEnd: true }
        : { after: mark.after, skip: seekDistance, limit: window.limit, ...(mark === START ? {} : { walkIds: true }) }
    const answer = await seek.page(companyId, filter, plan)
    const trusted =
      plan.fromEnd !== true && plan.after === 0
        ? true // from the very start: valid in every version
        : answer.version !== null &&
          (plan.fromEnd === true
            ? counted !== undefined && counted.version === countKey(answer.version)
            : markVersion === walkKey(answer.version, filtered))
    if (!trusted) {
      // The boundary (or the total the end was counted from) may be stale: from the start.
      const exact = await seek.page(companyId, filter, { after: 0, skip: window.offset, limit: window.limit })
      this.#remember(memory, exact, window.offset, filtered)
      return exact
    }
    this.#remember(memory, answer, window.offset, filtered)
    return answer
  }

  /**
   * The boundaries a page reveals: before its first row and after its last. The one before the
   * first row of page 1 says where the filter's matches start, so page 1 seeks there next time.
   */
  #remember<T extends { id: number }>(memory: ListMemory, page: { rows: T[]; version: ListVersion | null }, offset: number, filtered: boolean): void {
    if (page.version === null || page.rows.length === 0) return
    const version = walkKey(page.version, filtered)
    if (memory.walkVersion !== version) {
      if (rank(page.version) < memory.walkRank) return
      memory.walkVersion = version
      memory.marks = []
    }
    memory.walkRank = Math.max(memory.walkRank, rank(page.version))
    const first = page.rows[0] as T
    const last = page.rows[page.rows.length - 1] as T
    addMark(memory.marks, { offset, after: first.id - 1 })
    addMark(memory.marks, { offset: offset + page.rows.length, after: last.id })
  }
}

/** The window counted from the end of a list of `total` rows, or undefined past the end. */
function endWindow(total: number, window: PageWindow): { skip: number; limit: number } | undefined {
  if (window.offset >= total) return undefined
  const end = Math.min(total, window.offset + window.limit)
  return { skip: total - end, limit: end - window.offset }
}

/** The start of every list: nothing known about where its rows are. */
const START: Mark = Object.freeze({ offset: 0, after: 0 })

function nearestMark(marks: readonly Mark[], offset: number): Mark {
  let low = 0
  let high = marks.length - 1
  let found: Mark = START
  while (low <= high) {
    const middle = (low + high) >> 1
    const mark = marks[middle] as Mark
    if (mark.offset <= offset) {
      found = mark
      low = middle + 1
    } else {
      high = middle - 1
    }
  }
  return found
}

/** Adds a boundary; one at offset 0 says where the first matching row is. */
function addMark(marks: Mark[], mark: Mark): void {
  let low = 0
  let high = marks.length
  while (low < high) {
    const middle = (low + high) >> 1
    if ((marks[middle] as Mark).offset < mark.offset) low = middle + 1
    else high = middle
  }
  if (marks[low]?.offset === mark.offset) return
  if (marks.length >= MAX_MARKS_PER_LIST) {
    const kept = marks.filter((_, index) => index % 2 === 1)
    marks.splice(0, marks.length, ...kept)
    addMark(marks, mark)
    return
  }
  marks.splice(low, 0, mark)
}

/** A stable text of a filter: its present fields in name order, instants as ISO strings. */
export function filterKey(filter: unknown): string {
  const entries = Object.entries(filter as Record<string, unknown>)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => [name, value instanceof Date ? value.toISOString() : value])
  return JSON.stringify(Object.fromEntries(entries))
}
