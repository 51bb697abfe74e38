import type {
  AbsenceRecord,
  CompanyRecord,
  EmployeeRecord,
  ExpenseRecord,
  InvitationStatus,
  ProjectRecord,
  RoleRecord,
  ShiftRecord,
  TodoRecord,
} from './records.js'
import type { PlatformModule } from './module-registry.js'

/**
 * A complete, self-consistent set of workforce data, as the reference adapters store it.
 * The seed generator produces one; adapters load one (`loadDataset`) so tests and the
 * conformance suite know every expected answer.
 *
 * Rows carry `company_id` and, where the spec deliberately omits fields from the API,
 * those private fields too: they exist in storage precisely so tests can prove they never leak.
 */
export interface Dataset {
  companies: CompanyRecord[]
  /** People with a login (internal ids). One person may be a member of several companies, under one user id per company. */
  people: PersonRow[]
  memberships: MembershipRow[]
  roles: Array<RoleRecord & { company_id: number }>
  employees: EmployeeRow[]
  projects: ProjectRow[]
  shifts: ShiftRow[]
  absences: AbsenceRow[]
  expenses: ExpenseRow[]
  todoLists: TodoListRow[]
  todos: Array<TodoRecord & { company_id: number }>
  modules: ModuleRow[]
}

export interface PersonRow {
  id: number
  email: string
  first_name: string
  last_name: string
  /** Login enabled. */
  active: boolean
  /** Private: never exposed. */
  password_hash: string
  created_at: Date
  updated_at: Date
}

/**
 * A company's user: a membership, with its own id. The user resource's `id`, `created_at` and
 * `updated_at` are the membership's: the user as this company sees them. Ids are per company
 * (docs/decisions.md, "Every addition is an invitation"): a person who belongs to two companies
 * is two users with two ids, so an id never links a person across companies. A change to the
 * shared person bumps `updated_at` of each of their accepted memberships.
 *
 * Every user a company adds starts `pending`, with no person (`person_id: null`): the company
 * sees only what it sent (`invited`) until the host accepts the invitation, which links the
 * membership to an existing person with that email or to a new one.
 */
export interface MembershipRow {
  company_id: number
  /** The user's id: unique across all memberships, never reused, increasing with creation (spec 2.4). */
  user_id: number
  /** The person (`PersonRow.id`, internal) once accepted; `null` exactly while pending. */
  person_id: number | null
  role_ids: number[]
  invitation_status: InvitationStatus
  /**
   * Set exactly while `pending`: the person as the inviting company sent them. `null` once accepted.
   */
  invited: InvitedPerson | null
  created_at: Date
  updated_at: Date
}

/** What a company sent about a person it invited: all it may see of them until they accept. */
export interface InvitedPerson {
  email: string
  first_name: string
  last_name: string
}

export interface EmployeeRow extends EmployeeRecord {
  company_id: number
  /** Private: never exposed. */
  salary_cents: number
  /** Private: never exposed. */
  iban: string
}

export interface ProjectRow extends ProjectRecord {
  company_id: number
  /** Private: never exposed. */
  offer_number: string | null
  /** Private: never exposed. */
  internal_notes: string | null
}

export interface ShiftRow extends ShiftRecord {
  company_id: number
  /** Private: free text, never exposed. */
  internal_notes: string | null
}

export interface AbsenceRow extends AbsenceRecord {
  company_id: number
  /** Private: never exposed. */
  reason: string | null
}

export interface ExpenseRow extends ExpenseRecord {
  company_id: number
  /** Private: km detail, never exposed. */
  km: number | null
}

export interface TodoListRow {
  id: number
  company_id: number
  name: string
}

export interface ModuleRow {
  company_id: number
  module: PlatformModule
  active: boolean
}

/**
 * A `Dataset`'s tables in load order: a row refers only to rows of the tables before its own
 * (or to earlier rows of its own table), so loading them in this order never waits on a
 * reference. A stream of `DatasetChunk`s comes table by table in this order.
 */
export const DATASET_TABLES: readonly (keyof Dataset)[] = [
  'companies',
  'people',
  'memberships',
  'roles',
  'employees',
  'projects',
  'shifts',
  'absences',
  'expenses',
  'todoLists',
  'todos',
  'modules',
]

/**
 * Some consecutive rows of one table of a `Dataset`: what the SQL adapters' bulk loads take, a
 * stream of them table by table in `DATASET_TABLES` order (the seed's `streamDataset` makes one).
 */
export type DatasetChunk = { [T in keyof Dataset]: { table: T; rows: Dataset[T] } }[keyof Dataset]

export function emptyDataset(): Dataset {
  return {
    companies: [],
    people: [],
    memberships: [],
    roles: [],
    employees: [],
    projects: [],
    shifts: [],
    absences: [],
    expenses: [],
    todoLists: [],
    todos: [],
    modules: [],
  }
}
