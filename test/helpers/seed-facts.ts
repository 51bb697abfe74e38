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

/** The person behind a user id (user ids are per company; issue 21). */
const personIdOf = (userId: number): number | null => seed().memberships.find((m) => m.user_id === userId)?.person_id ?? null

/** Users of `companyId` whose person belongs to no other company. */
export function exclusiveMemberIds(companyId: number): number[] {
  const others = new Set(seed().memberships.filter((m) => m.company_id !== companyId).map((m) => m.person_id))
  return memberIds(companyId).filter((id) => !others.has(personIdOf(id)))
}

/** Users of company `a` whose person is also a member of company `b` (under another user id there). */
export const sharedMemberIds = (a: number, b: number): number[] => {
  const inB = new Set(seed().memberships.filter((m) => m.company_id === b).map((m) => m.person_id))
  return memberIds(a).filter((id) => inB.has(personIdOf(id)))
}

/** The user id of the same person in another company, if they belong to it. */
export function userIdIn(companyId: number, userId: number): number | undefined {
  const personId = personIdOf(userId)
  return seed().memberships.find((m) => m.company_id === companyId && m.person_id === personId)?.user_id
}

/** The person behind a user id (any company's). */
export function person(userId: number) {
  const personId = personIdOf(userId)
  const found = seed().people.find((p) => p.id === personId)
  if (found === undefined) throw new Error(`seed has no person behind user ${userId}`)
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
/** The id the next user gets: above every user id (issue 21: user ids are per company, from one counter). */
export const nextUserId = () => Math.max(...seed().memberships.map((m) => m.user_id)) + 1
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
