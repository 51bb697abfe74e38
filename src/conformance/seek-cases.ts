import type { SeekWindow } from '../ports/storage.js'
import type { ExpectedAnswers } from './expected.js'
import { EQUALITY_FILTERS } from './groups/equality-filters.js'
import { looseRecords, type LooseRecord } from './list-assertions.js'
import type { ListResource } from './resources.js'

/** A filter the `list seek` group asks both `list()` and `seek` about, and its name in messages. */
export interface SeekCase {
  name: string
  filter: object
}

/** The value a `fraction` of the way through `values`, sorted; `undefined` when there are none. */
function quantile<T extends string | number>(values: readonly T[], fraction: number): T | undefined {
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return sorted[Math.floor((sorted.length - 1) * fraction)]
}

/**
 * The equality value of `field` that selects closest to half the rows: selective by
 * construction, so a reader that ignores the filter answers differently.
 */
function halfwayValue(rows: readonly LooseRecord[], field: string, what: string): unknown {
  const counts = new Map<unknown, number>()
  for (const row of rows) if (row[field] !== null) counts.set(row[field], (counts.get(row[field]) ?? 0) + 1)
  let best: { value: unknown; distance: number } | undefined
  for (const [value, count] of counts) {
    const distance = Math.abs(count - rows.length / 2)
    if (count < rows.length && (best === undefined || distance < best.distance)) best = { value, distance }
  }
  if (best === undefined) throw new Error(`conformance suite bug: no value of ${what} selects part of the rows`)
  return best.value
}

const times = (rows: readonly LooseRecord[], field: string) =>
  rows.map((row) => row[field]).filter((value): value is Date => value instanceof Date).map((value) => value.getTime())
const texts = (rows: readonly LooseRecord[], field: string) => rows.map((row) => row[field]).filter((value): value is string => typeof value === 'string')

/** The middle half of a resource's range filter (days and instants), from the company's rows. */
function rangeCase(resource: ListResource, rows: readonly LooseRecord[]): SeekCase | undefined {
  switch (resource) {
    case 'shifts': {
      const from = quantile(times(rows, 'starts_at'), 0.25)
      const before = quantile(times(rows, 'starts_at'), 0.75)
      if (from === undefined || before === undefined) return undefined
      return { name: 'the middle half of starts_at', filter: { startsFrom: new Date(from), startsBefore: new Date(before) } }
    }
    case 'absences':
    case 'expenses': {
      const from = quantile(texts(rows, 'date'), 0.25)
      const to = quantile(texts(rows, 'date'), 0.75)
      if (from === undefined || to === undefined) return undefined
      return { name: 'the middle half of date', filter: { dateFrom: from, dateTo: to } }
    }
    case 'todos': {
      // Each bound carries a day (for all-day to-dos) and an instant (for timed ones).
      const allDay = rows.filter((row) => row.due_is_all_day === true)
      const days = texts(allDay, 'due_day')
      const instants = times(rows, 'due_at')
      const [fromDay, toDay, fromAt, toAt] = [quantile(days, 0.25), quantile(days, 0.75), quantile(instants, 0.25), quantile(instants, 0.75)]
      if (fromDay === undefined || toDay === undefined || fromAt === undefined || toAt === undefined) return undefined
      return {
        name: 'the middle half of due dates',
        filter: { dueFrom: { day: fromDay, instant: new Date(fromAt) }, dueTo: { day: toDay, instant: new Date(toAt) } },
      }
    }
    default:
      return undefined
  }
}

/**
 * The filters asked about `resource`, built from `companyId`'s rows: none; each equality filter
 * alone (at a value that selects about half); `email` for users; `updatedSince` at the median;
 * the resource's range filter over the middle half; and the first equality filter together with
 * `updatedSince`. The ranges are the shapes where a reader may walk another index than id order.
 */
export function seekCases(expected: ExpectedAnswers, resource: ListResource, companyId: number): SeekCase[] {
  const rows = looseRecords(expected, resource, companyId)
  const cases: SeekCase[] = [{ name: 'no filter', filter: {} }]
  if (rows.length === 0) throw new Error(`conformance suite bug: company ${companyId} has no ${resource} to build filters from`)
  const equalities = EQUALITY_FILTERS.filter((entry) => entry.resource === resource).map(({ filter, field }) => ({
    filter,
    value: halfwayValue(rows, field, `${resource}.${field} in company ${companyId}`),
  }))
  for (const { filter, value } of equalities) cases.push({ name: `${filter} ${JSON.stringify(value)}`, filter: { [filter]: value } })
  if (resource === 'users') {
    const email = String(rows[Math.floor(rows.length / 2)]?.email).toLowerCase()
    cases.push({ name: `email ${email}`, filter: { email } })
  }
  if (resource === 'roles') return cases
  const since = quantile(times(rows, 'updated_at'), 0.5)
  if (since === undefined) throw new Error(`conformance suite bug: ${resource} of company ${companyId} have no updated_at`)
  const updatedSince = new Date(since)
  cases.push({ name: 'updatedSince the median updated_at', filter: { updatedSince } })
  const range = rangeCase(resource, rows)
  if (range !== undefined) cases.push(range)
  const first = equalities[0]
  if (first !== undefined) {
    cases.push({ name: `${first.filter} ${JSON.stringify(first.value)} and updatedSince the median`, filter: { [first.filter]: first.value, updatedSince } })
  }
  return cases
}

/** Sorted, without repeats. */
const distinctIds = (values: readonly number[]) => [...new Set(values)].sort((a, b) => a - b)

/**
 * Forward windows over a list whose matching ids are `ids`: `after` at the start, just before,
 * at and just after a matching row in the middle (a gap or a row another filter keeps), at the
 * last row and past it; skips of none, some and all; limits of one row, a few and a whole page.
 */
export function forwardWindows(ids: readonly number[]): SeekWindow[] {
  const first = ids[0] ?? 1
  const middle = ids[Math.floor(ids.length / 2)] ?? 1
  const last = ids[ids.length - 1] ?? 1
  const afters = distinctIds([0, first - 1, first, middle - 1, middle, middle + 1, last, last + 1_000])
  const skips = distinctIds([0, 2, ids.length])
  return afters.flatMap((after) => skips.flatMap((skip) => [1, 3, 100].map((limit) => ({ after, skip, limit }))))
}

/** Windows counted from the end: the last rows, some before them, and up to past the start. */
export function fromEndWindows(count: number): SeekWindow[] {
  const skips = distinctIds([0, 1, 3, Math.max(0, count - 1), count, count + 2])
  return skips.flatMap((skip) => [1, 3, 100].map((limit) => ({ after: 0, skip, limit, fromEnd: true })))
}

/** What `page(window)` must return of `rows` (every matching row, in id order): docs/adapters.md 2g. */
export function expectedPage<R extends { id: number }>(rows: readonly R[], window: SeekWindow): R[] {
  if (window.fromEnd === true) {
    const end = Math.max(0, rows.length - window.skip)
    return rows.slice(Math.max(0, end - window.limit), end)
  }
  return rows.filter((row) => row.id > window.after).slice(window.skip, window.skip + window.limit)
}
