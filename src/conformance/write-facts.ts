import type { Dataset } from '../ports/dataset.js'
import type { InvitationStatus } from '../ports/records.js'

/**
 * The `now` of the suite's writes: later than every instant of the fixture (the last is in
 * December 2026), with milliseconds, so a column that drops them or a stale timestamp shows.
 */
export const WRITE_NOW = new Date('2027-02-03T04:05:06.789Z')

/** `WRITE_NOW` plus `ms` milliseconds. */
export function afterNow(ms: number): Date {
  return new Date(WRITE_NOW.getTime() + ms)
}

/** What the write tests need to know about the fixture, derived from it (never hard-coded ids). */
export interface WriteFacts {
  /** Sorted ids of the companies the *person* is a member of; with `status`, only memberships in that state. */
  companiesOf(personId: number, status?: InvitationStatus): number[]
  /** The person behind a company's user, `null` while pending (user ids are per company, issue 21). */
  personOf(companyId: number, userId: number): number | null
  /** Company 1's user id of an active person who is an accepted member of companies 1 and 2, with no pending membership. */
  sharedUser: number
  /** That person's user id in `companyId` (1 or 2): a different id in each. */
  sharedUserIn(companyId: number): number
  /** The user id of an active person who is a member of `companyId` only (accepted), with no pending membership. */
  exclusiveUser(companyId: number): number
  /** Every pending user, and its company. */
  pendingMemberships: Array<{ userId: number; companyId: number }>
  /** The company's role ids, ascending. */
  roleIds(companyId: number): number[]
  /** The company's to-do list ids, ascending. */
  listIds(companyId: number): number[]
  /** A to-do of company 2 (for cross-company checks). */
  todoOfCompany2: number
  /** The largest person id of the fixture: created people must get larger ones. */
  maxPersonId: number
  /** The largest user id of the fixture, every company: new users must get larger ones. */
  maxUserId: number
  /** The largest to-do id of the fixture, every company: inserted to-dos must get larger ones. */
  maxTodoId: number
  /** An id no row of any table has. */
  unknownId: number
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`conformance suite bug: the fixture has no ${what}`)
  return value
}

export function writeFacts(fixture: Dataset): WriteFacts {
  const companiesOf = (personId: number, status?: InvitationStatus) =>
    fixture.memberships
      .filter((membership) => membership.person_id === personId && (status === undefined || membership.invitation_status === status))
      .map((membership) => membership.company_id)
      .sort((a, b) => a - b)
  const userOf = (personId: number, companyId: number) =>
    required(fixture.memberships.find((m) => m.person_id === personId && m.company_id === companyId)?.user_id, `user of person ${personId} in company ${companyId}`)
  const activePeople = fixture.people.filter((person) => person.active).map((person) => person.id)
  // A pending user names an email, not a person: a person counts as invited by a company that sent their email.
  const invitedEmails = new Set(fixture.memberships.filter((m) => m.invited !== null).map((m) => (m.invited as { email: string }).email.toLowerCase()))
  const email = new Map(fixture.people.map((person) => [person.id, person.email.toLowerCase()]))
  const sameCompanies = (personId: number, companies: number[]) =>
    companiesOf(personId, 'accepted').join(',') === companies.join(',') && !invitedEmails.has(email.get(personId) ?? '')
  const ids = (rows: ReadonlyArray<{ id: number; company_id: number }>, companyId: number) =>
    rows.filter((row) => row.company_id === companyId).map((row) => row.id).sort((a, b) => a - b)
  const allIds = Object.values(fixture).flatMap((rows: Array<{ id?: unknown; user_id?: unknown }>) =>
    rows.flatMap((row) => [row.id, row.user_id]).filter((id): id is number => typeof id === 'number'),
  )
  const sharedPerson = required(activePeople.find((id) => sameCompanies(id, [1, 2])), 'active person in companies 1 and 2')
  return {
    companiesOf,
    personOf: (companyId, userId) => fixture.memberships.find((m) => m.company_id === companyId && m.user_id === userId)?.person_id ?? null,
    sharedUser: userOf(sharedPerson, 1),
    sharedUserIn: (companyId) => userOf(sharedPerson, companyId),
    exclusiveUser: (companyId) =>
      userOf(required(activePeople.find((id) => sameCompanies(id, [companyId])), `active person of company ${companyId} only`), companyId),
    pendingMemberships: fixture.memberships
      .filter((membership) => membership.invitation_status === 'pending')
      .map((membership) => ({ userId: membership.user_id, companyId: membership.company_id })),
    roleIds: (companyId) => ids(fixture.roles, companyId),
    listIds: (companyId) => ids(fixture.todoLists, companyId),
    todoOfCompany2: required(ids(fixture.todos, 2)[0], 'to-do of company 2'),
    maxPersonId: Math.max(...fixture.people.map((person) => person.id)),
    maxUserId: Math.max(...fixture.memberships.map((membership) => membership.user_id)),
    maxTodoId: Math.max(...fixture.todos.map((todo) => todo.id)),
    unknownId: Math.max(...allIds) + 1_000,
  }
}
