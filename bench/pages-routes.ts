/**
 * The hand-written baseline of issue 25: every list and by-id route of the contract as a
 * competent engineer would write it without the plugin. Plain SQL over the plugin's tables
 * (`select … where company_id = ? order by id limit ? offset ?` and a `count(*)`), a row-to-wire
 * function per resource, and a response schema per route for fast-json-stringify.
 *
 * Written out by hand, not imported from src/ or adapters/: a field the plugin adds, drops or
 * renders differently shows up as a body mismatch at start-up (bench/pages.ts compares every
 * route), instead of silently changing both sides.
 */

/** A database row as either driver returns it (better-sqlite3, or pg with the parsers of bench/pages-baseline.ts). */
export type Row = Record<string, unknown>

/**
 * What differs between the drivers' values: SQLite stores instants as epoch milliseconds,
 * booleans as 0/1 and JSON as text; pg returns Dates, booleans and parsed jsonb. Days are
 * `YYYY-MM-DD` text on both (pg's `date` parser is replaced), ids numbers on both.
 */
export function iso(value: unknown): string {
  return (value instanceof Date ? value : new Date(value as number)).toISOString()
}

export function bool(value: unknown): boolean {
  return value === true || value === 1
}

export function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T
}

/** Cents as the spec's exact decimal string with two digits, `-12.30`. */
export function money(cents: number): string {
  const digits = String(Math.abs(cents)).padStart(3, '0')
  return `${cents < 0 ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`
}

export interface BaselineResource {
  /** Its path under `/v1/` (and the plugin's). */
  path: string
  /** The `from` clause: tables, joins; `?` is never used here (the company is bound in `where`). */
  from: string
  columns: string
  /** The tenant column and the id column the pages are ordered by. */
  companyColumn: string
  idColumn: string
  /** The `from` of the count, when the joins add nothing to it. */
  countFrom: string
  item: object
  render(row: Row): object
}

const id = { type: 'integer', minimum: 1 } as const
const nullableId = { type: ['integer', 'null'] } as const
const string = { type: 'string' } as const
const nullableString = { type: ['string', 'null'] } as const
const number = { type: 'number' } as const
const timestamp = { type: 'string' } as const

function object(properties: Record<string, object>): object {
  return { type: 'object', properties, required: Object.keys(properties) }
}

export const BASELINE_RESOURCES: readonly BaselineResource[] = [
  {
    path: 'users',
    // Since migration 0009 a membership names its person (`person_id`); a pending user has none yet.
    from: 'wfa_memberships m left join wfa_users u on u.id = m.person_id',
    columns:
      'm.user_id as id, u.email, u.first_name, u.last_name, u.active, m.role_ids, m.invitation_status, ' +
      'm.invited_email, m.invited_first_name, m.invited_last_name, m.created_at, m.updated_at',
    companyColumn: 'm.company_id',
    idColumn: 'm.user_id',
    countFrom: 'wfa_memberships m',
    item: object({
      id,
      email: string,
      first_name: string,
      last_name: string,
      active: { type: 'boolean' },
      role_ids: { type: 'array', items: id },
      invitation_status: string,
      created_at: timestamp,
      updated_at: timestamp,
    }),
    render: (r) => {
      // A pending member is shown only as the company sent them.
      const pending = r.invitation_status === 'pending'
      return {
        id: r.id,
        email: pending ? r.invited_email : r.email,
        first_name: pending ? r.invited_first_name : r.first_name,
        last_name: pending ? r.invited_last_name : r.last_name,
        active: !pending && bool(r.active),
        role_ids: json(r.role_ids),
        invitation_status: r.invitation_status,
        created_at: iso(r.created_at),
        updated_at: iso(r.updated_at),
      }
    },
  },
  {
    path: 'employees',
    from: 'wfa_employees e',
    columns:
      'e.id, e.user_id, e.employee_number, e.job_title, e.contract_type, e.weekly_hours, e.hire_date, e.termination_date, ' +
      'e.supervisor_id, e.created_at, e.updated_at',
    companyColumn: 'e.company_id',
    idColumn: 'e.id',
    countFrom: 'wfa_employees e',
    item: object({
      id,
      user_id: nullableId,
      employee_number: string,
      job_title: nullableString,
      contract_type: string,
      weekly_hours: number,
      hire_date: string,
      termination_date: nullableString,
      supervisor_id: nullableId,
      created_at: timestamp,
      updated_at: timestamp,
    }),
    render: (r) => ({
      id: r.id,
      user_id: r.user_id,
      employee_number: r.employee_number,
      job_title: r.job_title,
      contract_type: r.contract_type,
      weekly_hours: r.weekly_hours,
      hire_date: r.hire_date,
      termination_date: r.termination_date,
      supervisor_id: r.supervisor_id,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
  },
  {
    path: 'roles',
    from: 'wfa_roles r',
    columns: 'r.id, r.name, r.permissions, r.created_at, r.updated_at',
    companyColumn: 'r.company_id',
    idColumn: 'r.id',
    countFrom: 'wfa_roles r',
    item: object({ id, name: string, permissions: { type: 'array', items: string }, created_at: timestamp, updated_at: timestamp }),
    render: (r) => ({ id: r.id, name: r.name, permissions: json(r.permissions), created_at: iso(r.created_at), updated_at: iso(r.updated_at) }),
  },
  {
    path: 'projects',
    from: 'wfa_projects p',
    columns: 'p.id, p.name, p.code, p.status, p.kind, p.customer_id, p.starts_on, p.ends_on, p.created_at, p.updated_at',
    companyColumn: 'p.company_id',
    idColumn: 'p.id',
    countFrom: 'wfa_projects p',
    item: object({
      id,
      name: string,
      code: string,
      status: string,
      kind: string,
      customer_id: nullableId,
      starts_on: nullableString,
      ends_on: nullableString,
      created_at: timestamp,
      updated_at: timestamp,
    }),
    render: (r) => ({
      id: r.id,
      name: r.name,
      code: r.code,
      status: r.status,
      kind: r.kind,
      customer_id: r.customer_id,
      starts_on: r.starts_on,
      ends_on: r.ends_on,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
  },
  {
    path: 'shifts',
    from: 'wfa_shifts s',
    columns: 's.id, s.employee_id, s.project_id, s.status, s.starts_at, s.ends_at, s.break_minutes, s.created_at, s.updated_at',
    companyColumn: 's.company_id',
    idColumn: 's.id',
    countFrom: 'wfa_shifts s',
    item: object({
      id,
      employee_id: id,
      project_id: nullableId,
      status: string,
      starts_at: timestamp,
      ends_at: timestamp,
      break_minutes: { type: 'integer' },
      created_at: timestamp,
      updated_at: timestamp,
    }),
    render: (r) => ({
      id: r.id,
      employee_id: r.employee_id,
      project_id: r.project_id,
      status: r.status,
      starts_at: iso(r.starts_at),
      ends_at: iso(r.ends_at),
      break_minutes: r.break_minutes,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
  },
  {
    path: 'absences',
    from: 'wfa_absences a',
    columns: 'a.id, a.employee_id, a.date, a.type, a.hours, a.status, a.created_at, a.updated_at',
    companyColumn: 'a.company_id',
    idColumn: 'a.id',
    countFrom: 'wfa_absences a',
    item: object({ id, employee_id: id, date: string, type: string, hours: number, status: string, created_at: timestamp, updated_at: timestamp }),
    render: (r) => ({
      id: r.id,
      employee_id: r.employee_id,
      date: r.date,
      type: r.type,
      hours: r.hours,
      status: r.status,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
  },
  {
    path: 'expenses',
    from: 'wfa_expenses x',
    columns: 'x.id, x.employee_id, x.project_id, x.category, x.description, x.date, x.amount_cents, x.currency, x.created_at, x.updated_at',
    companyColumn: 'x.company_id',
    idColumn: 'x.id',
    countFrom: 'wfa_expenses x',
    item: object({
      id,
      employee_id: id,
      project_id: nullableId,
      category: string,
      description: string,
      date: string,
      amount: string,
      currency: string,
      created_at: timestamp,
      updated_at: timestamp,
    }),
    render: (r) => ({
      id: r.id,
      employee_id: r.employee_id,
      project_id: r.project_id,
      category: r.category,
      description: r.description,
      date: r.date,
      amount: money(r.amount_cents as number),
      currency: r.currency,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
  },
  {
    path: 'todos',
    from: 'wfa_todos t',
    columns:
      't.id, t.title, t.notes, t.status, t.priority, t.important, t.due_day, t.due_at, t.due_is_all_day, t.list_id, t.assigned_to, ' +
      't.assignee_group_id, t.claimed_by, t.checklist, t.tag_ids, t.source, t.created_at, t.updated_at',
    companyColumn: 't.company_id',
    idColumn: 't.id',
    countFrom: 'wfa_todos t',
    item: object({
      id,
      title: string,
      notes: nullableString,
      status: string,
      priority: string,
      important: { type: 'boolean' },
      due_date: nullableString,
      due_is_all_day: { type: 'boolean' },
      list_id: id,
      assigned_to: nullableId,
      assignee_group_id: nullableId,
      claimed_by: nullableId,
      checklist: { type: 'array', items: object({ id, title: string, done: { type: 'boolean' } }) },
      tag_ids: { type: 'array', items: id },
      source: { anyOf: [object({ type: string, id }), { type: 'null' }] },
      created_at: timestamp,
      updated_at: timestamp,
    }),
    render: (r) => {
      const allDay = bool(r.due_is_all_day)
      return {
        id: r.id,
        title: r.title,
        notes: r.notes,
        status: r.status,
        priority: r.priority,
        important: bool(r.important),
        due_date: allDay ? r.due_day : r.due_at === null ? null : iso(r.due_at),
        due_is_all_day: allDay,
        list_id: r.list_id,
        assigned_to: r.assigned_to,
        assignee_group_id: r.assignee_group_id,
        claimed_by: r.claimed_by,
        checklist: json(r.checklist),
        tag_ids: json(r.tag_ids),
        source: r.source === null ? null : json(r.source),
        created_at: iso(r.created_at),
        updated_at: iso(r.updated_at),
      }
    },
  },
]

/** `GET /v1/company`: one row of `wfa_companies`. */
export const BASELINE_COMPANY = {
  sql: 'select id, name, timezone, country, created_at, updated_at from wfa_companies where id = ?',
  item: object({ id, name: string, timezone: string, country: string, created_at: timestamp, updated_at: timestamp }),
  render: (r: Row) => ({ id: r.id, name: r.name, timezone: r.timezone, country: r.country, created_at: iso(r.created_at), updated_at: iso(r.updated_at) }),
}

export const PAGINATION_SCHEMA = object({ page: { type: 'integer' }, per_page: { type: 'integer' }, total: { type: 'integer' }, total_pages: { type: 'integer' } })

/** The statements of one resource, with `?` placeholders (bench/pages-baseline.ts numbers them for pg). */
export function resourceSql(resource: BaselineResource): { page: string; count: string; byId: string } {
  const select = `select ${resource.columns} from ${resource.from}`
  return {
    page: `${select} where ${resource.companyColumn} = ? order by ${resource.idColumn} limit ? offset ?`,
    count: `select count(*) as total from ${resource.countFrom} where ${resource.companyColumn} = ?`,
    byId: `${select} where ${resource.companyColumn} = ? and ${resource.idColumn} = ?`,
  }
}
