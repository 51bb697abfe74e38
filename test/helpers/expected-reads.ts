/**
 * Expected answers, computed straight from the seed dataset with plain filtering —
 * never through the plugin's or an adapter's code — so a test compares the API with
 * an independent reading of the data.
 */
import { Temporal } from '@js-temporal/polyfill'
import type {
  AbsenceRow,
  Dataset,
  EmployeeRow,
  ExpenseRow,
  ProjectRow,
  ShiftRow,
} from '../../src/ports/dataset.js'
import type { RoleRecord, TodoRecord } from '../../src/ports/records.js'
import type { Scope } from '../../src/scopes.js'
import { seedDataset } from './build.js'

export const DATASET: Dataset = seedDataset()

/** The seed's companies and their zones, as the seed's documentation states them. */
export const ZONES: Record<number, string> = { 1: 'Europe/Rome', 2: 'America/New_York', 3: 'Asia/Tokyo' }

export type TodoRow = TodoRecord & { company_id: number }
export type RoleRow = RoleRecord & { company_id: number }

/** The list resources whose rows carry `company_id` directly. */
export type Table = 'employees' | 'roles' | 'projects' | 'shifts' | 'absences' | 'expenses' | 'todos'
export type ListResource = Table | 'users'
export const LIST_RESOURCES: ListResource[] = ['users', 'employees', 'roles', 'projects', 'shifts', 'absences', 'expenses', 'todos']

/** The scope each resource needs (spec 5). */
export const SCOPE_OF: Record<ListResource | 'company', Scope> = {
  users: 'users:read',
  employees: 'employees:read',
  roles: 'roles:read',
  company: 'company:read',
  projects: 'projects:read',
  shifts: 'shifts:read',
  absences: 'absences:read',
  expenses: 'expenses:read',
  todos: 'todos:read',
}

/** Every wire timestamp: UTC, millisecond precision, `Z` (spec 2.4.2). */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Storage-only fields that must never reach a response (spec 2.1 "Deliberately omitted"). */
export const PRIVATE_FIELDS = ['salary_cents', 'iban', 'internal_notes', 'offer_number', 'reason', 'km', 'password_hash', 'company_id']

/** The dataset row type of each table. */
export interface TableRows {
  employees: EmployeeRow
  roles: RoleRow
  projects: ProjectRow
  shifts: ShiftRow
  absences: AbsenceRow
  expenses: ExpenseRow
  todos: TodoRow
}

/** A company's rows of `table`, ascending by id. */
export function rowsOf<T extends Table>(table: T, companyId: number): TableRows[T][] {
  const rows = DATASET[table] as TableRows[T][]
  return rows.filter((row) => row.company_id === companyId).sort((a, b) => a.id - b.id)
}

/** A user as a company sees it: its membership joined with the shared person. */
export interface ExpectedUser {
  id: number
  email: string
  first_name: string
  last_name: string
  active: boolean
  role_ids: number[]
  invitation_status: 'accepted' | 'pending'
  created_at: Date
  updated_at: Date
}

/** A pending member shows what the company sent, inactive, dated by the membership alone (docs/decisions.md). */
export function usersOf(companyId: number): ExpectedUser[] {
  const users: ExpectedUser[] = []
  for (const membership of DATASET.memberships) {
    if (membership.company_id !== companyId) continue
    if (membership.invited !== null) {
      users.push({
        id: membership.user_id,
        ...membership.invited,
        active: false,
        role_ids: [...membership.role_ids],
        invitation_status: 'pending',
        created_at: membership.created_at,
        updated_at: membership.updated_at,
      })
      continue
    }
    // The user id is the membership's, of this company only; the person is shared (issue 21).
    const person = DATASET.people.find((p) => p.id === membership.person_id)
    if (person === undefined) throw new Error(`accepted membership without person ${membership.user_id}`)
    users.push({
      id: membership.user_id,
      email: person.email,
      first_name: person.first_name,
      last_name: person.last_name,
      active: person.active,
      role_ids: [...membership.role_ids],
      invitation_status: 'accepted',
      created_at: membership.created_at,
      // records.ts: "the later of the person's and the membership's last change".
      updated_at: new Date(Math.max(person.updated_at.getTime(), membership.updated_at.getTime())),
    })
  }
  return users.sort((a, b) => a.id - b.id)
}

/** What `idsWhere` filters: dataset rows, or users as the company sees them. */
export type ResourceRows = TableRows & { users: ExpectedUser }

/** Ids of `resource` of `companyId` matching `predicate`, ascending. */
export function idsWhere<R extends ListResource>(
  resource: R,
  companyId: number,
  predicate: (row: ResourceRows[R]) => boolean = () => true,
): number[] {
  const rows = (resource === 'users' ? usersOf(companyId) : rowsOf(resource as Table, companyId)) as ResourceRows[R][]
  return rows.filter((row) => predicate(row)).map((row) => row.id)
}

/** The calendar day of `instant` in `timeZone`, by Temporal. */
export function localDay(instant: Date, timeZone: string): string {
  return Temporal.Instant.fromEpochMilliseconds(instant.getTime()).toZonedDateTimeISO(timeZone).toPlainDate().toString()
}

/** `"d.dd"` from hundredths, by string arithmetic only. */
export function decimalOf(cents: number): string {
  const digits = String(Math.abs(cents)).padStart(3, '0')
  return `${cents < 0 ? '-' : ''}${digits.slice(0, digits.length - 2)}.${digits.slice(digits.length - 2)}`
}

// ---------------------------------------------------------------------------------------------
// The documented wire shape of each resource, built from dataset rows.

const iso = (date: Date) => date.toISOString()

export const WIRE_KEYS: Record<ListResource | 'company', string[]> = {
  users: ['id', 'email', 'first_name', 'last_name', 'active', 'role_ids', 'invitation_status', 'created_at', 'updated_at'],
  employees: [
    'id', 'user_id', 'employee_number', 'job_title', 'contract_type', 'weekly_hours', 'hire_date', 'termination_date',
    'supervisor_id', 'created_at', 'updated_at',
  ],
  roles: ['id', 'name', 'permissions', 'created_at', 'updated_at'],
  company: ['id', 'name', 'timezone', 'country', 'created_at', 'updated_at'],
  projects: ['id', 'name', 'code', 'status', 'kind', 'customer_id', 'starts_on', 'ends_on', 'created_at', 'updated_at'],
  shifts: ['id', 'employee_id', 'project_id', 'status', 'starts_at', 'ends_at', 'break_minutes', 'created_at', 'updated_at'],
  absences: ['id', 'employee_id', 'date', 'type', 'hours', 'status', 'created_at', 'updated_at'],
  expenses: [
    'id', 'employee_id', 'project_id', 'category', 'description', 'date', 'amount', 'currency', 'created_at', 'updated_at',
  ],
  todos: [
    'id', 'title', 'notes', 'status', 'priority', 'important', 'due_date', 'due_is_all_day', 'list_id', 'assigned_to',
    'assignee_group_id', 'claimed_by', 'checklist', 'tag_ids', 'source', 'created_at', 'updated_at',
  ],
}

/** The wire object of one record: exactly the keys of `WIRE_KEYS`, instants as ISO strings. */
export function wireOf(resource: ListResource | 'company', row: object): Record<string, unknown> {
  const source = row as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const key of WIRE_KEYS[resource]) {
    const value = source[key]
    out[key] = value instanceof Date ? iso(value) : structuredClone(value)
  }
  if (resource === 'expenses') out.amount = decimalOf((row as ExpenseRow).amount_cents)
  if (resource === 'todos') {
    const todo = row as TodoRow
    out.due_date = todo.due_is_all_day ? todo.due_day : todo.due_at === null ? null : iso(todo.due_at)
  }
  return out
}

/** Every wire object of a company's `resource`, ascending by id. */
export function expectedList(resource: ListResource, companyId: number): Record<string, unknown>[] {
  const rows: object[] = resource === 'users' ? usersOf(companyId) : rowsOf(resource as Table, companyId)
  return rows.map((row) => wireOf(resource, row))
}

export function expectedCompany(companyId: number): Record<string, unknown> {
  const company = DATASET.companies.find((c) => c.id === companyId)
  if (company === undefined) throw new Error(`no company ${companyId}`)
  return wireOf('company', company)
}
