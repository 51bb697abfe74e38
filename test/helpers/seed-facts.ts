import type { LightMyRequestResponse as Response } from 'fastify'
import { expect } from 'vitest'
import type { TodoStatus } from '../../src/ports/records.js'
import { seedDataset } from './write-app.js'

/**
 * Facts about the seed dataset that the write tests start from, read from the dataset itself
 * (never from the code under test), so every expected value is computed independently.
 */

const seed = () => seedDataset()

export const memberIds = (companyId: number): number[] =>
  seed()
    .memberships.filter((m) => m.company_id === companyId)
    .map((m) => m.user_id)
    .sort((a, b) => a - b)

/** People who belong to `companyId` and to no other company. */
export function exclusiveMemberIds(companyId: number): number[] {
  const others = new Set(seed().memberships.filter((m) => m.company_id !== companyId).map((m) => m.user_id))
  return memberIds(companyId).filter((id) => !others.has(id))
}

/** People who belong to both companies. */
export const sharedMemberIds = (a: number, b: number): number[] => memberIds(a).filter((id) => memberIds(b).includes(id))

export function person(id: number) {
  const found = seed().people.find((p) => p.id === id)
  if (found === undefined) throw new Error(`seed has no person ${id}`)
  return found
}

export const roleIds = (companyId: number): number[] =>
  seed()
    .roles.filter((r) => r.company_id === companyId)
    .map((r) => r.id)
    .sort((a, b) => a - b)

export const listIds = (companyId: number): number[] =>
  seed()
    .todoLists.filter((l) => l.company_id === companyId)
    .map((l) => l.id)
    .sort((a, b) => a - b)

export const todosOf = (companyId: number) => seed().todos.filter((t) => t.company_id === companyId)

export const todoIdsWithStatus = (companyId: number, status: TodoStatus): number[] =>
  todosOf(companyId)
    .filter((t) => t.status === status)
    .map((t) => t.id)

/** The id the next row of a table gets: ids grow monotonically (spec 2.4.1). */
export const nextId = (rows: ReadonlyArray<{ id: number }>): number => Math.max(...rows.map((r) => r.id)) + 1
export const nextPersonId = () => nextId(seed().people)
export const nextTodoId = () => nextId(seed().todos)

/** Asserts the spec's error envelope (section 7) with `code` and `status`; returns `details`. */
export function expectError(res: Response, status: number, code: string): Array<{ field: string; message: string }> {
  expect(res.statusCode, res.body).toBe(status)
  expect(res.headers['content-type']).toMatch(/^application\/json/)
  const body = res.json() as { error: { code: string; message: string; status: number; details?: Array<{ field: string; message: string }> } }
  expect(body.error.code).toBe(code)
  expect(body.error.status).toBe(status)
  expect(typeof body.error.message).toBe('string')
  const keys = Object.keys(body.error).sort()
  expect(keys).toEqual(body.error.details === undefined ? ['code', 'message', 'status'] : ['code', 'details', 'message', 'status'])
  return body.error.details ?? []
}

/** A 422 `validation_error` whose details name exactly `fields` (each at least once). */
export function expectInvalid(res: Response, fields: readonly string[]): Array<{ field: string; message: string }> {
  const details = expectError(res, 422, 'validation_error')
  expect([...new Set(details.map((d) => d.field))].sort()).toEqual([...fields].sort())
  for (const detail of details) expect(typeof detail.message).toBe('string')
  return details
}
