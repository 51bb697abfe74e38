import { createHash } from 'node:crypto'
import type { IdempotencyBegin } from '../../src/ports/idempotency-store.js'
import type { TodoFields } from '../../src/ports/write-storage.js'
import type { Dataset } from '../../src/ports/dataset.js'

/** The plugin's clock, as the write tests pass it: adapters never read the time themselves. */
export const NOW = new Date('2026-11-22T10:00:00.000Z')

export const minutes = (count: number, from: Date = NOW) => new Date(from.getTime() + count * 60_000)

/** A 64-hex slot or fingerprint (SHA-256 of `label`), as the plugin computes them. */
export const hex64 = (label: string) => createHash('sha256').update(label).digest('hex')

/** The slot of the `index`th Idempotency-Key of one bearer key. */
export const slotOf = (index: number) => hex64(`Bearer wfa_key.secret|key-${index}`)

/** A `begin` request for `slot` at `NOW`: 1-minute lease, 24-hour retention. */
export function beginRequest(slot: string, overrides: Partial<IdempotencyBegin> = {}): IdempotencyBegin {
  const now = overrides.now ?? NOW
  return {
    slot,
    fingerprint: hex64('POST /v1/todos {"title":"x"}'),
    companyId: 1,
    token: 'token-1',
    now,
    leaseUntil: minutes(1, now),
    expiredBefore: minutes(-24 * 60, now),
    ...overrides,
  }
}

/** Rows of the seed dataset the write tests build on. */
export function pickSeedRows(data: Dataset) {
  // By person: user ids are per company (issue 21); `shared.id` is the person's id, and their user id in company 1.
  const companiesOf = (personId: number) => data.memberships.filter((m) => m.person_id === personId).map((m) => m.company_id)
  const find = <T>(rows: T[], match: (row: T) => boolean, what: string): T => {
    const row = rows.find(match)
    if (row === undefined) throw new Error(`The seed dataset has no ${what}`)
    return row
  }
  const exclusive = find(data.people, (p) => companiesOf(p.id).join() === '1', 'person only in company 1')
  const shared = find(data.people, (p) => companiesOf(p.id).join() === '1,2', 'person in companies 1 and 2')
  return {
    exclusive,
    shared,
    roleOf1: find(data.roles, (r) => r.company_id === 1, 'role of company 1'),
    roleOf2: find(data.roles, (r) => r.company_id === 2, 'role of company 2'),
    listOf1: find(data.todoLists, (l) => l.company_id === 1, 'list of company 1'),
    listOf2: find(data.todoLists, (l) => l.company_id === 2, 'list of company 2'),
    todoOf1: find(data.todos, (t) => t.company_id === 1, 'to-do of company 1'),
    todoOf2: find(data.todos, (t) => t.company_id === 2, 'to-do of company 2'),
    maxId: (rows: Array<{ id: number }>) => Math.max(...rows.map((row) => row.id)),
  }
}

/** Fields of a timed to-do in `listId`, assigned to `assignee`. */
export function timedTodo(listId: number, assignee: number): TodoFields {
  return {
    title: 'Call the supplier',
    notes: 'Ask for the corrected invoice',
    status: 'open',
    priority: 'high',
    important: true,
    due_day: null,
    due_at: new Date('2026-11-25T08:30:00.000Z'),
    due_is_all_day: false,
    list_id: listId,
    assigned_to: assignee,
    assignee_group_id: null,
  }
}

/** Fields of an all-day to-do offered to a role. */
export function allDayTodo(listId: number, roleId: number): TodoFields {
  return {
    title: 'Stocktake',
    notes: null,
    status: 'waiting',
    priority: 'low',
    important: false,
    due_day: '2026-12-01',
    due_at: null,
    due_is_all_day: true,
    list_id: listId,
    assigned_to: null,
    assignee_group_id: roleId,
  }
}
