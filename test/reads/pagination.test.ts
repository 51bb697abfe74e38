import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Dataset } from '../../src/ports/dataset.js'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { DATASET, expectedList, idsWhere, LIST_RESOURCES } from '../helpers/expected-reads.js'
import type { ListBody } from '../helpers/list-http.js'

// Spec 4.2: list envelope, page/per_page defaults and maximum, ordering, pages past the end.
describe.each(READ_ADAPTERS)('pagination ($name)', (adapter) => {
  let t: TestApp
  let key1: string
  let key2: string
  let key3: string

  beforeAll(async () => {
    t = await build({ adapter })
    key1 = await t.keyFor(1, ['all'])
    key2 = await t.keyFor(2, ['all'])
    key3 = await t.keyFor(3, ['all'])
  })
  afterAll(() => t.close())

  it.each(LIST_RESOURCES)('GET /v1/%s defaults to page 1 of 25', async (resource) => {
    const all = expectedList(resource, 1)
    const res = await t.get(`/v1/${resource}`, key1)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toStrictEqual({
      data: all.slice(0, 25),
      pagination: { page: 1, per_page: 25, total: all.length, total_pages: Math.ceil(all.length / 25) },
    })
  })

  it.each(LIST_RESOURCES)('GET /v1/%s?page=2 is the next 25 rows', async (resource) => {
    const all = expectedList(resource, 2)
    const res = await t.get(`/v1/${resource}?page=2`, key2)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toStrictEqual({
      data: all.slice(25, 50),
      pagination: { page: 2, per_page: 25, total: all.length, total_pages: Math.ceil(all.length / 25) },
    })
  })

  it.each(LIST_RESOURCES)('GET /v1/%s past the last page is empty data with the real total', async (resource) => {
    const total = expectedList(resource, 1).length
    const lastPage = Math.ceil(total / 10)
    for (const page of [lastPage + 1, lastPage + 2, 1000]) {
      const res = await t.get(`/v1/${resource}?page=${page}&per_page=10`, key1)
      expect(res.statusCode).toBe(200)
      expect(res.json()).toStrictEqual({ data: [], pagination: { page, per_page: 10, total, total_pages: lastPage } })
    }
  })

  it('the last page holds the remainder', async () => {
    const all = expectedList('shifts', 2)
    expect(all).toHaveLength(45)
    const res = await t.get('/v1/shifts?page=5&per_page=10', key2)
    expect(res.json()).toStrictEqual({
      data: all.slice(40, 45),
      pagination: { page: 5, per_page: 10, total: 45, total_pages: 5 },
    })
  })

  it('accepts per_page 100 (the maximum) and per_page 1', async () => {
    const all = expectedList('todos', 2)
    const max = await t.get('/v1/todos?per_page=100', key2)
    expect(max.statusCode).toBe(200)
    expect(max.json().pagination).toStrictEqual({ page: 1, per_page: 100, total: all.length, total_pages: 1 })
    expect(max.json().data).toHaveLength(all.length)

    const one = await t.get('/v1/todos?per_page=1&page=7', key2)
    expect(one.json()).toStrictEqual({
      data: [all[6]],
      pagination: { page: 7, per_page: 1, total: all.length, total_pages: all.length },
    })
  })

  it.each(LIST_RESOURCES)('iterating /v1/%s page by page yields every row exactly once, by ascending id', async (resource) => {
    for (const [companyId, key] of [
      [1, key1],
      [2, key2],
    ] as const) {
      const expectedIds = idsWhere(resource, companyId)
      for (const perPage of [1, 7, 25]) {
        const seen: number[] = []
        const totalPages = Math.ceil(expectedIds.length / perPage)
        for (let page = 1; page <= totalPages; page++) {
          const body = (await t.get(`/v1/${resource}?page=${page}&per_page=${perPage}`, key)).json() as ListBody
          expect(body.pagination).toStrictEqual({ page, per_page: perPage, total: expectedIds.length, total_pages: totalPages })
          expect(body.data.length).toBe(page < totalPages ? perPage : expectedIds.length - perPage * (totalPages - 1))
          seen.push(...body.data.map((row) => row.id as number))
        }
        expect(seen).toEqual(expectedIds)
        expect(new Set(seen).size).toBe(seen.length)
      }
    }
  })

  it.each(['users', 'employees', 'roles'] as const)('an empty company gets an empty /v1/%s with total 0', async (resource) => {
    const res = await t.get(`/v1/${resource}`, key3)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toStrictEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } })
  })

  it('pagination combines with a filter: totals count the filtered rows', async () => {
    const expected = idsWhere('todos', 1, (todo) => todo.important)
    const res = await t.get('/v1/todos?important=true&per_page=5&page=2', key1)
    expect(res.statusCode).toBe(200)
    const body = res.json() as ListBody
    expect(body.pagination).toStrictEqual({
      page: 2,
      per_page: 5,
      total: expected.length,
      total_pages: Math.ceil(expected.length / 5),
    })
    expect(body.data.map((row) => row.id)).toEqual(expected.slice(5, 10))
  })
})

/** The seed with every table in reverse order, so storage order is not id order. */
function reversedDataset(): Dataset {
  const copy = structuredClone(DATASET)
  for (const table of ['people', 'memberships', 'roles', 'employees', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const) {
    copy[table].reverse()
  }
  return copy
}

describe.each(READ_ADAPTERS)('ordering by id whatever the storage order ($name)', (adapter) => {
  let t: TestApp
  afterEach(() => t.close())

  it.each(LIST_RESOURCES)('GET /v1/%s is ordered by ascending id', async (resource) => {
    t = await build({ adapter, dataset: reversedDataset() })
    const key = await t.keyFor(2, ['all'])
    const ids = ((await t.get(`/v1/${resource}?per_page=100`, key)).json() as ListBody).data.map((row) => row.id)
    expect(ids).toEqual(idsWhere(resource, 2))
    const page2 = ((await t.get(`/v1/${resource}?per_page=10&page=2`, key)).json() as ListBody).data.map((row) => row.id)
    expect(page2).toEqual(idsWhere(resource, 2).slice(10, 20))
  })
})
