/**
 * The suite's own fixture: the default seed dataset, made adversarial, plus a few hand-made rows
 * aimed at the traps adapters fall into. Every expected answer of the suite is computed from it.
 *
 * The seed is too regular for a fixture: its ids run 1..N and `created_at` grows with the id.
 * `adversarial()` keeps its rows but renumbers every table with gaps (and a jump past 1000, so
 * ids of one company cross digit counts) and shuffles each company's `created_at`/`updated_at`
 * pairs, so an adapter that orders by `created_at` instead of `id`, orders ids as text, or mints
 * ids as "count + 1" fails.
 *
 * The seed already has DST-day shifts and to-dos at 00:30 and 23:59:59 local, shared and
 * inactive users, mixed-case emails and an empty company 3. The edge rows add:
 * - instants with non-zero milliseconds (a column that drops them fails);
 * - rows exactly at a company day's first instant and last millisecond, around DST changes,
 *   and one in the repeated hour of a fall-back night;
 * - an amount and a reference above 2^32 (int8 columns, int8-as-string drivers);
 * - text with quotes, apostrophes, `_`, `+`, non-ASCII, a newline and an empty string;
 * - pending users (an invitation not yet accepted, no person linked): company 1 invites the email
 *   of an active person of company 2 alone, and company 2 one of company 1 alone, each in another
 *   letter case, with other names, and dates older than the person's last change, so an adapter
 *   that shows a person's data, login or dates to the inviting company (joining by email, say) fails;
 * - user ids of company 2's shared people that differ from their ids in company 1 (issue 21).
 */
import type { ChecklistStep, TodoRecord } from '../ports/records.js'
import type { Dataset } from '../ports/dataset.js'
import { generateDataset } from '../seed/generate.js'
import { mulberry32 } from '../seed/prng.js'

/** The largest page the port allows: every company's rows of a table must fit in one. */
export const MAX_LIMIT = 100

/** Ids of the hand-made rows that tests name explicitly. */
export interface EdgeIds {
  /** A company 1 user (its user id) with `_`, `+`, an apostrophe and mixed case in the email. */
  person: number
  /** Company 1's pending user naming the email of an active person of company 2 alone. */
  pendingInCompany1: number
  /** Company 2's pending user naming the email of an active person of company 1 alone. */
  pendingInCompany2: number
  /** A customer reference above 2^32 (company 1 project). */
  bigCustomerId: number
  /** An amount above 2^32 cents (company 1 expense). */
  bigAmountExpense: number
  /** A zero amount (company 2 expense). */
  zeroAmountExpense: number
  /** Company 1 to-do with non-ASCII text, an empty-string `notes`, checklist, tags and a source. */
  unicodeTodo: number
}

export interface ConformanceFixture {
  dataset: Dataset
  edges: EdgeIds
}

const BIG_REFERENCE = 4_294_967_297 // 2^32 + 1
const BIG_AMOUNT_CENTS = 12_345_678_901_234 // "123456789012.34", a safe integer

const at = (iso: string) => new Date(iso)
const stamps = (created: string, updated: string) => ({ created_at: at(created), updated_at: at(updated) })

/** Builds the fixture. Deterministic: two calls return deep-equal values. */
export function conformanceFixture(): ConformanceFixture {
  const ds = adversarial(generateDataset())
  const nextId = (rows: { id: number }[]) => Math.max(0, ...rows.map((row) => row.id)) + 1
  const first = <T extends { company_id: number }>(rows: T[], companyId: number): T => {
    const row = rows.find((candidate) => candidate.company_id === companyId)
    if (row === undefined) throw new Error(`conformance fixture: the seed has no row of company ${companyId}`)
    return row
  }

  // Users: a person with every character an email comparison can get wrong.
  const roleId = nextId(ds.roles)
  ds.roles.push({
    id: roleId,
    company_id: 1,
    name: 'Capo "squadra" / Ünïcode',
    permissions: ['shifts.read', 'todos.write'],
    ...stamps('2026-02-01T07:00:00.001Z', '2026-02-02T07:00:00.999Z'),
  })
  const person = nextId(ds.people)
  ds.people.push({
    id: person,
    email: 'Anna_Maria.O+Brien@Example.COM',
    first_name: 'Anna Maria',
    last_name: "O'Brien",
    active: true,
    password_hash: 'argon2id$edge$not-a-real-hash',
    ...stamps('2026-02-01T09:15:30.123Z', '2026-02-03T10:20:40.456Z'),
  })
  const firstRoleOfCompany1 = first(ds.roles, 1).id
  // User ids are the memberships' own (per company, issue 21), from one counter above every id.
  const nextUserId = () => Math.max(0, ...ds.memberships.map((m) => m.user_id)) + 1
  // The edge person's first membership keeps the person's id as its user id, as a migrated one does.
  const personUser = person
  if (ds.memberships.some((m) => m.user_id === personUser)) throw new Error(`conformance fixture: user id ${personUser} is taken`)
  ds.memberships.push({
    company_id: 1,
    user_id: personUser,
    person_id: person,
    role_ids: [firstRoleOfCompany1, roleId],
    invitation_status: 'accepted',
    invited: null,
    ...stamps('2026-02-01T09:15:30.123Z', '2026-02-04T11:00:00.789Z'),
  })

  // Pending memberships: each company sees only what it sent, never the person whose email it
  // names (no person is linked until the host accepts; an adapter that joins by email fails).
  const onlyIn = (companyId: number) =>
    [...ds.people].reverse().find(
      (candidate) =>
        candidate.active &&
        candidate.id !== person &&
        candidate.email !== candidate.email.toUpperCase() &&
        ds.memberships.filter((m) => m.person_id === candidate.id).map((m) => m.company_id).join() === String(companyId),
    )
  const invitee = onlyIn(2)
  const inviteeOf2 = onlyIn(1)
  if (invitee === undefined || inviteeOf2 === undefined) throw new Error('conformance fixture: the seed needs an active person of company 1 alone and one of company 2 alone')
  const pendingInCompany1 = nextUserId()
  ds.memberships.push({
    company_id: 1,
    user_id: pendingInCompany1,
    person_id: null,
    role_ids: [roleId],
    invitation_status: 'pending',
    invited: { email: invitee.email.toUpperCase(), first_name: 'Invitata Ünïcode', last_name: "Dall'Invito" },
    // Older than the person's last change: the inviting company must see the membership's dates.
    created_at: new Date(invitee.updated_at.getTime() - 2 * 86_400_000 + 321),
    updated_at: new Date(invitee.updated_at.getTime() - 86_400_000 + 654),
  })
  const pendingInCompany2 = nextUserId()
  ds.memberships.push({
    company_id: 2,
    user_id: pendingInCompany2,
    person_id: null,
    role_ids: [first(ds.roles, 2).id],
    invitation_status: 'pending',
    invited: { email: inviteeOf2.email.toLowerCase().replace(/^./, (c) => c.toUpperCase()), first_name: 'Ånother', last_name: 'Invitée' },
    created_at: new Date(inviteeOf2.updated_at.getTime() - 3 * 86_400_000 + 111),
    updated_at: new Date(inviteeOf2.updated_at.getTime() - 3 * 86_400_000 + 222),
  })

  const employee = nextId(ds.employees)
  ds.employees.push({
    id: employee,
    company_id: 1,
    user_id: personUser,
    employee_number: 'E-ÆDGE',
    job_title: "Capo d'opera",
    contract_type: 'fixed_term',
    weekly_hours: 37.5,
    hire_date: '2026-02-28',
    termination_date: '2026-12-31',
    supervisor_id: first(ds.employees, 1).id,
    salary_cents: 4_200_000,
    iban: 'IT60X0542811101000000EDGE',
    ...stamps('2026-02-05T08:00:00.010Z', '2026-02-06T08:00:00.020Z'),
  })

  const project = nextId(ds.projects)
  ds.projects.push({
    id: project,
    company_id: 1,
    name: "Cantiere 'Sant’Anna' — lotto 2",
    code: 'PRJ-EDGE',
    status: 'on_hold',
    kind: 'maintenance',
    customer_id: BIG_REFERENCE,
    starts_on: '2026-01-01',
    ends_on: '2026-12-31',
    offer_number: 'OFF-EDGE-SECRET',
    internal_notes: 'Edge project: confidential margin',
    ...stamps('2026-02-07T08:00:00.001Z', '2026-02-08T08:00:00.002Z'),
  })

  // Shifts on the first instant and the last millisecond of company days around DST changes.
  const employeeOfCompany2 = first(ds.employees, 2).id
  let shiftId = nextId(ds.shifts)
  const shift = (companyId: number, startsAt: string, employeeId: number, projectId: number | null, created: string) => {
    const starts = at(startsAt)
    ds.shifts.push({
      id: shiftId++,
      company_id: companyId,
      employee_id: employeeId,
      project_id: projectId,
      status: 'confirmed',
      starts_at: starts,
      ends_at: new Date(starts.getTime() + 8 * 3_600_000 + 1),
      break_minutes: 45,
      internal_notes: 'Edge shift: private note',
      ...stamps(created, created.replace(/\.(\d{3})Z$/, '.999Z')),
    })
  }
  shift(1, '2026-03-29T22:00:00.000Z', employee, project, '2026-03-01T10:00:00.101Z') // 2026-03-30 00:00 Rome (CEST)
  shift(1, '2026-10-25T22:59:59.999Z', employee, null, '2026-03-01T10:00:00.102Z') // 2026-10-25 23:59:59.999 Rome (CET)
  shift(1, '2026-10-25T23:00:00.000Z', employee, project, '2026-03-01T10:00:00.103Z') // 2026-10-26 00:00 Rome
  shift(1, '2026-10-25T01:30:00.000Z', employee, null, '2026-03-01T10:00:00.104Z') // 02:30 Rome, the repeated hour (CET)
  shift(2, '2026-03-09T04:00:00.000Z', employeeOfCompany2, null, '2026-03-01T10:00:00.105Z') // 2026-03-09 00:00 New York (EDT)
  shift(2, '2026-11-02T04:59:59.999Z', employeeOfCompany2, null, '2026-03-01T10:00:00.106Z') // 2026-11-01 23:59:59.999 New York (EST)
  shift(2, '2026-11-02T05:00:00.000Z', employeeOfCompany2, null, '2026-03-01T10:00:00.107Z') // 2026-11-02 00:00 New York
  shift(2, '2026-11-01T06:30:00.000Z', employeeOfCompany2, null, '2026-03-01T10:00:00.108Z') // 01:30 New York, the repeated hour (EST)

  let absenceId = nextId(ds.absences)
  ds.absences.push({
    id: absenceId++,
    company_id: 1,
    employee_id: employee,
    date: '2026-02-28',
    type: 'parental',
    hours: 7.25,
    status: 'approved',
    reason: 'Edge reason: private',
    ...stamps('2026-02-09T08:00:00.333Z', '2026-02-10T08:00:00.444Z'),
  })
  ds.absences.push({
    id: absenceId++,
    company_id: 2,
    employee_id: employeeOfCompany2,
    date: '2026-12-31',
    type: 'other',
    hours: 0.5,
    status: 'requested',
    reason: null,
    ...stamps('2026-02-09T08:00:00.555Z', '2026-02-09T08:00:00.555Z'),
  })

  const bigAmountExpense = nextId(ds.expenses)
  ds.expenses.push({
    id: bigAmountExpense,
    company_id: 1,
    employee_id: employee,
    project_id: project,
    category: 'equipment',
    description: 'Gru «Liebherr» – noleggio 🚧',
    date: '2026-12-31',
    amount_cents: BIG_AMOUNT_CENTS,
    currency: 'EUR',
    km: null,
    ...stamps('2026-02-11T08:00:00.001Z', '2026-02-12T08:00:00.002Z'),
  })
  const zeroAmountExpense = bigAmountExpense + 1
  ds.expenses.push({
    id: zeroAmountExpense,
    company_id: 2,
    employee_id: employeeOfCompany2,
    project_id: null,
    category: 'other',
    description: 'Zero-amount correction',
    date: '2026-01-01',
    amount_cents: 0,
    currency: 'USD',
    km: 0,
    ...stamps('2026-02-11T08:00:00.003Z', '2026-02-11T08:00:00.004Z'),
  })

  // To-dos: one full of traps, then deadlines on a day's first instant and last millisecond.
  const listOf = (companyId: number) => first(ds.todoLists, companyId).id
  const memberOf2 = first(ds.memberships, 2).user_id
  let stepId = Math.max(0, ...ds.todos.flatMap((todo) => todo.checklist.map((step) => step.id))) + 1
  const steps = (...titles: Array<[string, boolean]>): ChecklistStep[] =>
    titles.map(([title, done]) => ({ id: stepId++, title, done }))
  let todoId = nextId(ds.todos)
  const todo = (
    companyId: number,
    due: { day: string } | { at: string },
    created: string,
    fields: Partial<TodoRecord> & { title: string },
  ): number => {
    const id = todoId++
    ds.todos.push({
      id,
      company_id: companyId,
      notes: null,
      status: 'open',
      priority: 'high',
      important: false,
      due_day: 'day' in due ? due.day : null,
      due_at: 'at' in due ? at(due.at) : null,
      due_is_all_day: 'day' in due,
      list_id: listOf(companyId),
      assigned_to: companyId === 1 ? person : memberOf2,
      assignee_group_id: null,
      claimed_by: null,
      checklist: [],
      tag_ids: [],
      source: null,
      ...stamps(created, created.replace(/\.(\d{3})Z$/, '.998Z')),
      ...fields,
    })
    return id
  }
  const unicodeTodo = todo(1, { at: '2026-03-29T22:00:00.000Z' }, '2026-03-02T10:00:00.201Z', {
    title: 'Überprüfung ✓ «cantiere» 🚧',
    notes: '',
    status: 'in_progress',
    priority: 'urgent',
    important: true,
    claimed_by: person,
    checklist: steps(['Ça va — “ok”', true], ['Step "two"', false], ["l'ultimo", false]),
    tag_ids: [2, 9, 40],
    source: { type: 'activity', id: BIG_REFERENCE },
  })
  todo(1, { at: '2026-10-25T22:59:59.999Z' }, '2026-03-02T10:00:00.202Z', { title: 'Last millisecond', notes: 'line one\nline two' })
  todo(1, { day: '2026-10-26' }, '2026-03-02T10:00:00.203Z', { title: 'All day after fall-back' })
  todo(2, { at: '2026-11-02T04:59:59.999Z' }, '2026-03-02T10:00:00.204Z', { title: 'Last millisecond NY', important: true })
  todo(2, { at: '2026-03-09T04:00:00.000Z' }, '2026-03-02T10:00:00.205Z', { title: 'First instant NY' })

  checkFits(ds)
  return {
    dataset: ds,
    edges: { person: personUser, pendingInCompany1, pendingInCompany2, bigCustomerId: BIG_REFERENCE, bigAmountExpense, zeroAmountExpense, unicodeTodo },
  }
}

/** A new id for seed id `id`: strictly increasing (a supervisor stays an earlier employee), with gaps and a jump. */
function gapped(id: number): number {
  return 3 * id + (id % 3) + (id > 20 ? 1_000 : 0)
}


/** A Fisher–Yates shuffle of a copy of `values`. */
function shuffled<T>(values: readonly T[], random: () => number): T[] {
  const copy = [...values]
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j] as T, copy[i] as T]
  }
  return copy
}

type Stamped = { id: number; created_at: Date; updated_at: Date }

/** Whether `rows` (in id order) are also in `created_at` order, or in its reverse: then the shuffle did nothing useful. */
function createdOrderFollowsIds(rows: readonly Stamped[]): boolean {
  const byId = [...rows].sort((a, b) => a.id - b.id)
  const times = byId.map((row) => row.created_at.getTime())
  const ascending = times.every((time, index) => index === 0 || time >= (times[index - 1] as number))
  const descending = times.every((time, index) => index === 0 || time <= (times[index - 1] as number))
  return ascending || descending
}

/**
 * The seed, renumbered with gaps (every reference follows) and with each company's row dates
 * shuffled among its rows, as pairs, so `updated_at >= created_at` still holds. A person's
 * memberships move with the person's dates, so a membership never predates the person's last
 * change (the host example shows the later of the two).
 */
function adversarial(ds: Dataset): Dataset {
  const renumber = <T extends { id: number }>(rows: T[]): Map<number, number> => {
    const ids = new Map(rows.map((row) => [row.id, gapped(row.id)]))
    for (const row of rows) row.id = gapped(row.id)
    return ids
  }
  const people = renumber(ds.people)
  const roles = renumber(ds.roles)
  const employees = renumber(ds.employees)
  const projects = renumber(ds.projects)
  const lists = renumber(ds.todoLists)
  renumber(ds.shifts)
  renumber(ds.absences)
  renumber(ds.expenses)
  renumber(ds.todos)
  const to = (ids: Map<number, number>, id: number, what: string): number => {
    const mapped = ids.get(id)
    if (mapped === undefined) throw new Error(`conformance fixture: the seed refers to an unknown ${what} ${id}`)
    return mapped
  }
  const toNullable = (ids: Map<number, number>, id: number | null, what: string) => (id === null ? null : to(ids, id, what))
  const users = new Map(ds.memberships.map((m) => [m.user_id, gapped(m.user_id)]))
  for (const membership of ds.memberships) {
    membership.user_id = to(users, membership.user_id, 'user')
    membership.person_id = toNullable(people, membership.person_id, 'person')
    membership.role_ids = membership.role_ids.map((id) => to(roles, id, 'role'))
  }
  for (const employee of ds.employees) {
    employee.user_id = toNullable(users, employee.user_id, 'user')
    employee.supervisor_id = toNullable(employees, employee.supervisor_id, 'employee')
  }
  // Shifts and expenses alike belong to an employee and maybe to a project.
  for (const row of [...ds.shifts, ...ds.expenses]) {
    row.employee_id = to(employees, row.employee_id, 'employee')
    row.project_id = toNullable(projects, row.project_id, 'project')
  }
  for (const absence of ds.absences) absence.employee_id = to(employees, absence.employee_id, 'employee')
  for (const todo of ds.todos) {
    todo.list_id = to(lists, todo.list_id, 'to-do list')
    todo.assigned_to = toNullable(users, todo.assigned_to, 'user')
    todo.claimed_by = toNullable(users, todo.claimed_by, 'user')
    todo.assignee_group_id = toNullable(roles, todo.assignee_group_id, 'role')
  }

  const random = mulberry32(0x5eed_0011)
  const shuffleStamps = (rows: Stamped[], what: string): Map<number, { created: number; updated: number }> => {
    const moved = new Map<number, { created: number; updated: number }>()
    const stamps = shuffled(
      rows.map((row) => ({ created_at: row.created_at, updated_at: row.updated_at })),
      random,
    )
    rows.forEach((row, index) => {
      const stamp = stamps[index] as { created_at: Date; updated_at: Date }
      moved.set(row.id, { created: stamp.created_at.getTime() - row.created_at.getTime(), updated: stamp.updated_at.getTime() - row.updated_at.getTime() })
      row.created_at = stamp.created_at
      row.updated_at = stamp.updated_at
    })
    if (rows.length > 2 && createdOrderFollowsIds(rows)) throw new Error(`conformance fixture: shuffling ${what} left created_at in id order`)
    return moved
  }
  const companyIds = ds.companies.map((company) => company.id)
  for (const table of ['roles', 'employees', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const) {
    const rows: Array<Stamped & { company_id: number }> = ds[table]
    for (const companyId of companyIds) shuffleStamps(rows.filter((row) => row.company_id === companyId), `${table} of company ${companyId}`)
  }
  const personMoved = shuffleStamps(ds.people, 'people')
  for (const membership of ds.memberships) {
    const moved = personMoved.get(membership.person_id ?? 0)
    if (moved === undefined) throw new Error(`conformance fixture: membership of unknown person ${membership.person_id}`)
    membership.created_at = new Date(membership.created_at.getTime() + moved.created)
    membership.updated_at = new Date(membership.updated_at.getTime() + moved.updated)
  }
  return ds
}

/** The suite lists "everything" with one page: keep every company's table under `MAX_LIMIT`. */
function checkFits(ds: Dataset): void {
  const tables = ['memberships', 'roles', 'employees', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const
  for (const table of tables) {
    const counts = new Map<number, number>()
    for (const row of ds[table]) counts.set(row.company_id, (counts.get(row.company_id) ?? 0) + 1)
    for (const [companyId, count] of counts) {
      if (count >= MAX_LIMIT) throw new Error(`conformance fixture: ${table} of company ${companyId} has ${count} rows, over one page`)
    }
  }
}

/**
 * The copy handed to a subject's `loadDataset`: deep, so the subject may keep or change it, and
 * with the tables no row of the same table refers to in descending id order, so an adapter
 * that returns rows in insertion order instead of id order is caught.
 */
export function loadableCopy(dataset: Dataset): Dataset {
  const copy = structuredClone(dataset)
  for (const table of ['people', 'memberships', 'roles', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const) {
    copy[table].reverse()
  }
  return copy
}
