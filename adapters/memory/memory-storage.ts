import type {
  AbsenceFilter,
  EmployeeFilter,
  ExpenseFilter,
  ListResult,
  PageWindow,
  ProjectFilter,
  ResourceReader,
  ShiftFilter,
  Storage,
  TodoFilter,
  UserFilter,
} from '../../src/ports/storage.js'
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
} from '../../src/ports/records.js'
import type { Dataset, InvitedPerson, PersonRow } from '../../src/ports/dataset.js'
import { TransactionGate, untilReadable } from '../transaction-gate.js'

/**
 * A reader over in-memory rows: filter, order by id, then slice. Rows are copied out so a
 * caller can never mutate the store through a returned record.
 */
class MemoryReader<Row extends { id: number }, R, F> implements ResourceReader<R, F> {
  constructor(
    private readonly gate: TransactionGate,
    private readonly rowsOf: (companyId: number) => Row[],
    private readonly matches: (row: Row, filter: F) => boolean,
    private readonly toRecord: (row: Row) => R,
  ) {}

  async list(companyId: number, filter: F, window: PageWindow): Promise<ListResult<R>> {
    await untilReadable(this.gate)
    const matching = this.rowsOf(companyId)
      .filter((row) => this.matches(row, filter))
      .sort((a, b) => a.id - b.id)
    return {
      rows: matching.slice(window.offset, window.offset + window.limit).map(this.toRecord),
      total: matching.length,
    }
  }

  async get(companyId: number, id: number): Promise<R | null> {
    await untilReadable(this.gate)
    const row = this.rowsOf(companyId).find((candidate) => candidate.id === id)
    return row === undefined ? null : this.toRecord(row)
  }
}

const since = (updatedAt: Date, updatedSince: Date | undefined) =>
  updatedSince === undefined || updatedAt.getTime() >= updatedSince.getTime()
const is = <V>(value: V, wanted: V | undefined) => wanted === undefined || value === wanted
const dayFrom = (day: string, from: string | undefined) => from === undefined || day >= from
const dayTo = (day: string, to: string | undefined) => to === undefined || day <= to

function dueMatches(todo: TodoRecord, filter: TodoFilter): boolean {
  const { dueFrom, dueTo } = filter
  if (dueFrom === undefined && dueTo === undefined) return true
  if (todo.due_is_all_day && todo.due_day !== null) {
    return dayFrom(todo.due_day, dueFrom?.day) && dayTo(todo.due_day, dueTo?.day)
  }
  if (!todo.due_is_all_day && todo.due_at !== null) {
    const at = todo.due_at.getTime()
    return (dueFrom === undefined || at >= dueFrom.instant.getTime()) && (dueTo === undefined || at < dueTo.instant.getTime())
  }
  return false
}

const clone = <T>(value: T): T => structuredClone(value)

/** Copies exactly the record's fields, leaving storage-only (private) fields behind. */
function pick<R>(keys: ReadonlyArray<keyof R>) {
  return (row: R): R => {
    const record = {} as R
    for (const key of keys) record[key] = clone(row[key])
    return record
  }
}

/**
 * The reference `Storage`: plain arrays in a `Dataset`, which the caller may pass in and
 * inspect. Same contract as the SQL adapters, checked by the same conformance suite.
 */
export class MemoryStorage implements Storage {
  readonly users: ResourceReader<UserRecord, UserFilter>
  readonly employees: ResourceReader<EmployeeRecord, EmployeeFilter>
  readonly roles: ResourceReader<RoleRecord, Record<string, never>>
  readonly projects: ResourceReader<ProjectRecord, ProjectFilter>
  readonly shifts: ResourceReader<ShiftRecord, ShiftFilter>
  readonly absences: ResourceReader<AbsenceRecord, AbsenceFilter>
  readonly expenses: ResourceReader<ExpenseRecord, ExpenseFilter>
  readonly todos: ResourceReader<TodoRecord, TodoFilter>

  /**
   * @param data the backing rows; tests may inspect them
   * @param gate shared with the write storage, so reads wait for an open transaction
   */
  constructor(
    readonly data: Dataset,
    readonly gate: TransactionGate = new TransactionGate(),
  ) {
    const of =
      <Row extends { company_id: number }>(rows: () => Row[]) =>
      (companyId: number) =>
        rows().filter((row) => row.company_id === companyId)

    this.users = new MemoryReader(
      gate,
      (companyId) => this.usersOf(companyId),
      (user, f: UserFilter) => is(user.active, f.active) && is(user.email.toLowerCase(), f.email) && since(user.updated_at, f.updatedSince),
      clone,
    )
    this.employees = new MemoryReader(
      gate,
      of(() => this.data.employees),
      (row, f: EmployeeFilter) => since(row.updated_at, f.updatedSince),
      pick<EmployeeRecord>(['id', 'user_id', 'employee_number', 'job_title', 'contract_type', 'weekly_hours', 'hire_date', 'termination_date', 'supervisor_id', 'created_at', 'updated_at']),
    )
    this.roles = new MemoryReader(
      gate,
      of(() => this.data.roles),
      () => true,
      pick<RoleRecord>(['id', 'name', 'permissions', 'created_at', 'updated_at']),
    )
    this.projects = new MemoryReader(
      gate,
      of(() => this.data.projects),
      (row, f: ProjectFilter) =>
        is(row.status, f.status) && is(row.kind, f.kind) && is(row.customer_id, f.customerId) && since(row.updated_at, f.updatedSince),
      pick<ProjectRecord>(['id', 'name', 'code', 'status', 'kind', 'customer_id', 'starts_on', 'ends_on', 'created_at', 'updated_at']),
    )
    this.shifts = new MemoryReader(
      gate,
      of(() => this.data.shifts),
      (row, f: ShiftFilter) =>
        is(row.employee_id, f.employeeId) &&
        is(row.project_id, f.projectId) &&
        is(row.status, f.status) &&
        (f.startsFrom === undefined || row.starts_at.getTime() >= f.startsFrom.getTime()) &&
        (f.startsBefore === undefined || row.starts_at.getTime() < f.startsBefore.getTime()) &&
        since(row.updated_at, f.updatedSince),
      pick<ShiftRecord>(['id', 'employee_id', 'project_id', 'status', 'starts_at', 'ends_at', 'break_minutes', 'created_at', 'updated_at']),
    )
    this.absences = new MemoryReader(
      gate,
      of(() => this.data.absences),
      (row, f: AbsenceFilter) =>
        is(row.employee_id, f.employeeId) &&
        is(row.status, f.status) &&
        dayFrom(row.date, f.dateFrom) &&
        dayTo(row.date, f.dateTo) &&
        since(row.updated_at, f.updatedSince),
      pick<AbsenceRecord>(['id', 'employee_id', 'date', 'type', 'hours', 'status', 'created_at', 'updated_at']),
    )
    this.expenses = new MemoryReader(
      gate,
      of(() => this.data.expenses),
      (row, f: ExpenseFilter) =>
        is(row.employee_id, f.employeeId) &&
        is(row.project_id, f.projectId) &&
        is(row.category, f.category) &&
        dayFrom(row.date, f.dateFrom) &&
        dayTo(row.date, f.dateTo) &&
        since(row.updated_at, f.updatedSince),
      pick<ExpenseRecord>(['id', 'employee_id', 'project_id', 'category', 'description', 'date', 'amount_cents', 'currency', 'created_at', 'updated_at']),
    )
    this.todos = new MemoryReader(
      gate,
      of(() => this.data.todos),
      (row, f: TodoFilter) =>
        is(row.status, f.status) &&
        is(row.assigned_to, f.assignedTo) &&
        is(row.list_id, f.listId) &&
        is(row.important, f.important) &&
        dueMatches(row, f) &&
        since(row.updated_at, f.updatedSince),
      pick<TodoRecord>([
        'id', 'title', 'notes', 'status', 'priority', 'important', 'due_day', 'due_at', 'due_is_all_day', 'list_id',
        'assigned_to', 'assignee_group_id', 'claimed_by', 'checklist', 'tag_ids', 'source', 'created_at', 'updated_at',
      ]),
    )
  }

  async company(companyId: number): Promise<CompanyRecord | null> {
    await untilReadable(this.gate)
    const company = this.data.companies.find((candidate) => candidate.id === companyId)
    return company === undefined ? null : clone(company)
  }

  /**
   * A company's users: each membership, joined once accepted with its person (see
   * `MembershipRow`); a pending membership shows only what the company sent, never a person.
   * Not gated: for the write transaction.
   */
  usersOf(companyId: number): UserRecord[] {
    const people = new Map(this.data.people.map((person) => [person.id, person]))
    const users: UserRecord[] = []
    for (const membership of this.data.memberships) {
      if (membership.company_id !== companyId) continue
      const pending = membership.invitation_status === 'pending'
      const person = pending || membership.person_id === null ? undefined : people.get(membership.person_id)
      if (pending && membership.invited === null) throw new Error(`Pending user ${membership.user_id} of company ${companyId} has no invited data`)
      if (!pending && person === undefined) continue
      const shown = pending ? (membership.invited as InvitedPerson) : (person as PersonRow)
      users.push({
        id: membership.user_id,
        email: shown.email,
        first_name: shown.first_name,
        last_name: shown.last_name,
        active: pending ? false : (person as PersonRow).active,
        role_ids: [...membership.role_ids],
        invitation_status: membership.invitation_status,
        created_at: membership.created_at,
        updated_at: membership.updated_at,
      })
    }
    return users
  }

  /**
   * A new user id: above every id in the data and every id given before, so an id of a
   * declined invitation is never given again (spec 2.4). Not gated: for the write transaction.
   */
  nextUserId(): number {
    const highest = this.data.memberships.reduce((max, membership) => Math.max(max, membership.user_id), this.#lastUserId)
    this.#lastUserId = highest + 1
    return this.#lastUserId
  }

  #lastUserId = 0
}
