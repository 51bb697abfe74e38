import { expect } from 'vitest'
import type { TestApp } from './build.js'

export interface ListBody {
  data: Record<string, unknown>[]
  pagination: { page: number; per_page: number; total: number; total_pages: number }
}

/**
 * Every row of a list, page by page (per_page 100), asserting a 200 and a consistent
 * pagination object on each page. `query` is appended verbatim (already URL-encoded).
 */
export async function listAll(t: TestApp, key: string, path: string, query = ''): Promise<ListBody['data']> {
  const rows: ListBody['data'] = []
  let total: number | undefined
  for (let page = 1; ; page++) {
    const separator = query === '' ? '' : '&'
    const res = await t.get(`${path}?page=${page}&per_page=100${separator}${query}`, key)
    expect(res.statusCode, `${path}?${query} page ${page}: ${res.body}`).toBe(200)
    const body = res.json() as ListBody
    total ??= body.pagination.total
    expect(body.pagination).toEqual({ page, per_page: 100, total, total_pages: Math.ceil(total / 100) })
    rows.push(...body.data)
    if (page >= body.pagination.total_pages) break
  }
  expect(rows).toHaveLength(total)
  return rows
}

/** Ids of every row of a list (all pages). */
export async function listIds(t: TestApp, key: string, path: string, query = ''): Promise<number[]> {
  return (await listAll(t, key, path, query)).map((row) => row.id as number)
}
