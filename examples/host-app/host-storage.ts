/**
 * The host's `Storage`: the public API's read port over the host's own tables.
 *
 * Rules every reader follows (docs/adapters.md, checked by the conformance suite):
 * - every query starts with `org_id = companyId`, lists and lookups alike;
 * - lists apply each filter member that is not `undefined`, order by id, then page;
 *   `total` counts the filtered rows of all pages;
 * - only public columns are selected: salary, IBAN, offer numbers, notes and reasons never leave SQL;
 * - no time-zone math: the plugin already turned days into instant bounds, so instants are
 *   compared as stored UTC text and days as `YYYY-MM-DD` text.
 */
import { sql, type Kysely } from 'kysely'
import type {
  AbsenceFilter,
  EmployeeFilter,
  ExpenseFilter,
  ListResult,
  PageWindow,
  ProjectFilter,
  ResourceReader,
  RoleFilter,
  ShiftFilter,
  Storage,
  TodoFilter,
  UserFilter,
} from '../../src/ports/storage.js' // a host imports these from 'fastify-workforce-api'
import type {
  AbsenceRecord,
  AbsenceStatus,
  AbsenceType,
  CompanyRecord,
  ContractType,
  EmployeeRecord,
  ExpenseCategory,
  ExpenseRecord,
  ProjectKind,
  ProjectRecord,
  ProjectStatus,
  RoleRecord,
  ShiftRecord,
  ShiftStatus,
  TodoPriority,
  TodoRecord,
  TodoStatus,
  UserRecord,
} from '../../src/ports/records.js'
import type { Flag, HostDatabase } from './database.js'

/**
 * Instants are stored as `Date#toISOString()` text: one fixed width, always UTC with `Z` and
 * milliseconds, so text order is time order and `>=`/`<` on the text compare instants.
 */
const iso = (date: Date): string => date.toISOString()
const instant = (text: string): Date => new Date(text)
const flag = (value: boolean): Flag => (value ? 1 : 0)

/** The host says `pending` where the API says `requested`: translate filters in, rows out. */
const LEAVE_STATE_OF: Record<AbsenceStatus, string> = {
  requested: 'pending',
  approved: 'granted',
  rejected: 'declined',
  cancelled: 'withdrawn',
}
const ABSENCE_STATUS_OF = new Map(Object.entries(LEAVE_STATE_OF).map(([status, state]) => [state, status as AbsenceStatus]))

function absenceStatus(state: string): AbsenceStatus {
  const status = ABSENCE_STATUS_OF.get(state)
  if (status === undefined) throw new Error(`leave_requests.approval_state "${state}" has no API status`)
  return status
}

/** Runs a page query and its count query together. */
async function page<Row, R>(rows: Promise<Row[]>, count: Promise<{ total: number | string | bigint }>, toRecord: (row: Row) => R): Promise<ListResult<R>> {
  const [found, counted] = await Promise.all([rows, count])
  return { rows: found.map(toRecord), total: Number(counted.total) }
}

// Users ------------------------------------------------------------------------------------------

/**
 * The API's user `updated_at` is the later of the person's and the membership's last change:
 * this app does not touch memberships when an account changes, so take the greater of both
 * (SQLite's two-argument `max`, on same-format UTC text). A pending member (a row in
 * `membership_invites`) is dated by the membership alone: the organisation must not see the
 * account change for another organisation.
 */
const USER_UPDATED_AT = sql<string>`(case when i.member_id is null then max(a.updated_at, m.changed_at) else m.changed_at end)`
/** What the organisation sees of the login: a pending member is shown inactive, whatever the account says. */
const USER_ACTIVE = sql<Flag>`(case when i.member_id is null then a.login_enabled else 0 end)`
/** The email the organisation sees: the one it typed while the invitation is pending. */
const USER_EMAIL = sql<string>`coalesce(i.sent_to_email, a.email_address)`

class HostUsers implements ResourceReader<UserRecord, UserFilter> {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  /** A user is a membership of this organisation joined with the person's account, or with its invitation while pending. */
  #query(orgId: number, filter: UserFilter) {
    let query = this.db
      .selectFrom('company_memberships as m')
      // An invited member has no account yet: only what the organisation typed.
      .leftJoin('accounts as a', 'a.account_id', 'm.account_id')
      .leftJoin('membership_invites as i', (join) => join.onRef('i.org_id', '=', 'm.org_id').onRef('i.member_id', '=', 'm.member_id'))
      .where('m.org_id', '=', orgId)
    // Filters compare what the organisation sees, pending members included.
    if (filter.active !== undefined) query = query.where(USER_ACTIVE, '=', flag(filter.active))
    // The filter arrives lower-cased; compare with `=`, never LIKE (`_` and `%` are wildcards there).
    if (filter.email !== undefined) query = query.where(sql`lower(${USER_EMAIL})`, '=', filter.email)
    if (filter.updatedSince !== undefined) query = query.where(USER_UPDATED_AT, '>=', iso(filter.updatedSince))
    return query
  }

  #selected(orgId: number, filter: UserFilter) {
    return this.#query(orgId, filter).select([
      'm.member_id',
      'a.email_address',
      'a.given_name',
      'a.family_name',
      'a.login_enabled',
      'i.sent_to_email as invite_email',
      'i.given_name as invite_given_name',
      'i.family_name as invite_family_name',
      'm.joined_at',
      USER_UPDATED_AT.as('updated_at'),
    ])
  }

  async list(orgId: number, filter: UserFilter, window: PageWindow): Promise<ListResult<UserRecord>> {
    const found = await page(
      this.#selected(orgId, filter).orderBy('m.member_id').limit(window.limit).offset(window.offset).execute(),
      this.#query(orgId, filter).select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      (row) => row,
    )
    const roles = await this.#roleIds(orgId, found.rows.map((row) => row.member_id))
    return { rows: found.rows.map((row) => toUser(row, roles.get(row.member_id) ?? [])), total: found.total }
  }

  async get(orgId: number, id: number): Promise<UserRecord | null> {
    const row = await this.#selected(orgId, {}).where('m.member_id', '=', id).executeTakeFirst()
    if (row === undefined) return null
    const roles = await this.#roleIds(orgId, [id])
    return toUser(row, roles.get(id) ?? [])
  }

  /** Role ids per member of this organisation, ascending: one query for a whole page. */
  async #roleIds(orgId: number, memberIds: number[]): Promise<Map<number, number[]>> {
    const byMember = new Map<number, number[]>()
    if (memberIds.length === 0) return byMember
    const rows = await this.db
      .selectFrom('membership_roles')
      .select(['member_id', 'job_role_id'])
      .where('org_id', '=', orgId)
      .where('member_id', 'in', memberIds)
      .orderBy('job_role_id')
      .execute()
    for (const row of rows) byMember.set(row.member_id, [...(byMember.get(row.member_id) ?? []), row.job_role_id])
    return byMember
  }
}

interface UserRow {
  member_id: number
  email_address: string | null
  given_name: string | null
  family_name: string | null
  login_enabled: Flag | null
  invite_email: string | null
  invite_given_name: string | null
  invite_family_name: string | null
  joined_at: string
  updated_at: string
}

/** A pending member comes out of the invitation alone: the account's data is another organisation's. */
function toUser(row: UserRow, roleIds: number[]): UserRecord {
  const pending = row.invite_email !== null
  return {
    id: row.member_id,
    email: pending ? row.invite_email ?? '' : row.email_address ?? '',
    first_name: pending ? row.invite_given_name ?? '' : row.given_name ?? '',
    last_name: pending ? row.invite_family_name ?? '' : row.family_name ?? '',
    active: !pending && row.login_enabled === 1,
    role_ids: roleIds,
    invitation_status: pending ? 'pending' : 'accepted',
    created_at: instant(row.joined_at),
    updated_at: instant(row.updated_at),
  }
}

// Employees ----------------------------------------------------------------------------------------

const EMPLOYEE_COLUMNS = [
  'staff_member_id', 'account_id', 'payroll_code', 'position_title', 'contract_kind', 'hours_per_week', 'hired_on', 'left_on',
  'reports_to', 'created_at', 'updated_at',
] as const // never gross_salary_cents or bank_iban

class HostEmployees implements ResourceReader<EmployeeRecord, EmployeeFilter> {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  #query(orgId: number, filter: EmployeeFilter) {
    let query = this.db.selectFrom('staff_members').where('org_id', '=', orgId)
    if (filter.updatedSince !== undefined) query = query.where('updated_at', '>=', iso(filter.updatedSince))
    return query
  }

  list(orgId: number, filter: EmployeeFilter, window: PageWindow): Promise<ListResult<EmployeeRecord>> {
    const query = this.#query(orgId, filter)
    return page(
      query.select(EMPLOYEE_COLUMNS).orderBy('staff_member_id').limit(window.limit).offset(window.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      toEmployee,
    )
  }

  async get(orgId: number, id: number): Promise<EmployeeRecord | null> {
    const row = await this.#query(orgId, {}).select(EMPLOYEE_COLUMNS).where('staff_member_id', '=', id).executeTakeFirst()
    return row === undefined ? null : toEmployee(row)
  }
}

function toEmployee(row: Pick<HostDatabase['staff_members'], (typeof EMPLOYEE_COLUMNS)[number]>): EmployeeRecord {
  return {
    id: row.staff_member_id,
    user_id: row.account_id,
    employee_number: row.payroll_code,
    job_title: row.position_title,
    contract_type: row.contract_kind as ContractType,
    weekly_hours: row.hours_per_week,
    hire_date: row.hired_on,
    termination_date: row.left_on,
    supervisor_id: row.reports_to,
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
  }
}

// Roles ------------------------------------------------------------------------------------------

const ROLE_COLUMNS = ['job_role_id', 'title', 'permissions_json', 'created_at', 'updated_at'] as const

class HostRoles implements ResourceReader<RoleRecord, RoleFilter> {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  list(orgId: number, _filter: RoleFilter, window: PageWindow): Promise<ListResult<RoleRecord>> {
    const query = this.db.selectFrom('job_roles').where('org_id', '=', orgId)
    return page(
      query.select(ROLE_COLUMNS).orderBy('job_role_id').limit(window.limit).offset(window.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      toRole,
    )
  }

  async get(orgId: number, id: number): Promise<RoleRecord | null> {
    const row = await this.db
      .selectFrom('job_roles')
      .select(ROLE_COLUMNS)
      .where('org_id', '=', orgId)
      .where('job_role_id', '=', id)
      .executeTakeFirst()
    return row === undefined ? null : toRole(row)
  }
}

function toRole(row: Pick<HostDatabase['job_roles'], (typeof ROLE_COLUMNS)[number]>): RoleRecord {
  return {
    id: row.job_role_id,
    name: row.title,
    permissions: JSON.parse(row.permissions_json) as string[],
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
  }
}

// Projects -----------------------------------------------------------------------------------------

const PROJECT_COLUMNS = [
  'client_project_id', 'title', 'project_code', 'state', 'project_type', 'client_ref', 'start_day', 'end_day', 'created_at', 'updated_at',
] as const // never offer_no or private_notes

class HostProjects implements ResourceReader<ProjectRecord, ProjectFilter> {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  #query(orgId: number, filter: ProjectFilter) {
    let query = this.db.selectFrom('client_projects').where('org_id', '=', orgId)
    if (filter.status !== undefined) query = query.where('state', '=', filter.status)
    if (filter.kind !== undefined) query = query.where('project_type', '=', filter.kind)
    if (filter.customerId !== undefined) query = query.where('client_ref', '=', filter.customerId)
    if (filter.updatedSince !== undefined) query = query.where('updated_at', '>=', iso(filter.updatedSince))
    return query
  }

  list(orgId: number, filter: ProjectFilter, window: PageWindow): Promise<ListResult<ProjectRecord>> {
    const query = this.#query(orgId, filter)
    return page(
      query.select(PROJECT_COLUMNS).orderBy('client_project_id').limit(window.limit).offset(window.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      toProject,
    )
  }

  async get(orgId: number, id: number): Promise<ProjectRecord | null> {
    const row = await this.#query(orgId, {}).select(PROJECT_COLUMNS).where('client_project_id', '=', id).executeTakeFirst()
    return row === undefined ? null : toProject(row)
  }
}

function toProject(row: Pick<HostDatabase['client_projects'], (typeof PROJECT_COLUMNS)[number]>): ProjectRecord {
  return {
    id: row.client_project_id,
    name: row.title,
    code: row.project_code,
    status: row.state as ProjectStatus,
    kind: row.project_type as ProjectKind,
    customer_id: row.client_ref,
    starts_on: row.start_day,
    ends_on: row.end_day,
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
  }
}

// Shifts -------------------------------------------------------------------------------------------

const SHIFT_COLUMNS = [
  'shift_id', 'staff_member_id', 'client_project_id', 'shift_state', 'begins_at', 'finishes_at', 'break_mins', 'created_at', 'updated_at',
] as const // never supervisor_notes

class HostShifts implements ResourceReader<ShiftRecord, ShiftFilter> {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  #query(orgId: number, filter: ShiftFilter) {
    let query = this.db.selectFrom('work_shifts').where('org_id', '=', orgId)
    if (filter.employeeId !== undefined) query = query.where('staff_member_id', '=', filter.employeeId)
    if (filter.projectId !== undefined) query = query.where('client_project_id', '=', filter.projectId)
    if (filter.status !== undefined) query = query.where('shift_state', '=', filter.status)
    // Instant bounds from the plugin: from inclusive, before exclusive. No time zones here.
    if (filter.startsFrom !== undefined) query = query.where('begins_at', '>=', iso(filter.startsFrom))
    if (filter.startsBefore !== undefined) query = query.where('begins_at', '<', iso(filter.startsBefore))
    if (filter.updatedSince !== undefined) query = query.where('updated_at', '>=', iso(filter.updatedSince))
    return query
  }

  list(orgId: number, filter: ShiftFilter, window: PageWindow): Promise<ListResult<ShiftRecord>> {
    const query = this.#query(orgId, filter)
    return page(
      query.select(SHIFT_COLUMNS).orderBy('shift_id').limit(window.limit).offset(window.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      toShift,
    )
  }

  async get(orgId: number, id: number): Promise<ShiftRecord | null> {
    const row = await this.#query(orgId, {}).select(SHIFT_COLUMNS).where('shift_id', '=', id).executeTakeFirst()
    return row === undefined ? null : toShift(row)
  }
}

function toShift(row: Pick<HostDatabase['work_shifts'], (typeof SHIFT_COLUMNS)[number]>): ShiftRecord {
  return {
    id: row.shift_id,
    employee_id: row.staff_member_id,
    project_id: row.client_project_id,
    status: row.shift_state as ShiftStatus,
    starts_at: instant(row.begins_at),
    ends_at: instant(row.finishes_at),
    break_minutes: row.break_mins,
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
  }
}

// Absences (the host's leave requests) -------------------------------------------------------------

const ABSENCE_COLUMNS = [
  'leave_request_id', 'staff_member_id', 'leave_day', 'leave_kind', 'hours_taken', 'approval_state', 'created_at', 'updated_at',
] as const // never reason_text

class HostAbsences implements ResourceReader<AbsenceRecord, AbsenceFilter> {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  #query(orgId: number, filter: AbsenceFilter) {
    let query = this.db.selectFrom('leave_requests').where('org_id', '=', orgId)
    if (filter.employeeId !== undefined) query = query.where('staff_member_id', '=', filter.employeeId)
    if (filter.status !== undefined) query = query.where('approval_state', '=', LEAVE_STATE_OF[filter.status])
    // Days are `YYYY-MM-DD` text: text order is day order; both ends inclusive.
    if (filter.dateFrom !== undefined) query = query.where('leave_day', '>=', filter.dateFrom)
    if (filter.dateTo !== undefined) query = query.where('leave_day', '<=', filter.dateTo)
    if (filter.updatedSince !== undefined) query = query.where('updated_at', '>=', iso(filter.updatedSince))
    return query
  }

  list(orgId: number, filter: AbsenceFilter, window: PageWindow): Promise<ListResult<AbsenceRecord>> {
    const query = this.#query(orgId, filter)
    return page(
      query.select(ABSENCE_COLUMNS).orderBy('leave_request_id').limit(window.limit).offset(window.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      toAbsence,
    )
  }

  async get(orgId: number, id: number): Promise<AbsenceRecord | null> {
    const row = await this.#query(orgId, {}).select(ABSENCE_COLUMNS).where('leave_request_id', '=', id).executeTakeFirst()
    return row === undefined ? null : toAbsence(row)
  }
}

function toAbsence(row: Pick<HostDatabase['leave_requests'], (typeof ABSENCE_COLUMNS)[number]>): AbsenceRecord {
  return {
    id: row.leave_request_id,
    employee_id: row.staff_member_id,
    date: row.leave_day,
    type: row.leave_kind as AbsenceType,
    hours: row.hours_taken,
    status: absenceStatus(row.approval_state),
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
  }
}

// Expenses (the host's costs) ------------------------------------------------------------------------

const EXPENSE_COLUMNS = [
  'cost_id', 'staff_member_id', 'client_project_id', 'cost_category', 'label', 'incurred_on', 'amount_in_cents', 'currency_code',
  'created_at', 'updated_at',
] as const // never km_driven

class HostExpenses implements ResourceReader<ExpenseRecord, ExpenseFilter> {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  #query(orgId: number, filter: ExpenseFilter) {
    let query = this.db.selectFrom('costs').where('org_id', '=', orgId)
    if (filter.employeeId !== undefined) query = query.where('staff_member_id', '=', filter.employeeId)
    if (filter.projectId !== undefined) query = query.where('client_project_id', '=', filter.projectId)
    if (filter.category !== undefined) query = query.where('cost_category', '=', filter.category)
    if (filter.dateFrom !== undefined) query = query.where('incurred_on', '>=', filter.dateFrom)
    if (filter.dateTo !== undefined) query = query.where('incurred_on', '<=', filter.dateTo)
    if (filter.updatedSince !== undefined) query = query.where('updated_at', '>=', iso(filter.updatedSince))
    return query
  }

  list(orgId: number, filter: ExpenseFilter, window: PageWindow): Promise<ListResult<ExpenseRecord>> {
    const query = this.#query(orgId, filter)
    return page(
      query.select(EXPENSE_COLUMNS).orderBy('cost_id').limit(window.limit).offset(window.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      toExpense,
    )
  }

  async get(orgId: number, id: number): Promise<ExpenseRecord | null> {
    const row = await this.#query(orgId, {}).select(EXPENSE_COLUMNS).where('cost_id', '=', id).executeTakeFirst()
    return row === undefined ? null : toExpense(row)
  }
}

function toExpense(row: Pick<HostDatabase['costs'], (typeof EXPENSE_COLUMNS)[number]>): ExpenseRecord {
  return {
    id: row.cost_id,
    employee_id: row.staff_member_id,
    project_id: row.client_project_id,
    category: row.cost_category as ExpenseCategory,
    description: row.label,
    date: row.incurred_on,
    amount_cents: row.amount_in_cents, // already integer cents: no float ever touches it
    currency: row.currency_code,
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
  }
}

// To-dos (the host's tasks) ----------------------------------------------------------------------------

const TODO_COLUMNS = [
  'task_id', 'task_list_id', 'headline', 'body', 'task_state', 'urgency', 'flagged', 'all_day', 'due_on', 'due_at',
  'assignee_account_id', 'offered_to_role_id', 'claimed_by_account_id', 'origin_kind', 'origin_ref', 'created_at', 'updated_at',
] as const

type TaskRow = Pick<HostDatabase['tasks'], (typeof TODO_COLUMNS)[number]>

class HostTodos implements ResourceReader<TodoRecord, TodoFilter> {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  #query(orgId: number, filter: TodoFilter) {
    let query = this.db.selectFrom('tasks').where('org_id', '=', orgId)
    if (filter.status !== undefined) query = query.where('task_state', '=', filter.status)
    if (filter.assignedTo !== undefined) query = query.where('assignee_account_id', '=', filter.assignedTo)
    if (filter.listId !== undefined) query = query.where('task_list_id', '=', filter.listId)
    if (filter.important !== undefined) query = query.where('flagged', '=', flag(filter.important))
    // An all-day task compares its day, a timed one its instant; a task without a due date never matches.
    const { dueFrom, dueTo } = filter
    if (dueFrom !== undefined) {
      query = query.where((eb) =>
        eb.or([
          eb.and([eb('all_day', '=', 1), eb('due_on', '>=', dueFrom.day)]),
          eb.and([eb('all_day', '=', 0), eb('due_at', '>=', iso(dueFrom.instant))]),
        ]),
      )
    }
    if (dueTo !== undefined) {
      query = query.where((eb) =>
        eb.or([
          eb.and([eb('all_day', '=', 1), eb('due_on', '<=', dueTo.day)]),
          eb.and([eb('all_day', '=', 0), eb('due_at', '<', iso(dueTo.instant))]),
        ]),
      )
    }
    if (filter.updatedSince !== undefined) query = query.where('updated_at', '>=', iso(filter.updatedSince))
    return query
  }

  async list(orgId: number, filter: TodoFilter, window: PageWindow): Promise<ListResult<TodoRecord>> {
    const query = this.#query(orgId, filter)
    const found = await page(
      query.select(TODO_COLUMNS).orderBy('task_id').limit(window.limit).offset(window.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      (row) => row,
    )
    return { rows: await this.#withChildren(found.rows), total: found.total }
  }

  async get(orgId: number, id: number): Promise<TodoRecord | null> {
    const row = await this.#query(orgId, {}).select(TODO_COLUMNS).where('task_id', '=', id).executeTakeFirst()
    if (row === undefined) return null
    const [todo] = await this.#withChildren([row])
    return todo ?? null
  }

  /** Checklist items and tags of a whole page: two queries, whatever the page size. */
  async #withChildren(rows: TaskRow[]): Promise<TodoRecord[]> {
    if (rows.length === 0) return []
    const ids = rows.map((row) => row.task_id)
    const [items, tags] = await Promise.all([
      this.db
        .selectFrom('task_checklist_items')
        .select(['task_id', 'item_id', 'label', 'is_done'])
        .where('task_id', 'in', ids)
        .orderBy('task_id')
        .orderBy('position')
        .execute(),
      this.db.selectFrom('task_tags').select(['task_id', 'tag_id']).where('task_id', 'in', ids).orderBy('task_id').orderBy('position').execute(),
    ])
    const checklists = groupBy(items, (item) => ({ id: item.item_id, title: item.label, done: item.is_done === 1 }))
    const tagIds = groupBy(tags, (tag) => tag.tag_id)
    return rows.map((row) => toTodo(row, checklists.get(row.task_id) ?? [], tagIds.get(row.task_id) ?? []))
  }
}

function groupBy<Row extends { task_id: number }, V>(rows: Row[], value: (row: Row) => V): Map<number, V[]> {
  const groups = new Map<number, V[]>()
  for (const row of rows) {
    const group = groups.get(row.task_id) ?? []
    group.push(value(row))
    groups.set(row.task_id, group)
  }
  return groups
}

function toTodo(row: TaskRow, checklist: TodoRecord['checklist'], tagIds: number[]): TodoRecord {
  const allDay = row.all_day === 1
  return {
    id: row.task_id,
    title: row.headline,
    notes: row.body,
    status: row.task_state as TodoStatus,
    priority: row.urgency as TodoPriority,
    important: row.flagged === 1,
    due_day: allDay ? row.due_on : null,
    due_at: !allDay && row.due_at !== null ? instant(row.due_at) : null,
    due_is_all_day: allDay,
    list_id: row.task_list_id,
    assigned_to: row.assignee_account_id,
    assignee_group_id: row.offered_to_role_id,
    claimed_by: row.claimed_by_account_id,
    checklist,
    tag_ids: tagIds,
    source: row.origin_kind === null || row.origin_ref === null ? null : { type: row.origin_kind, id: row.origin_ref },
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
  }
}

// The port -----------------------------------------------------------------------------------------

/**
 * The public API's `Storage` over the host's schema.
 *
 * @example
 * const storage = new HostStorage(db) // the app's own Kysely<HostDatabase>
 * await app.register(workforceApi, { prefix: '/api/public', storage, keyStore, modules })
 */
export class HostStorage implements Storage {
  readonly users: HostUsers
  readonly employees: HostEmployees
  readonly roles: HostRoles
  readonly projects: HostProjects
  readonly shifts: HostShifts
  readonly absences: HostAbsences
  readonly expenses: HostExpenses
  readonly todos: HostTodos

  constructor(private readonly db: Kysely<HostDatabase>) {
    this.users = new HostUsers(db)
    this.employees = new HostEmployees(db)
    this.roles = new HostRoles(db)
    this.projects = new HostProjects(db)
    this.shifts = new HostShifts(db)
    this.absences = new HostAbsences(db)
    this.expenses = new HostExpenses(db)
    this.todos = new HostTodos(db)
  }

  async company(orgId: number): Promise<CompanyRecord | null> {
    const row = await this.db
      .selectFrom('organisations')
      .select(['org_id', 'legal_name', 'tz_name', 'country_code', 'created_at', 'updated_at'])
      .where('org_id', '=', orgId)
      .executeTakeFirst()
    if (row === undefined) return null
    return {
      id: row.org_id,
      name: row.legal_name,
      timezone: row.tz_name,
      country: row.country_code,
      created_at: instant(row.created_at),
      updated_at: instant(row.updated_at),
    }
  }
}
