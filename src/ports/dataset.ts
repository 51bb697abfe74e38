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
  /** People with a login. One person may be a member of several companies. */
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
 * A person's membership of a company. The user resource's `created_at`/`updated_at` are the
 * membership's: the user as this company sees them. A change to the shared person bumps
 * `updated_at` of each of their accepted memberships.
 *
 * A company that adds a person who already has a login gets a `pending` membership: the company
 * sees only what it sent (`invited`), and the person counts as its member for nothing else
 * (not for exclusivity, not for the person's changes) until they accept.
 */
export interface MembershipRow {
  company_id: number
  user_id: number
  role_ids: number[]
  invitation_status: InvitationStatus
  /**
   * Set exactly while `pending`: the person as the inviting company sent them (the email as
   * sent, equal to the person's email but for letter case). `null` once accepted.
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
