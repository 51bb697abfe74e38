import type { Dataset } from '../../src/ports/dataset.js'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'

/** Rows per INSERT: keeps every statement well under SQLite's and Postgres' bind-parameter limits. */
const BATCH_SIZE = 500

/**
 * One dataset table's SQL table: its columns, and a row's values in that order. Positional
 * rather than a record per row, because the bulk loaders bind millions of rows and a record
 * (then its values) per row costs as much as the insert; every adapter test loads fixtures
 * through these lists, so a column out of place fails them.
 */
export interface FixtureTable<R> {
  table: string
  columns: readonly string[]
  values(codec: SqlCodec, row: R): unknown[]
}
type FixtureTables = { [T in keyof Dataset]: FixtureTable<Dataset[T][number]> }

const STAMPS = ['created_at', 'updated_at'] as const
const dayOrNull = (c: SqlCodec, value: string | null) => (value === null ? null : c.day(value))

/** Each dataset table's SQL table, in the order tables are loaded. */
const FIXTURE_TABLES: FixtureTables = {
  companies: {
    table: 'wfa_companies',
    columns: ['id', 'name', 'timezone', 'country', ...STAMPS],
    values: (c, r) => [r.id, r.name, r.timezone, r.country, c.instant(r.created_at), c.instant(r.updated_at)],
  },
  people: {
    table: 'wfa_users',
    columns: ['id', 'email', 'email_lower', 'first_name', 'last_name', 'active', 'password_hash', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.email,
      r.email.toLowerCase(),
      r.first_name,
      r.last_name,
      c.bool(r.active),
      r.password_hash,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  memberships: {
    table: 'wfa_memberships',
    columns: [
      'company_id',
      'user_id',
      'person_id',
      'role_ids',
      'invitation_status',
      'invited_email',
      'invited_email_lower',
      'invited_first_name',
      'invited_last_name',
      ...STAMPS,
    ],
    values: (c, r) => [
      r.company_id,
      r.user_id,
      r.person_id,
      c.json(r.role_ids),
      r.invitation_status,
      r.invited?.email ?? null,
      r.invited?.email.toLowerCase() ?? null,
      r.invited?.first_name ?? null,
      r.invited?.last_name ?? null,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  roles: {
    table: 'wfa_roles',
    columns: ['id', 'company_id', 'name', 'permissions', ...STAMPS],
    values: (c, r) => [r.id, r.company_id, r.name, c.json(r.permissions), c.instant(r.created_at), c.instant(r.updated_at)],
  },
  employees: {
    table: 'wfa_employees',
    columns: [
      'id',
      'company_id',
      'user_id',
      'employee_number',
      'job_title',
      'contract_type',
      'weekly_hours',
      'hire_date',
      'termination_date',
      'supervisor_id',
      'salary_cents',
      'iban',
      ...STAMPS,
    ],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.user_id,
      r.employee_number,
      r.job_title,
      r.contract_type,
      r.weekly_hours,
      c.day(r.hire_date),
      dayOrNull(c, r.termination_date),
      r.supervisor_id,
      r.salary_cents,
      r.iban,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  projects: {
    table: 'wfa_projects',
    columns: ['id', 'company_id', 'name', 'code', 'status', 'kind', 'customer_id', 'starts_on', 'ends_on', 'offer_number', 'internal_notes', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.name,
      r.code,
      r.status,
      r.kind,
      r.customer_id,
      dayOrNull(c, r.starts_on),
      dayOrNull(c, r.ends_on),
      r.offer_number,
      r.internal_notes,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  shifts: {
    table: 'wfa_shifts',
    columns: ['id', 'company_id', 'employee_id', 'project_id', 'status', 'starts_at', 'ends_at', 'break_minutes', 'internal_notes', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.employee_id,
      r.project_id,
      r.status,
      c.instant(r.starts_at),
      c.instant(r.ends_at),
      r.break_minutes,
      r.internal_notes,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  absences: {
    table: 'wfa_absences',
    columns: ['id', 'company_id', 'employee_id', 'date', 'type', 'hours', 'status', 'reason', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.employee_id,
      c.day(r.date),
      r.type,
      r.hours,
      r.status,
      r.reason,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  expenses: {
    table: 'wfa_expenses',
    columns: ['id', 'company_id', 'employee_id', 'project_id', 'category', 'description', 'date', 'amount_cents', 'currency', 'km', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.employee_id,
      r.project_id,
      r.category,
      r.description,
      c.day(r.date),
      r.amount_cents,
      r.currency,
      r.km,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  todoLists: {
    table: 'wfa_todo_lists',
    columns: ['id', 'company_id', 'name'],
    values: (_c, r) => [r.id, r.company_id, r.name],
  },
  todos: {
    table: 'wfa_todos',
    columns: [
      'id',
      'company_id',
      'title',
      'notes',
      'status',
      'priority',
      'important',
      'due_day',
      'due_at',
      'due_is_all_day',
      'list_id',
      'assigned_to',
      'assignee_group_id',
      'claimed_by',
      'checklist',
      'tag_ids',
      'source',
      ...STAMPS,
    ],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.title,
      r.notes,
      r.status,
      r.priority,
      c.bool(r.important),
      dayOrNull(c, r.due_day),
      r.due_at === null ? null : c.instant(r.due_at),
      c.bool(r.due_is_all_day),
      r.list_id,
      r.assigned_to,
      r.assignee_group_id,
      r.claimed_by,
      c.json(r.checklist),
      c.json(r.tag_ids),
      r.source === null ? null : c.json(r.source),
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  modules: {
    table: 'wfa_company_modules',
    columns: ['company_id', 'module', 'active'],
    values: (c, r) => [r.company_id, r.module, c.bool(r.active)],
  },
}

/** A dataset table's SQL table, its row type erased for code that walks every table (the bulk loaders too). */
export function fixtureTable(table: keyof Dataset): FixtureTable<unknown> {
  return FIXTURE_TABLES[table] as FixtureTable<unknown>
}

/**
 * Writes a whole dataset, with its ids, in one transaction: all of it or none of it.
 * The fixture-loading hook of the SQL adapters (seed, tests, conformance suite).
 */
export async function loadDataset(db: QueryDb, codec: SqlCodec, data: Dataset): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const name of Object.keys(FIXTURE_TABLES) as (keyof Dataset)[]) {
      const { table, columns, values } = fixtureTable(name)
      const rows: readonly unknown[] = data[name]
      const toRecord = (row: unknown) => {
        const bound = values(codec, row)
        return Object.fromEntries(columns.map((column, index) => [column, bound[index]]))
      }
      for (let start = 0; start < rows.length; start += BATCH_SIZE) {
        await trx.insertInto(table).values(rows.slice(start, start + BATCH_SIZE).map(toRecord)).execute()
      }
    }
  })
}
