import type {
  AbsenceFilter,
  EmployeeFilter,
  ExpenseFilter,
  ProjectFilter,
  ResourceReader,
  RoleFilter,
  ShiftFilter,
  Storage,
  TodoFilter,
  UserFilter,
} from '../ports/storage.js'
import type {
  AbsenceRecord,
  CompanyRecord,
  EmployeeRecord,
  ExpenseRecord,
  ProjectRecord,
  RoleRecord,
  ShiftRecord,
  TodoRecord,
  UserRecord,
} from '../ports/records.js'

/** The record and filter type of each list resource of the `Storage` port. */
export interface ResourceTypes {
  users: { record: UserRecord; filter: UserFilter }
  employees: { record: EmployeeRecord; filter: EmployeeFilter }
  roles: { record: RoleRecord; filter: RoleFilter }
  projects: { record: ProjectRecord; filter: ProjectFilter }
  shifts: { record: ShiftRecord; filter: ShiftFilter }
  absences: { record: AbsenceRecord; filter: AbsenceFilter }
  expenses: { record: ExpenseRecord; filter: ExpenseFilter }
  todos: { record: TodoRecord; filter: TodoFilter }
}

export type ListResource = keyof ResourceTypes
export type RecordOf<N extends ListResource> = ResourceTypes[N]['record']
export type FilterOf<N extends ListResource> = ResourceTypes[N]['filter']

export const LIST_RESOURCES: readonly ListResource[] = ['users', 'employees', 'roles', 'projects', 'shifts', 'absences', 'expenses', 'todos']

/** Every resource whose filter has `updatedSince` (all but roles). */
export const UPDATED_SINCE_RESOURCES = ['users', 'employees', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const

/** A reader typed only as far as generic checks need: ids, and a filter object. */
export type AnyReader = ResourceReader<{ id: number } & Record<string, unknown>, object>

export function readerOf(storage: Storage, resource: ListResource): AnyReader {
  return storage[resource] as unknown as AnyReader
}

type Missing<R, K extends ReadonlyArray<keyof R>> = Exclude<keyof R, K[number]>

/** A key list the compiler proves complete: leaving a field of `R` out is a type error. */
function exactKeys<R>() {
  return <const K extends ReadonlyArray<keyof R>>(
    keys: K & ([Missing<R, K>] extends [never] ? unknown : { missingKeys: Missing<R, K> }),
  ): readonly string[] => keys as readonly string[]
}

/**
 * Exactly the keys of each record type: a returned record has these and no other
 * (a storage-only column such as `salary_cents` or `company_id` must never come back).
 */
export const RECORD_KEYS: Readonly<Record<ListResource | 'company', readonly string[]>> = {
  users: exactKeys<UserRecord>()(['id', 'email', 'first_name', 'last_name', 'active', 'role_ids', 'invitation_status', 'created_at', 'updated_at']),
  employees: exactKeys<EmployeeRecord>()([
    'id', 'user_id', 'employee_number', 'job_title', 'contract_type', 'weekly_hours', 'hire_date', 'termination_date',
    'supervisor_id', 'created_at', 'updated_at',
  ]),
  roles: exactKeys<RoleRecord>()(['id', 'name', 'permissions', 'created_at', 'updated_at']),
  projects: exactKeys<ProjectRecord>()([
    'id', 'name', 'code', 'status', 'kind', 'customer_id', 'starts_on', 'ends_on', 'created_at', 'updated_at',
  ]),
  shifts: exactKeys<ShiftRecord>()([
    'id', 'employee_id', 'project_id', 'status', 'starts_at', 'ends_at', 'break_minutes', 'created_at', 'updated_at',
  ]),
  absences: exactKeys<AbsenceRecord>()(['id', 'employee_id', 'date', 'type', 'hours', 'status', 'created_at', 'updated_at']),
  expenses: exactKeys<ExpenseRecord>()([
    'id', 'employee_id', 'project_id', 'category', 'description', 'date', 'amount_cents', 'currency', 'created_at', 'updated_at',
  ]),
  todos: exactKeys<TodoRecord>()([
    'id', 'title', 'notes', 'status', 'priority', 'important', 'due_day', 'due_at', 'due_is_all_day', 'list_id',
    'assigned_to', 'assignee_group_id', 'claimed_by', 'checklist', 'tag_ids', 'source', 'created_at', 'updated_at',
  ]),
  company: exactKeys<CompanyRecord>()(['id', 'name', 'timezone', 'country', 'created_at', 'updated_at']),
}

/**
 * Every member of each resource's filter. The plugin builds filters with a member for each
 * parameter, `undefined` when absent, so adapters must treat `undefined` as "no filter".
 */
export const FILTER_KEYS: Readonly<Record<ListResource, readonly string[]>> = {
  users: exactKeys<UserFilter>()(['active', 'email', 'updatedSince']),
  employees: exactKeys<EmployeeFilter>()(['updatedSince']),
  roles: [], // RoleFilter has no members
  projects: exactKeys<ProjectFilter>()(['status', 'kind', 'customerId', 'updatedSince']),
  shifts: exactKeys<ShiftFilter>()(['employeeId', 'projectId', 'status', 'startsFrom', 'startsBefore', 'updatedSince']),
  absences: exactKeys<AbsenceFilter>()(['employeeId', 'status', 'dateFrom', 'dateTo', 'updatedSince']),
  expenses: exactKeys<ExpenseFilter>()(['employeeId', 'projectId', 'category', 'dateFrom', 'dateTo', 'updatedSince']),
  todos: exactKeys<TodoFilter>()(['status', 'assignedTo', 'listId', 'important', 'dueFrom', 'dueTo', 'updatedSince']),
}

/** What a field must come back as, beyond deep equality: the traps of each storage type. */
export interface FieldKinds {
  /** `Date` instances (not strings or numbers), exact to the millisecond. */
  instants: readonly string[]
  /** `YYYY-MM-DD` strings, the day as entered (not `Date`s, not shifted by a time zone). */
  days: readonly string[]
  /** Ids, references and integers: `number`, never an int8 string. */
  integers: readonly string[]
  /** `true`/`false`, never 0/1. */
  booleans: readonly string[]
  /** Arrays/objects stored as JSON or child rows: same content, same order. */
  structures: readonly string[]
  /** Free text: byte for byte (quotes, non-ASCII, newlines; `''` stays `''`, never `null`). */
  texts: readonly string[]
  /** Non-integer numbers (`37.5`, `7.25`): the same value, a `number`. */
  fractions: readonly string[]
}

export const FIELD_KINDS: Readonly<Record<ListResource, FieldKinds>> = {
  users: {
    instants: ['created_at', 'updated_at'],
    days: [],
    integers: ['id'],
    booleans: ['active'],
    structures: ['role_ids'],
    texts: ['email', 'first_name', 'last_name', 'invitation_status'],
    fractions: [],
  },
  employees: {
    instants: ['created_at', 'updated_at'],
    days: ['hire_date', 'termination_date'],
    integers: ['id', 'user_id', 'supervisor_id'],
    booleans: [],
    structures: [],
    texts: ['employee_number', 'job_title', 'contract_type'],
    fractions: ['weekly_hours'],
  },
  roles: {
    instants: ['created_at', 'updated_at'],
    days: [],
    integers: ['id'],
    booleans: [],
    structures: ['permissions'],
    texts: ['name'],
    fractions: [],
  },
  projects: {
    instants: ['created_at', 'updated_at'],
    days: ['starts_on', 'ends_on'],
    integers: ['id', 'customer_id'],
    booleans: [],
    structures: [],
    texts: ['name', 'code', 'status', 'kind'],
    fractions: [],
  },
  shifts: {
    instants: ['starts_at', 'ends_at', 'created_at', 'updated_at'],
    days: [],
    integers: ['id', 'employee_id', 'project_id', 'break_minutes'],
    booleans: [],
    structures: [],
    texts: ['status'],
    fractions: [],
  },
  absences: {
    instants: ['created_at', 'updated_at'],
    days: ['date'],
    integers: ['id', 'employee_id'],
    booleans: [],
    structures: [],
    texts: ['type', 'status'],
    fractions: ['hours'],
  },
  expenses: {
    instants: ['created_at', 'updated_at'],
    days: ['date'],
    integers: ['id', 'employee_id', 'project_id', 'amount_cents'],
    booleans: [],
    structures: [],
    texts: ['category', 'description', 'currency'],
    fractions: [],
  },
  todos: {
    instants: ['due_at', 'created_at', 'updated_at'],
    days: ['due_day'],
    integers: ['id', 'list_id', 'assigned_to', 'assignee_group_id', 'claimed_by'],
    booleans: ['important', 'due_is_all_day'],
    structures: ['checklist', 'tag_ids', 'source'],
    texts: ['title', 'notes', 'status', 'priority'],
    fractions: [],
  },
}
