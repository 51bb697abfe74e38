import type { Kysely } from 'kysely'
import type { Dataset } from '../../src/ports/dataset.js' // 'fastify-workforce-api' in a host
import type { Flag, HostDatabase } from './database.js'
import { FEATURE_OF } from './host-module-registry.js'

const BATCH_SIZE = 200
const iso = (date: Date) => date.toISOString()
const flag = (value: boolean): Flag => (value ? 1 : 0)
const LEAVE_STATE_OF = { requested: 'pending', approved: 'granted', rejected: 'declined', cancelled: 'withdrawn' } as const
/** The teams each organisation with staff gets; the `Dataset` has none, so the host invents them. */
const TEAM_NAMES = ['Site crew North', 'Site crew South', 'Logistics', 'Night shift', 'Maintenance', 'Planning office'] as const
const HOUR_MS = 60 * 60 * 1000
const DAY_MS = 24 * HOUR_MS

/**
 * Writes the library's `Dataset` into the host's schema, ids unchanged, in one transaction.
 * The conformance suite calls it (as `loadDataset`) with its fixture before every test; the
 * demo server uses it to seed. Tables go in foreign-key order; rows in whatever order they come.
 */
export async function importDataset(db: Kysely<HostDatabase>, data: Dataset): Promise<void> {
  await db.transaction().execute(async (trx) => {
    async function insert<T, Table extends keyof HostDatabase>(table: Table, rows: T[], toRow: (row: T) => HostDatabase[Table]) {
      for (let start = 0; start < rows.length; start += BATCH_SIZE) {
        // Kysely cannot type-check the row of a generic table; `toRow` is typed per table above.
        await trx.insertInto(table).values(rows.slice(start, start + BATCH_SIZE).map(toRow) as never).execute()
      }
    }

    await insert('organisations', data.companies, (c) => ({
      org_id: c.id,
      legal_name: c.name,
      tz_name: c.timezone,
      country_code: c.country,
      created_at: iso(c.created_at),
      updated_at: iso(c.updated_at),
    }))
    await insert('accounts', data.people, (p) => ({
      account_id: p.id,
      email_address: p.email,
      given_name: p.first_name,
      family_name: p.last_name,
      login_enabled: flag(p.active),
      pw_digest: p.password_hash,
      created_at: iso(p.created_at),
      updated_at: iso(p.updated_at),
    }))
    await insert('company_memberships', data.memberships, (m) => ({
      org_id: m.company_id,
      member_id: m.user_id,
      account_id: m.person_id,
      joined_at: iso(m.created_at),
      changed_at: iso(m.updated_at),
    }))
    await insert(
      'membership_invites',
      data.memberships.flatMap((m) =>
        m.invitation_status === 'pending' && m.invited !== null
          ? [{ org_id: m.company_id, member_id: m.user_id, sent_to_email: m.invited.email, given_name: m.invited.first_name, family_name: m.invited.last_name }]
          : [],
      ),
      (row) => row,
    )
    await insert('job_roles', data.roles, (r) => ({
      job_role_id: r.id,
      org_id: r.company_id,
      title: r.name,
      permissions_json: JSON.stringify(r.permissions),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }))
    await insert(
      'membership_roles',
      data.memberships.flatMap((m) => m.role_ids.map((roleId) => ({ org_id: m.company_id, member_id: m.user_id, job_role_id: roleId }))),
      (row) => row,
    )
    await insert('staff_members', data.employees, (e) => ({
      staff_member_id: e.id,
      org_id: e.company_id,
      account_id: e.user_id,
      payroll_code: e.employee_number,
      position_title: e.job_title,
      contract_kind: e.contract_type,
      hours_per_week: e.weekly_hours,
      hired_on: e.hire_date,
      left_on: e.termination_date,
      reports_to: e.supervisor_id,
      gross_salary_cents: e.salary_cents,
      bank_iban: e.iban,
      created_at: iso(e.created_at),
      updated_at: iso(e.updated_at),
    }))
    await insert('client_projects', data.projects, (p) => ({
      client_project_id: p.id,
      org_id: p.company_id,
      title: p.name,
      project_code: p.code,
      state: p.status,
      project_type: p.kind,
      client_ref: p.customer_id,
      start_day: p.starts_on,
      end_day: p.ends_on,
      offer_no: p.offer_number,
      private_notes: p.internal_notes,
      created_at: iso(p.created_at),
      updated_at: iso(p.updated_at),
    }))
    await insert('work_shifts', data.shifts, (s) => ({
      shift_id: s.id,
      org_id: s.company_id,
      staff_member_id: s.employee_id,
      client_project_id: s.project_id,
      shift_state: s.status,
      begins_at: iso(s.starts_at),
      finishes_at: iso(s.ends_at),
      break_mins: s.break_minutes,
      supervisor_notes: s.internal_notes,
      created_at: iso(s.created_at),
      updated_at: iso(s.updated_at),
    }))
    await insert('leave_requests', data.absences, (a) => ({
      leave_request_id: a.id,
      org_id: a.company_id,
      staff_member_id: a.employee_id,
      leave_day: a.date,
      leave_kind: a.type,
      hours_taken: a.hours,
      approval_state: LEAVE_STATE_OF[a.status],
      reason_text: a.reason,
      created_at: iso(a.created_at),
      updated_at: iso(a.updated_at),
    }))
    await insert('costs', data.expenses, (x) => ({
      cost_id: x.id,
      org_id: x.company_id,
      staff_member_id: x.employee_id,
      client_project_id: x.project_id,
      cost_category: x.category,
      label: x.description,
      incurred_on: x.date,
      amount_in_cents: x.amount_cents,
      currency_code: x.currency,
      km_driven: x.km,
      created_at: iso(x.created_at),
      updated_at: iso(x.updated_at),
    }))
    await insert('task_lists', data.todoLists, (l) => ({ task_list_id: l.id, org_id: l.company_id, list_name: l.name }))
    await insert('tasks', data.todos, (t) => ({
      task_id: t.id,
      org_id: t.company_id,
      task_list_id: t.list_id,
      headline: t.title,
      body: t.notes,
      task_state: t.status,
      urgency: t.priority,
      flagged: flag(t.important),
      all_day: flag(t.due_is_all_day),
      due_on: t.due_day,
      due_at: t.due_at === null ? null : iso(t.due_at),
      assignee_account_id: t.assigned_to,
      offered_to_role_id: t.assignee_group_id,
      claimed_by_account_id: t.claimed_by,
      origin_kind: t.source?.type ?? null,
      origin_ref: t.source?.id ?? null,
      created_at: iso(t.created_at),
      updated_at: iso(t.updated_at),
    }))
    await insert(
      'task_checklist_items',
      data.todos.flatMap((t) => t.checklist.map((step, position) => ({ item_id: step.id, task_id: t.id, position, label: step.title, is_done: flag(step.done) }))),
      (row) => row,
    )
    await insert(
      'task_tags',
      data.todos.flatMap((t) => t.tag_ids.map((tagId, position) => ({ task_id: t.id, position, tag_id: tagId }))),
      (row) => row,
    )
    await insert('org_features', data.modules, (m) => ({ org_id: m.company_id, feature: FEATURE_OF[m.module as keyof typeof FEATURE_OF], enabled: flag(m.active) }))
    const teams = teamsOf(data)
    await insert('teams', teams, (row) => row)
    // Every organisation with teams bought the feature; the others have no row, so `teams` is off.
    await insert('org_features', [...new Set(teams.map((team) => team.org_id))], (org) => ({ org_id: org, feature: FEATURE_OF.teams, enabled: 1 }))
  })
}

/**
 * The host's teams for `data`, the same every time: `TEAM_NAMES` for each company with
 * employees, ids taken in turns across companies (so one company's ids are not contiguous), led
 * by its first employee, its second, or nobody in turn; changed a day later per team.
 */
function teamsOf(data: Dataset): HostDatabase['teams'][] {
  const staffOf = new Map<number, number[]>()
  for (const employee of [...data.employees].sort((a, b) => a.id - b.id)) {
    staffOf.set(employee.company_id, [...(staffOf.get(employee.company_id) ?? []), employee.id])
  }
  const companies = data.companies.filter((company) => staffOf.has(company.id)).sort((a, b) => a.id - b.id)
  let id = 0
  return TEAM_NAMES.flatMap((name, index) =>
    companies.map((company) => {
      const staff = staffOf.get(company.id) as number[]
      const created = company.created_at.getTime() + (index + 1) * HOUR_MS
      id += 1
      return {
        id,
        org_id: company.id,
        name,
        lead_employee_id: index % 3 === 2 ? null : (staff[(index % 3) % staff.length] as number),
        created_at: iso(new Date(created)),
        updated_at: iso(new Date(created + index * DAY_MS)),
      }
    }),
  )
}
