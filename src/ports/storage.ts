import type {
  AbsenceRecord,
  AbsenceStatus,
  CompanyRecord,
  Day,
  EmployeeRecord,
  ExpenseCategory,
  ExpenseRecord,
  ProjectKind,
  ProjectRecord,
  ProjectStatus,
  RoleRecord,
  ShiftRecord,
  ShiftStatus,
  TodoRecord,
  TodoStatus,
  UserRecord,
} from './records.js'

/**
 * A window of a list, already validated by the plugin.
 * `limit` is 1–100, `offset` is `(page - 1) * limit` and may lie past the last row.
 */
export interface PageWindow {
  limit: number
  offset: number
}

/** One page of rows plus the number of rows matching the filter across all pages. */
export interface ListResult<T> {
  rows: T[]
  total: number
}

/**
 * Read access to one resource of one company.
 *
 * Contract (checked by the conformance suite):
 * - every call is scoped to `companyId`; a row of another company is never returned, never counted;
 * - `list` orders rows by `id` ascending and applies every filter field that is present (AND);
 * - `get` returns `null` for an unknown id and for another company's id alike.
 */
export interface ResourceReader<T, F> {
  list(companyId: number, filter: F, window: PageWindow): Promise<ListResult<T>>
  get(companyId: number, id: number): Promise<T | null>
  /**
   * Optional: what lets the plugin serve a large company's lists at constant cost (exact
   * totals cached by version, pages found by seeking from known boundaries). Without it,
   * every list runs `list()`: correct, and as slow as counting and skipping makes it.
   */
  seek?: SeekableReader<T, F>
}

/**
 * The change counters of one company's rows of one list resource. Every change bumps one in
 * the change's own transaction, so a reader that sees a counter sees the change; they only grow.
 */
export interface ListVersion {
  /** Rows inserted after every existing row of the company (spec 4.2.1: records append). */
  appends: number
  /** Rows changed in place (which may move them in or out of a filter). */
  updates: number
  /** Rows deleted, moved to another company or id, or inserted before an existing row. */
  removals: number
}

/** A page found from a boundary: the rows after `after` (an id; 0 for the start), skipping `skip`. */
export interface SeekWindow {
  after: number
  skip: number
  limit: number
  /** Count from the end instead: skip the `skip` last rows, return up to `limit` before them, in id order. */
  fromEnd?: boolean
  /**
   * A hint: matching rows are dense from `after` on (it is the first match, or a later page's
   * boundary), so walking id order finds the page sooner than a filter's own index would.
   */
  walkIds?: boolean
}

/**
 * The capability behind fast lists (docs/adapters.md, "Fast lists"). Each answer carries the
 * version of the snapshot it was computed in: read in the same statement (or transaction).
 */
export interface SeekableReader<T, F> {
  /** The counters now: one indexed lookup. A company with no rows yet is all zeros. */
  version(companyId: number): Promise<ListVersion>
  /** The exact number of rows matching `filter`, and the version it was counted at. */
  count(companyId: number, filter: F): Promise<{ total: number; version: ListVersion }>
  /** The rows of `window` in id order, and the version, which is `null` when no row matched. */
  page(companyId: number, filter: F, window: SeekWindow): Promise<{ rows: T[]; version: ListVersion | null }>
}

/** Records whose `updated_at` is at or after this instant (inclusive). */
export interface UpdatedSince {
  updatedSince?: Date
}

export interface UserFilter extends UpdatedSince {
  active?: boolean
  /** Already lower-cased; matches the stored email case-insensitively and exactly. */
  email?: string
}

export type EmployeeFilter = UpdatedSince

export type RoleFilter = Record<string, never>

export interface ProjectFilter extends UpdatedSince {
  status?: ProjectStatus
  kind?: ProjectKind
  customerId?: number
}

/**
 * Day filters on instants arrive as instant bounds already computed in the company's
 * time zone: adapters never do time-zone math.
 */
export interface ShiftFilter extends UpdatedSince {
  employeeId?: number
  projectId?: number
  status?: ShiftStatus
  /** `starts_at >= startsFrom` (the first instant of `date_from` in the company's zone). */
  startsFrom?: Date
  /** `starts_at < startsBefore` (the first instant of the day after `date_to`). */
  startsBefore?: Date
}

export interface AbsenceFilter extends UpdatedSince {
  employeeId?: number
  status?: AbsenceStatus
  /** `date >= dateFrom`, comparing days. */
  dateFrom?: Day
  /** `date <= dateTo`, comparing days. */
  dateTo?: Day
}

export interface ExpenseFilter extends UpdatedSince {
  employeeId?: number
  projectId?: number
  category?: ExpenseCategory
  dateFrom?: Day
  dateTo?: Day
}

/**
 * One end of a due-date window. An all-day to-do matches on its day; a timed one on its
 * instant, whose bound the plugin computed from the same day in the company's zone.
 */
export interface DueBound {
  day: Day
  instant: Date
}

export interface TodoFilter extends UpdatedSince {
  status?: TodoStatus
  assignedTo?: number
  listId?: number
  important?: boolean
  /** All-day: `due_day >= dueFrom.day`; timed: `due_at >= dueFrom.instant`. No due date never matches. */
  dueFrom?: DueBound
  /** All-day: `due_day <= dueTo.day`; timed: `due_at < dueTo.instant` (start of the next day). */
  dueTo?: DueBound
}

/**
 * Read access to the host's workforce data, one reader per resource.
 *
 * @example
 * const storage: Storage = createMemoryStorage(dataset)
 * await app.register(workforceApi, { prefix: '/api/public', storage, keyStore, modules })
 */
export interface Storage {
  users: ResourceReader<UserRecord, UserFilter>
  employees: ResourceReader<EmployeeRecord, EmployeeFilter>
  roles: ResourceReader<RoleRecord, RoleFilter>
  projects: ResourceReader<ProjectRecord, ProjectFilter>
  shifts: ResourceReader<ShiftRecord, ShiftFilter>
  absences: ResourceReader<AbsenceRecord, AbsenceFilter>
  expenses: ResourceReader<ExpenseRecord, ExpenseFilter>
  todos: ResourceReader<TodoRecord, TodoFilter>
  /** The tenant's own company, or `null` if it does not exist. */
  company(companyId: number): Promise<CompanyRecord | null>
}
