import { sql, type SelectQueryBuilder } from 'kysely'
import type {
  AbsenceFilter,
  EmployeeFilter,
  ExpenseFilter,
  ProjectFilter,
  RoleFilter,
  ShiftFilter,
  TodoFilter,
  UserFilter,
} from '../../src/ports/storage.js'
import type {
  AbsenceRecord,
  EmployeeRecord,
  ExpenseRecord,
  ProjectRecord,
  RoleRecord,
  ShiftRecord,
  TodoRecord,
  UserRecord,
} from '../../src/ports/records.js'
import type { SqlCodec } from './codec.js'
import { param, type QueryDb } from './prepared.js'

type Query = SelectQueryBuilder<any, any, any>
type Row = Record<string, any>

/** One filter: the WHERE it adds (with named params) and how its value binds to those names. */
interface FilterSql<V> {
  where(query: Query): Query
  bind(value: V, codec: SqlCodec): Record<string, unknown>
  /**
   * A range over a column that grows with time (updated_at, starts_at, days, due dates).
   * Such a filter is usually selective and its rows cluster at the newest ids, so the page is
   * better found through the filter's index than by walking id order (see `SqlResourceReader`).
   */
  range?: true
  /** Reads a joined table, so the COUNT cannot use the resource's `countFrom` shortcut. */
  joined?: true
}

/**
 * The SQL of one read-only resource, shared by every SQL dialect. `from` must scope rows
 * to `param('company_id')`; `id` is the column lists are ordered by.
 */
export interface ResourceQuery<R, F> {
  from(db: QueryDb): Query
  /**
   * Optional: the same rows as `from`, counted without its joins. Used for the COUNT when no
   * `joined` filter is present; it must count exactly the rows `from` yields.
   */
  countFrom?(db: QueryDb): Query
  id: string
  select(query: Query): Query
  filters: { [K in keyof Required<F>]: FilterSql<Exclude<F[K], undefined>> }
  decode(row: Row, codec: SqlCodec): R
}

const same = (name: string) => <V>(value: V) => ({ [name]: value })
const eq = <V>(column: string, name: string): FilterSql<V> => ({
  where: (q) => q.where(column, '=', param(name)),
  bind: same(name),
})
const updatedSince = (column: string): FilterSql<Date> => ({
  range: true,
  where: (q) => q.where(column, '>=', param('updated_since')),
  bind: (value, codec) => ({ updated_since: codec.instant(value) }),
})
const dayFrom = (column: string): FilterSql<string> => ({
  range: true,
  where: (q) => q.where(column, '>=', param('date_from')),
  bind: (value, codec) => ({ date_from: codec.day(value) }),
})
const dayTo = (column: string): FilterSql<string> => ({
  range: true,
  where: (q) => q.where(column, '<=', param('date_to')),
  bind: (value, codec) => ({ date_to: codec.day(value) }),
})
const timestamps = (row: Row, codec: SqlCodec) => ({
  created_at: codec.readInstant(row.created_at),
  updated_at: codec.readInstant(row.updated_at),
})
const nullableDay = (value: unknown, codec: SqlCodec) => (value === null ? null : codec.readDay(value))

const ACCEPTED = sql.lit('accepted')
/** Matches no membership: `invitation_status` is never empty. */
const NO_STATUS = ''

export const userQuery: ResourceQuery<UserRecord, UserFilter> = {
  from: (db) =>
    db
      .selectFrom('wfa_memberships as m')
      // A pending user has no person yet (`person_id` null) and shows only what the company sent.
      .leftJoin('wfa_users as u', 'u.id', 'm.person_id')
      .where('m.company_id', '=', param('company_id')),
  // Every membership is a user (the join only adds the person), so counting memberships counts
  // the users. At 100,000 users that COUNT is ~2 ms instead of ~7.5 ms through the join.
  countFrom: (db) => db.selectFrom('wfa_memberships as m').where('m.company_id', '=', param('company_id')),
  id: 'm.user_id',
  select: (q) =>
    q.select([
      'm.user_id as id',
      'u.email',
      'u.first_name',
      'u.last_name',
      'u.active',
      'm.role_ids',
      'm.invitation_status',
      'm.invited_email',
      'm.invited_first_name',
      'm.invited_last_name',
      'm.created_at',
      'm.updated_at',
    ]),
  filters: {
    // Filters compare what the company sees: a pending member is inactive, whatever the login.
    // `active_pending` is 'pending' for `active: false` and a status no row has for `true`. Plain
    // ANDs and ORs, not a CASE: the planner keeps estimating `u.active` and stays off a Seq Scan.
    active: {
      joined: true,
      where: (q) =>
        q.where((eb) =>
          eb.or([
            eb.and([eb('u.active', '=', param('active')), eb('m.invitation_status', '=', ACCEPTED)]),
            eb('m.invitation_status', '=', param('active_pending')),
          ]),
        ),
      bind: (value, codec) => ({ active: codec.bool(value), active_pending: value ? NO_STATUS : 'pending' }),
    },
    // On the memberships alone, so each branch is a probe of a unique index of the company's
    // memberships: an accepted user by the person with that email (found through the people's
    // unique email index), a pending one by the email the company sent.
    email: {
      where: (q) =>
        q.where((eb) =>
          eb.or([
            eb.and([
              eb('m.person_id', '=', eb.selectFrom('wfa_users').select('wfa_users.id').where('wfa_users.email_lower', '=', param('email'))),
              eb('m.invitation_status', '=', ACCEPTED),
            ]),
            eb('m.invited_email_lower', '=', param('email')),
          ]),
        ),
      bind: same('email'),
    },
    updatedSince: updatedSince('m.updated_at'),
  },
  decode: (row, codec) => {
    const pending = row.invitation_status === 'pending'
    return {
      id: row.id,
      email: pending ? row.invited_email : row.email,
      first_name: pending ? row.invited_first_name : row.first_name,
      last_name: pending ? row.invited_last_name : row.last_name,
      active: pending ? false : codec.readBool(row.active),
      role_ids: codec.readJson(row.role_ids),
      invitation_status: pending ? 'pending' : 'accepted',
      ...timestamps(row, codec),
    }
  },
}

export const employeeQuery: ResourceQuery<EmployeeRecord, EmployeeFilter> = {
  from: (db) => db.selectFrom('wfa_employees as e').where('e.company_id', '=', param('company_id')),
  id: 'e.id',
  select: (q) =>
    q.select([
      'e.id',
      'e.user_id',
      'e.employee_number',
      'e.job_title',
      'e.contract_type',
      'e.weekly_hours',
      'e.hire_date',
      'e.termination_date',
      'e.supervisor_id',
      'e.created_at',
      'e.updated_at',
    ]),
  filters: { updatedSince: updatedSince('e.updated_at') },
  decode: (row, codec) => ({
    id: row.id,
    user_id: row.user_id,
    employee_number: row.employee_number,
    job_title: row.job_title,
    contract_type: row.contract_type,
    weekly_hours: row.weekly_hours,
    hire_date: codec.readDay(row.hire_date),
    termination_date: nullableDay(row.termination_date, codec),
    supervisor_id: row.supervisor_id,
    ...timestamps(row, codec),
  }),
}

export const roleQuery: ResourceQuery<RoleRecord, RoleFilter> = {
  from: (db) => db.selectFrom('wfa_roles as r').where('r.company_id', '=', param('company_id')),
  id: 'r.id',
  select: (q) => q.select(['r.id', 'r.name', 'r.permissions', 'r.created_at', 'r.updated_at']),
  filters: {},
  decode: (row, codec) => ({
    id: row.id,
    name: row.name,
    permissions: codec.readJson(row.permissions),
    ...timestamps(row, codec),
  }),
}

export const projectQuery: ResourceQuery<ProjectRecord, ProjectFilter> = {
  from: (db) => db.selectFrom('wfa_projects as p').where('p.company_id', '=', param('company_id')),
  id: 'p.id',
  select: (q) =>
    q.select(['p.id', 'p.name', 'p.code', 'p.status', 'p.kind', 'p.customer_id', 'p.starts_on', 'p.ends_on', 'p.created_at', 'p.updated_at']),
  filters: {
    status: eq('p.status', 'status'),
    kind: eq('p.kind', 'kind'),
    customerId: eq('p.customer_id', 'customer_id'),
    updatedSince: updatedSince('p.updated_at'),
  },
  decode: (row, codec) => ({
    id: row.id,
    name: row.name,
    code: row.code,
    status: row.status,
    kind: row.kind,
    customer_id: row.customer_id,
    starts_on: nullableDay(row.starts_on, codec),
    ends_on: nullableDay(row.ends_on, codec),
    ...timestamps(row, codec),
  }),
}

export const shiftQuery: ResourceQuery<ShiftRecord, ShiftFilter> = {
  from: (db) => db.selectFrom('wfa_shifts as s').where('s.company_id', '=', param('company_id')),
  id: 's.id',
  select: (q) =>
    q.select(['s.id', 's.employee_id', 's.project_id', 's.status', 's.starts_at', 's.ends_at', 's.break_minutes', 's.created_at', 's.updated_at']),
  filters: {
    employeeId: eq('s.employee_id', 'employee_id'),
    projectId: eq('s.project_id', 'project_id'),
    status: eq('s.status', 'status'),
    startsFrom: {
      range: true,
      where: (q) => q.where('s.starts_at', '>=', param('starts_from')),
      bind: (value, codec) => ({ starts_from: codec.instant(value) }),
    },
    startsBefore: {
      range: true,
      where: (q) => q.where('s.starts_at', '<', param('starts_before')),
      bind: (value, codec) => ({ starts_before: codec.instant(value) }),
    },
    updatedSince: updatedSince('s.updated_at'),
  },
  decode: (row, codec) => ({
    id: row.id,
    employee_id: row.employee_id,
    project_id: row.project_id,
    status: row.status,
    starts_at: codec.readInstant(row.starts_at),
    ends_at: codec.readInstant(row.ends_at),
    break_minutes: row.break_minutes,
    ...timestamps(row, codec),
  }),
}

export const absenceQuery: ResourceQuery<AbsenceRecord, AbsenceFilter> = {
  from: (db) => db.selectFrom('wfa_absences as a').where('a.company_id', '=', param('company_id')),
  id: 'a.id',
  select: (q) => q.select(['a.id', 'a.employee_id', 'a.date', 'a.type', 'a.hours', 'a.status', 'a.created_at', 'a.updated_at']),
  filters: {
    employeeId: eq('a.employee_id', 'employee_id'),
    status: eq('a.status', 'status'),
    dateFrom: dayFrom('a.date'),
    dateTo: dayTo('a.date'),
    updatedSince: updatedSince('a.updated_at'),
  },
  decode: (row, codec) => ({
    id: row.id,
    employee_id: row.employee_id,
    date: codec.readDay(row.date),
    type: row.type,
    hours: row.hours,
    status: row.status,
    ...timestamps(row, codec),
  }),
}

export const expenseQuery: ResourceQuery<ExpenseRecord, ExpenseFilter> = {
  from: (db) => db.selectFrom('wfa_expenses as x').where('x.company_id', '=', param('company_id')),
  id: 'x.id',
  select: (q) =>
    q.select([
      'x.id',
      'x.employee_id',
      'x.project_id',
      'x.category',
      'x.description',
      'x.date',
      'x.amount_cents',
      'x.currency',
      'x.created_at',
      'x.updated_at',
    ]),
  filters: {
    employeeId: eq('x.employee_id', 'employee_id'),
    projectId: eq('x.project_id', 'project_id'),
    category: eq('x.category', 'category'),
    dateFrom: dayFrom('x.date'),
    dateTo: dayTo('x.date'),
    updatedSince: updatedSince('x.updated_at'),
  },
  decode: (row, codec) => ({
    id: row.id,
    employee_id: row.employee_id,
    project_id: row.project_id,
    category: row.category,
    description: row.description,
    date: codec.readDay(row.date),
    amount_cents: codec.readInt(row.amount_cents),
    currency: row.currency,
    ...timestamps(row, codec),
  }),
}

export const todoQuery: ResourceQuery<TodoRecord, TodoFilter> = {
  from: (db) => db.selectFrom('wfa_todos as t').where('t.company_id', '=', param('company_id')),
  id: 't.id',
  select: (q) =>
    q.select([
      't.id',
      't.title',
      't.notes',
      't.status',
      't.priority',
      't.important',
      't.due_day',
      't.due_at',
      't.due_is_all_day',
      't.list_id',
      't.assigned_to',
      't.assignee_group_id',
      't.claimed_by',
      't.checklist',
      't.tag_ids',
      't.source',
      't.created_at',
      't.updated_at',
    ]),
  filters: {
    status: eq('t.status', 'status'),
    assignedTo: eq('t.assigned_to', 'assigned_to'),
    listId: eq('t.list_id', 'list_id'),
    important: {
      where: (q) => q.where('t.important', '=', param('important')),
      bind: (value, codec) => ({ important: codec.bool(value) }),
    },
    // All-day to-dos match on their day, timed ones on their instant; a row has only one set.
    dueFrom: {
      range: true,
      where: (q) =>
        q.where((eb) => eb.or([eb('t.due_day', '>=', param('due_from_day')), eb('t.due_at', '>=', param('due_from_at'))])),
      bind: (value, codec) => ({ due_from_day: codec.day(value.day), due_from_at: codec.instant(value.instant) }),
    },
    dueTo: {
      range: true,
      where: (q) =>
        q.where((eb) => eb.or([eb('t.due_day', '<=', param('due_to_day')), eb('t.due_at', '<', param('due_to_at'))])),
      bind: (value, codec) => ({ due_to_day: codec.day(value.day), due_to_at: codec.instant(value.instant) }),
    },
    updatedSince: updatedSince('t.updated_at'),
  },
  decode: (row, codec) => ({
    id: row.id,
    title: row.title,
    notes: row.notes,
    status: row.status,
    priority: row.priority,
    important: codec.readBool(row.important),
    due_day: nullableDay(row.due_day, codec),
    due_at: row.due_at === null ? null : codec.readInstant(row.due_at),
    due_is_all_day: codec.readBool(row.due_is_all_day),
    list_id: row.list_id,
    assigned_to: row.assigned_to,
    assignee_group_id: row.assignee_group_id,
    claimed_by: row.claimed_by,
    checklist: codec.readJson(row.checklist),
    tag_ids: codec.readJson(row.tag_ids),
    source: row.source === null ? null : codec.readJson(row.source),
    ...timestamps(row, codec),
  }),
}
