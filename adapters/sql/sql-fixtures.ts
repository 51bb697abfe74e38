import type { Dataset } from '../../src/ports/dataset.js'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'

/** Rows per INSERT: keeps every statement well under SQLite's and Postgres' bind-parameter limits. */
const BATCH_SIZE = 500

/**
 * Writes a whole dataset, with its ids, in one transaction: all of it or none of it.
 * The fixture-loading hook of the SQL adapters (seed, tests, conformance suite).
 */
export async function loadDataset(db: QueryDb, codec: SqlCodec, data: Dataset): Promise<void> {
  const c = codec
  const instant = (value: Date | null) => (value === null ? null : c.instant(value))
  const day = (value: string | null) => (value === null ? null : c.day(value))
  const stamps = (row: { created_at: Date; updated_at: Date }) => ({
    created_at: c.instant(row.created_at),
    updated_at: c.instant(row.updated_at),
  })

  await db.transaction().execute(async (trx) => {
    const insert = async <T>(table: string, rows: T[], toRow: (row: T) => Record<string, unknown>) => {
      for (let start = 0; start < rows.length; start += BATCH_SIZE) {
        await trx.insertInto(table).values(rows.slice(start, start + BATCH_SIZE).map(toRow)).execute()
      }
    }
    await insert('wfa_companies', data.companies, (r) => ({ id: r.id, name: r.name, timezone: r.timezone, country: r.country, ...stamps(r) }))
    await insert('wfa_users', data.people, (r) => ({
      id: r.id,
      email: r.email,
      email_lower: r.email.toLowerCase(),
      first_name: r.first_name,
      last_name: r.last_name,
      active: c.bool(r.active),
      password_hash: r.password_hash,
      ...stamps(r),
    }))
    await insert('wfa_memberships', data.memberships, (r) => ({
      company_id: r.company_id,
      user_id: r.user_id,
      role_ids: c.json(r.role_ids),
      invitation_status: r.invitation_status,
      invited_email: r.invited?.email ?? null,
      invited_email_lower: r.invited?.email.toLowerCase() ?? null,
      invited_first_name: r.invited?.first_name ?? null,
      invited_last_name: r.invited?.last_name ?? null,
      ...stamps(r),
    }))
    await insert('wfa_roles', data.roles, (r) => ({
      id: r.id,
      company_id: r.company_id,
      name: r.name,
      permissions: c.json(r.permissions),
      ...stamps(r),
    }))
    await insert('wfa_employees', data.employees, (r) => ({
      id: r.id,
      company_id: r.company_id,
      user_id: r.user_id,
      employee_number: r.employee_number,
      job_title: r.job_title,
      contract_type: r.contract_type,
      weekly_hours: r.weekly_hours,
      hire_date: c.day(r.hire_date),
      termination_date: day(r.termination_date),
      supervisor_id: r.supervisor_id,
      salary_cents: r.salary_cents,
      iban: r.iban,
      ...stamps(r),
    }))
    await insert('wfa_projects', data.projects, (r) => ({
      id: r.id,
      company_id: r.company_id,
      name: r.name,
      code: r.code,
      status: r.status,
      kind: r.kind,
      customer_id: r.customer_id,
      starts_on: day(r.starts_on),
      ends_on: day(r.ends_on),
      offer_number: r.offer_number,
      internal_notes: r.internal_notes,
      ...stamps(r),
    }))
    await insert('wfa_shifts', data.shifts, (r) => ({
      id: r.id,
      company_id: r.company_id,
      employee_id: r.employee_id,
      project_id: r.project_id,
      status: r.status,
      starts_at: c.instant(r.starts_at),
      ends_at: c.instant(r.ends_at),
      break_minutes: r.break_minutes,
      internal_notes: r.internal_notes,
      ...stamps(r),
    }))
    await insert('wfa_absences', data.absences, (r) => ({
      id: r.id,
      company_id: r.company_id,
      employee_id: r.employee_id,
      date: c.day(r.date),
      type: r.type,
      hours: r.hours,
      status: r.status,
      reason: r.reason,
      ...stamps(r),
    }))
    await insert('wfa_expenses', data.expenses, (r) => ({
      id: r.id,
      company_id: r.company_id,
      employee_id: r.employee_id,
      project_id: r.project_id,
      category: r.category,
      description: r.description,
      date: c.day(r.date),
      amount_cents: r.amount_cents,
      currency: r.currency,
      km: r.km,
      ...stamps(r),
    }))
    await insert('wfa_todo_lists', data.todoLists, (r) => ({ id: r.id, company_id: r.company_id, name: r.name }))
    await insert('wfa_todos', data.todos, (r) => ({
      id: r.id,
      company_id: r.company_id,
      title: r.title,
      notes: r.notes,
      status: r.status,
      priority: r.priority,
      important: c.bool(r.important),
      due_day: day(r.due_day),
      due_at: instant(r.due_at),
      due_is_all_day: c.bool(r.due_is_all_day),
      list_id: r.list_id,
      assigned_to: r.assigned_to,
      assignee_group_id: r.assignee_group_id,
      claimed_by: r.claimed_by,
      checklist: c.json(r.checklist),
      tag_ids: c.json(r.tag_ids),
      source: r.source === null ? null : c.json(r.source),
      ...stamps(r),
    }))
    await insert('wfa_company_modules', data.modules, (r) => ({ company_id: r.company_id, module: r.module, active: c.bool(r.active) }))
  })
}
