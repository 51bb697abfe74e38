import { expect } from './vitest-api.js'
import type { ListResult, PageWindow, Storage } from '../ports/storage.js'
import { MAX_LIMIT } from './fixture.js'
import type { ExpectedAnswers } from './expected.js'
import { readerOf, type ListResource } from './resources.js'

/** A record as a loose object, for table-driven cases that name fields by string. */
export type LooseRecord = { id: number } & Record<string, unknown>

export function looseRecords(expected: ExpectedAnswers, resource: ListResource, companyId: number): LooseRecord[] {
  return expected.records(resource, companyId) as unknown as LooseRecord[]
}

/** One page holding every row of a company (the fixture keeps each table under it). */
export const WHOLE_LIST: PageWindow = { limit: MAX_LIMIT, offset: 0 }

/** `shifts of company 1 where {"status":"scheduled"}`: the subject of a failure message. */
export function describeCall(resource: ListResource, companyId: number, filter: object, window?: PageWindow): string {
  const where = Object.keys(filter).length === 0 ? '' : ` where ${JSON.stringify(filter)}`
  const page = window === undefined ? '' : ` (limit ${window.limit}, offset ${window.offset})`
  return `${resource} of company ${companyId}${where}${page}`
}

/**
 * Lists `resource` and asserts the exact ids, in order, and the total.
 * The failure shows both sides: `{ ids, total }` expected vs what the adapter returned.
 */
export async function expectListed(
  storage: Storage,
  resource: ListResource,
  companyId: number,
  filter: object,
  expected: ReadonlyArray<{ id: number }>,
  note = '',
): Promise<ListResult<{ id: number }>> {
  const result = await readerOf(storage, resource).list(companyId, filter, WHOLE_LIST)
  expect(
    { ids: result.rows.map((row) => row.id), total: result.total },
    `${describeCall(resource, companyId, filter)}${note}: ids in id order and total`,
  ).toEqual({ ids: expected.map((row) => row.id), total: expected.length })
  return result
}

/**
 * Guards the suite itself, not the adapter: a filter case whose answer is empty or
 * everything would pass for an adapter that ignores the filter.
 */
export function assertSelective(expected: readonly unknown[], all: readonly unknown[], what: string): void {
  if (expected.length === 0 || expected.length === all.length) {
    throw new Error(`conformance suite bug: ${what} selects ${expected.length} of ${all.length} rows; pick a selective case`)
  }
}

/** Sorted distinct values, for table-driven cases. */
export function distinct<T extends string | number | boolean>(values: Iterable<T>): T[] {
  return [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/** The filter without its `undefined` members (tests that pass `undefined` on purpose say so). */
export function withoutUndefined<T extends object>(filter: T): T {
  return Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined)) as T
}
