/**
 * The records that cross the storage ports.
 *
 * Field names mirror the public API (snake_case) so rendering stays a thin,
 * adapter-independent step. Two representations differ from the wire format
 * on purpose, and rendering converts them:
 * - instants are `Date` objects (rendered as UTC, millisecond precision, `Z`);
 * - money is an integer number of hundredths (`amount_cents`), never a float.
 *
 * Days (`YYYY-MM-DD`) are plain strings: a day is the day as entered, in every time zone.
 */
import type { Day } from '../time/calendar.js'

export const PROJECT_STATUSES = ['planned', 'active', 'on_hold', 'completed', 'cancelled'] as const
export const PROJECT_KINDS = ['internal', 'customer', 'maintenance'] as const
export const SHIFT_STATUSES = ['scheduled', 'confirmed', 'completed', 'cancelled'] as const
export const ABSENCE_TYPES = ['vacation', 'sick', 'parental', 'unpaid', 'other'] as const
export const ABSENCE_STATUSES = ['requested', 'approved', 'rejected', 'cancelled'] as const
export const EXPENSE_CATEGORIES = ['travel', 'meals', 'lodging', 'materials', 'equipment', 'other'] as const
export const CONTRACT_TYPES = ['permanent', 'fixed_term', 'part_time', 'contractor', 'intern'] as const
export const TODO_STATUSES = ['waiting', 'open', 'in_progress', 'done', 'cancelled'] as const
export const TODO_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const
export const INVITATION_STATUSES = ['accepted', 'pending'] as const

export type ProjectStatus = (typeof PROJECT_STATUSES)[number]
export type ProjectKind = (typeof PROJECT_KINDS)[number]
export type ShiftStatus = (typeof SHIFT_STATUSES)[number]
export type AbsenceType = (typeof ABSENCE_TYPES)[number]
export type AbsenceStatus = (typeof ABSENCE_STATUSES)[number]
export type ExpenseCategory = (typeof EXPENSE_CATEGORIES)[number]
export type ContractType = (typeof CONTRACT_TYPES)[number]
export type TodoStatus = (typeof TODO_STATUSES)[number]
export type TodoPriority = (typeof TODO_PRIORITIES)[number]
/**
 * A membership's state: `pending` from the moment a company adds the user until the host
 * accepts the invitation, `accepted` after (docs/decisions.md, "Every addition is an invitation").
 */
export type InvitationStatus = (typeof INVITATION_STATUSES)[number]

/** A `YYYY-MM-DD` calendar day; its home is the ground floor (src/time/calendar.ts). */
export type { Day }

export interface CompanyRecord {
  id: number
  name: string
  /** IANA time zone name, e.g. `Europe/Rome`. Day filters on instants use it. */
  timezone: string
  /** ISO 3166-1 alpha-2 country code. */
  country: string
  created_at: Date
  updated_at: Date
}

/**
 * A user as seen by one company: the company's membership (whose id is the user's id, an id of
 * this company only) joined, once accepted, with the person's login (shared by every company
 * they belong to).
 *
 * A `pending` membership is rendered from the membership alone, never from the person: `email`,
 * `first_name` and `last_name` are what the inviting company sent, `active` is `false`, and the
 * dates are the membership's. The person's stored data belongs to the companies they joined.
 */
export interface UserRecord {
  id: number
  email: string
  first_name: string
  last_name: string
  /** Whether the login is enabled. A property of the person, not of the membership; `false` while pending. */
  active: boolean
  /** Roles the user holds in this company. */
  role_ids: number[]
  /** `pending` until the host accepts this company's invitation on the person's behalf. */
  invitation_status: InvitationStatus
  created_at: Date
  /** The later of the person's and the membership's last change (the membership's alone while pending). */
  updated_at: Date
}

export interface EmployeeRecord {
  id: number
  user_id: number | null
  employee_number: string
  job_title: string | null
  contract_type: ContractType
  weekly_hours: number
  hire_date: Day
  termination_date: Day | null
  supervisor_id: number | null
  created_at: Date
  updated_at: Date
}

export interface RoleRecord {
  id: number
  name: string
  permissions: string[]
  created_at: Date
  updated_at: Date
}

export interface ProjectRecord {
  id: number
  name: string
  code: string
  status: ProjectStatus
  kind: ProjectKind
  customer_id: number | null
  starts_on: Day | null
  ends_on: Day | null
  created_at: Date
  updated_at: Date
}

export interface ShiftRecord {
  id: number
  employee_id: number
  project_id: number | null
  status: ShiftStatus
  starts_at: Date
  ends_at: Date
  break_minutes: number
  created_at: Date
  updated_at: Date
}

export interface AbsenceRecord {
  id: number
  employee_id: number
  date: Day
  type: AbsenceType
  /** Hours of the day taken, e.g. 8 or 3.5. */
  hours: number
  status: AbsenceStatus
  created_at: Date
  updated_at: Date
}

export interface ExpenseRecord {
  id: number
  employee_id: number
  project_id: number | null
  category: ExpenseCategory
  description: string
  date: Day
  /** Hundredths of `currency`: 1234 is "12.34". A safe integer, never a float amount. */
  amount_cents: number
  /** ISO 4217 code, e.g. `EUR`. */
  currency: string
  created_at: Date
  updated_at: Date
}

export interface ChecklistStep {
  id: number
  title: string
  done: boolean
}

export interface TodoSource {
  type: string
  id: number
}

export interface TodoRecord {
  id: number
  title: string
  notes: string | null
  status: TodoStatus
  priority: TodoPriority
  important: boolean
  /**
   * When `due_is_all_day` is true: the due day (`due_day`), `due_at` is null.
   * Otherwise: the due instant (`due_at`), `due_day` is null. Both null: no due date.
   */
  due_day: Day | null
  due_at: Date | null
  due_is_all_day: boolean
  list_id: number
  assigned_to: number | null
  assignee_group_id: number | null
  claimed_by: number | null
  checklist: ChecklistStep[]
  tag_ids: number[]
  source: TodoSource | null
  created_at: Date
  updated_at: Date
}
