/**
 * Deterministic seed data: the same options always produce a deep-equal `Dataset`.
 *
 * - No `Math.random`, no `Date.now`: every value derives from a fixed base instant and
 *   small seeded PRNGs (mulberry32), one stream per (company, table), so company 2's
 *   values do not depend on company 1's `scale`; only its ids shift.
 * - Ids are global per table, start at 1 and grow monotonically; company 1's rows come
 *   first, so every company 2 id exceeds every company 1 id of the same table.
 * - `created_at` is `BASE + id minutes` within a table; every third row is updated later.
 * - Local wall-clock times (shifts, timed to-dos) become instants through Temporal, in the
 *   company's time zone, DST included. Conversions are cached, so the work stays linear.
 */
import { Temporal } from '@js-temporal/polyfill'
import {
  ABSENCE_STATUSES,
  ABSENCE_TYPES,
  CONTRACT_TYPES,
  EXPENSE_CATEGORIES,
  PROJECT_KINDS,
  PROJECT_STATUSES,
  SHIFT_STATUSES,
  TODO_PRIORITIES,
  TODO_STATUSES,
  type ChecklistStep,
  type CompanyRecord,
  type Day,
  type RoleRecord,
  type TodoRecord,
  type TodoSource,
} from '../ports/records.js'
import { PLATFORM_MODULES } from '../ports/module-registry.js'
import { nextDay } from '../time/calendar.js'
import type {
  AbsenceRow,
  Dataset,
  EmployeeRow,
  ExpenseRow,
  MembershipRow,
  ModuleRow,
  PersonRow,
  ProjectRow,
  ShiftRow,
  TodoListRow,
} from '../ports/dataset.js'
import { emptyDataset } from '../ports/dataset.js'

export interface SeedOptions {
  /** Records of every list resource for company 1. An integer >= 40; default 40. */
  scale?: number
}

export interface SeedResult {
  dataset: Dataset
}

export const SEED_COMPANIES: readonly { id: number; name: string; timezone: string; country: string }[] = [
  { id: 1, name: 'Rossi Costruzioni S.r.l.', timezone: 'Europe/Rome', country: 'IT' },
  { id: 2, name: 'Hudson Staffing Inc.', timezone: 'America/New_York', country: 'US' },
  { id: 3, name: 'Empty Co', timezone: 'Asia/Tokyo', country: 'JP' },
]

const DEFAULT_SCALE = 40
const MIN_SCALE = 40
/** Company 2 always gets exactly this many records of every list resource. */
const COMPANY_2_COUNT = 45

const BASE_MS = Date.UTC(2026, 0, 5, 8, 0, 0, 0) // 2026-01-05T08:00:00.000Z
const MINUTE_MS = 60_000
const HOUR_MS = 60 * MINUTE_MS
const DAY_MS = 24 * HOUR_MS

const PASSWORD_HASH = 'argon2id$v=19$m=65536,t=3,p=4$ZmFrZXNhbHQ$ZmFrZWhhc2hub3RyZWFs'

/** Local positions (1-based) of company 1 people who are also members of company 2. */
const SHARED_LOCAL_INDEXES = [2, 3, 7] as const

// ---------------------------------------------------------------------------------------------
// PRNG

function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** FNV-1a of a label: a stable seed per (company, table). */
function seedOf(label: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

interface Rng {
  next(): number
  int(minInclusive: number, maxInclusive: number): number
  pick<T>(values: readonly T[]): T
}

function rngFor(companyId: number, table: string): Rng {
  const next = mulberry32(seedOf(`${companyId}:${table}`))
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (values) => at(values, Math.floor(next() * values.length)),
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** `values[index % length]`, typed as present (noUncheckedIndexedAccess). */
function at<T>(values: readonly T[], index: number): T {
  const value = values[((index % values.length) + values.length) % values.length]
  if (value === undefined) throw new Error('seed: empty value list')
  return value
}

function pad4(n: number): string {
  return String(n).padStart(4, '0')
}

/** `created_at` / `updated_at` for row `id` of a table: every third row changed some days later. */
function stamps(id: number): { created_at: Date; updated_at: Date } {
  const created = BASE_MS + id * MINUTE_MS
  const updated = id % 3 === 0 ? created + ((id % 10) + 1) * DAY_MS + (id % 7) * HOUR_MS : created
  return { created_at: new Date(created), updated_at: new Date(updated) }
}

/** Consecutive calendar days from `first`, computed once with Temporal-backed `nextDay`. */
function dayRange(first: Day, count: number): Day[] {
  const days: Day[] = [first]
  let day = first
  for (let i = 1; i < count; i++) {
    day = nextDay(day)
    days.push(day)
  }
  return days
}

let days2026Cache: Day[] | undefined
/** Every day of 2026. */
function days2026(): Day[] {
  days2026Cache ??= dayRange('2026-01-01', 365)
  return days2026Cache
}

let daysSince2012Cache: Day[] | undefined
/** Every day from 2012-01-01 to 2026-12-31 (hire and termination dates, project windows). */
function daysSince2012(): Day[] {
  daysSince2012Cache ??= dayRange('2012-01-01', Temporal.PlainDate.from('2012-01-01').until('2027-01-01').days)
  return daysSince2012Cache
}

const instantCache = new Map<string, number>()

/** The instant of wall-clock `time` (`HH:MM[:SS]`) on `day` in `timeZone`, DST-aware. */
function localInstant(day: Day, time: string, timeZone: string): Date {
  const key = `${timeZone}|${day}T${time}`
  let ms = instantCache.get(key)
  if (ms === undefined) {
    ms = Temporal.PlainDateTime.from(`${day}T${time}`).toZonedDateTime(timeZone, { disambiguation: 'compatible' })
      .epochMilliseconds
    instantCache.set(key, ms)
  }
  return new Date(ms)
}

// ---------------------------------------------------------------------------------------------
// Per-company flavour

interface Flavour {
  firstNames: readonly string[]
  lastNames: readonly string[]
  emailDomain: string
  roleTitles: readonly string[]
  jobTitles: readonly string[]
  projectNames: readonly string[]
  todoLists: readonly string[]
  todoTitles: readonly string[]
  expenseDescriptions: readonly string[]
  currency: string
  ibanPrefix: string
  /** Local positions (1-based, among the company's own new people) with a mixed-case email. */
  mixedCaseEmails: readonly number[]
  /** Wall-clock shift starts that must exist: midnight edges, DST days, overlapping days. */
  specialShifts: readonly { day: Day; time: string }[]
  /** Due dates that must exist among the to-dos. */
  specialDues: readonly Due[]
}

type Due =
  | { kind: 'none' }
  | { kind: 'all_day'; day: Day }
  | { kind: 'timed'; day: Day; time: string }

const ROME_EDGES = {
  shiftDays00: ['2026-01-15', '2026-03-20', '2026-03-29', '2026-03-30', '2026-10-25'],
  shiftDays235959: ['2026-03-20', '2026-03-28', '2026-03-29', '2026-10-24', '2026-10-25'],
  todoDays: ['2026-03-20', '2026-03-28', '2026-03-29', '2026-10-25'],
}

const NEW_YORK_EDGES = {
  shiftDays00: ['2026-01-15', '2026-03-08', '2026-03-09', '2026-03-20', '2026-11-01'],
  shiftDays235959: ['2026-03-07', '2026-03-08', '2026-03-20', '2026-10-31', '2026-11-01'],
  todoDays: ['2026-03-07', '2026-03-08', '2026-03-20', '2026-11-01'],
}

function specialShifts(edges: { shiftDays00: Day[]; shiftDays235959: Day[] }): { day: Day; time: string }[] {
  return [
    ...edges.shiftDays00.map((day) => ({ day, time: '00:30:00' })),
    ...edges.shiftDays235959.map((day) => ({ day, time: '23:59:59' })),
  ]
}

function specialDues(days: Day[]): Due[] {
  return days.flatMap((day): Due[] => [
    { kind: 'timed', day, time: '00:30:00' },
    { kind: 'timed', day, time: '23:59:59' },
    { kind: 'all_day', day },
  ])
}

const FLAVOURS: Record<1 | 2, Flavour> = {
  1: {
    firstNames: ['Giulia', 'Marco', 'Francesca', 'Luca', 'Chiara', 'Alessandro', 'Sara', 'Matteo', 'Elena', 'Davide', 'Martina', 'Lorenzo'],
    lastNames: ['Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi', 'Romano', 'Colombo', 'Ricci', 'Marino', 'Greco', 'Bruno', 'Gallo'],
    emailDomain: 'example.com',
    roleTitles: ['Site Manager', 'Foreman', 'Bricklayer', 'Electrician', 'Payroll Clerk', 'Safety Officer'],
    jobTitles: ['Capocantiere', 'Muratore', 'Elettricista', 'Geometra', 'Impiegata amministrativa', 'Gruista'],
    projectNames: ['Cantiere Via Roma', 'Ristrutturazione Scuola', 'Ponte sul Po', 'Condominio Aurora', 'Uffici Centro', 'Magazzino Nord'],
    todoLists: ['Site safety', 'Procurement', 'Office'],
    todoTitles: ['Check scaffolding', 'Order cement', 'Renew safety training', 'Inspect cranes', 'File DURC', 'Call the architect'],
    expenseDescriptions: ['Autostrada A1 toll', 'Lunch on site', 'Hotel Bologna', 'Safety boots', 'Drill bits', 'Parking'],
    currency: 'EUR',
    ibanPrefix: 'IT60X0542811101',
    mixedCaseEmails: [5, 12],
    specialShifts: specialShifts(ROME_EDGES),
    specialDues: specialDues(ROME_EDGES.todoDays),
  },
  2: {
    firstNames: ['James', 'Mary', 'Robert', 'Patricia', 'Michael', 'Jennifer', 'William', 'Linda', 'David', 'Susan', 'Daniel', 'Karen'],
    lastNames: ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Miller', 'Davis', 'Wilson', 'Taylor', 'Clark', 'Lewis', 'Walker'],
    emailDomain: 'hudson.example.org',
    roleTitles: ['Recruiter', 'Account Manager', 'Dispatcher', 'Payroll Specialist', 'Team Lead'],
    jobTitles: ['Recruiter', 'Warehouse Associate', 'Forklift Operator', 'Account Executive', 'Dispatcher'],
    projectNames: ['Hudson Yards Staffing', 'Brooklyn Warehouse', 'Jersey City Event', 'Queens Logistics', 'Midtown Reception'],
    todoLists: ['Compliance', 'Onboarding', 'Payroll'],
    todoTitles: ['Verify I-9 forms', 'Schedule orientation', 'Approve timesheets', 'Renew client contract', 'Background checks'],
    expenseDescriptions: ['Subway card', 'Client lunch', 'Motel Newark', 'Safety vests', 'Printer toner', 'Mileage'],
    currency: 'USD',
    ibanPrefix: 'US00HUDS00000',
    mixedCaseEmails: [4, 11],
    specialShifts: specialShifts(NEW_YORK_EDGES),
    specialDues: specialDues(NEW_YORK_EDGES.todoDays),
  },
}

const PERMISSION_SETS: readonly string[][] = [
  ['shifts.read', 'shifts.write'],
  ['employees.read'],
  ['projects.read', 'projects.write', 'expenses.read'],
  ['absences.read', 'absences.approve'],
  ['todos.read', 'todos.write'],
  [],
  ['users.read', 'roles.read', 'employees.read', 'employees.write'],
]

const SHIFT_TIMES = ['06:00:00', '07:30:00', '08:00:00', '13:00:00', '14:00:00', '22:00:00'] as const
const WEEKLY_HOURS = [40, 38.5, 40, 36, 38.5] as const
const ABSENCE_HOURS = [8, 4, 3.5] as const
const BREAK_MINUTES = [0, 30, 60] as const
/** Amounts that must exist: 12.34, 0.05, 1000.00, 0.99, 0.01, 2500.50. */
const SPECIAL_AMOUNTS = [1234, 5, 100000, 99, 1, 250050] as const
const TAG_SETS: readonly number[][] = [[], [1], [1, 3], [2], [4, 5, 6]]
const TODO_TIMES = ['09:00:00', '12:00:00', '17:30:00', '00:30:00', '23:59:59'] as const

// ---------------------------------------------------------------------------------------------
// Generator

/**
 * Builds the seed dataset. Company 1 gets `scale` records of every list resource, company 2
 * exactly 45, company 3 ("Empty Co") only itself and its modules.
 */
export function generateDataset(options: SeedOptions = {}): Dataset {
  const scale = options.scale ?? DEFAULT_SCALE
  if (!Number.isSafeInteger(scale) || scale < MIN_SCALE) {
    throw new RangeError(`seed scale must be an integer >= ${MIN_SCALE}, got ${String(scale)}`)
  }

  const ds = emptyDataset()

  for (const company of SEED_COMPANIES) {
    const created = BASE_MS - 90 * DAY_MS + company.id * MINUTE_MS
    const record: CompanyRecord = {
      id: company.id,
      name: company.name,
      timezone: company.timezone,
      country: company.country,
      created_at: new Date(created),
      updated_at: new Date(created + company.id * DAY_MS),
    }
    ds.companies.push(record)
    for (const module of PLATFORM_MODULES) {
      const row: ModuleRow = { company_id: company.id, module, active: company.id !== 3 || module === 'core' }
      ds.modules.push(row)
    }
  }

  const c1 = SEED_COMPANIES[0]
  const c2 = SEED_COMPANIES[1]
  if (c1 === undefined || c2 === undefined) throw new Error('seed: companies missing')

  const c1People = generatePeople(ds, c1.id, scale, FLAVOURS[1], [])
  const shared = SHARED_LOCAL_INDEXES.map((local) => at(c1People, local - 1))
  const c2People = generatePeople(ds, c2.id, COMPANY_2_COUNT - shared.length, FLAVOURS[2], shared)

  generateCompany(ds, c1, scale, FLAVOURS[1], c1People)
  generateCompany(ds, c2, COMPANY_2_COUNT, FLAVOURS[2], [...shared, ...c2People])

  return ds
}

/**
 * Creates `count` new people for a company (ids continuing the global sequence) and memberships
 * for them, plus memberships for `shared` people who already exist. Role ids are filled in later,
 * once the company's roles exist. Returns the new people.
 */
function generatePeople(
  ds: Dataset,
  companyId: number,
  count: number,
  flavour: Flavour,
  shared: readonly PersonRow[],
): PersonRow[] {
  const rng = rngFor(companyId, 'people')
  const created: PersonRow[] = []
  for (const person of shared) {
    // The membership dates from the person; it changed later (role changes in this company).
    const membershipUpdated = Math.max(person.updated_at.getTime(), person.created_at.getTime() + 20 * DAY_MS)
    const membership = acceptedMembership(companyId, person.id, person.created_at, membershipUpdated)
    ds.memberships.push(membership)
  }
  let nextId = ds.people.length + 1
  for (let local = 1; local <= count; local++) {
    const id = nextId++
    const first = rng.pick(flavour.firstNames)
    const last = rng.pick(flavour.lastNames)
    const mixed = flavour.mixedCaseEmails.includes(local)
    const domain = mixed ? flavour.emailDomain.replace(/^./, (c) => c.toUpperCase()) : flavour.emailDomain
    const localPart = mixed ? `${first}.${last}${id}` : `${first}.${last}${id}`.toLowerCase()
    const person: PersonRow = {
      id,
      email: `${localPart}@${domain}`,
      first_name: first,
      last_name: last,
      active: local % 7 !== 0,
      password_hash: PASSWORD_HASH,
      ...stamps(id),
    }
    ds.people.push(person)
    created.push(person)
    const membershipUpdated = id % 5 === 0 ? person.updated_at.getTime() + 2 * DAY_MS : person.updated_at.getTime()
    const membership = acceptedMembership(companyId, id, person.created_at, membershipUpdated)
    ds.memberships.push(membership)
  }
  return created
}

function generateCompany(
  ds: Dataset,
  company: { id: number; timezone: string },
  count: number,
  flavour: Flavour,
  members: readonly PersonRow[],
): void {
  const companyId = company.id
  const tz = company.timezone
  const memberIds = members.map((p) => p.id)
  const days = days2026()
  const longDays = daysSince2012()
  const offset2026 = longDays.indexOf('2026-01-01')

  // Roles ------------------------------------------------------------------------------------
  const firstRoleId = ds.roles.length + 1
  for (let local = 1; local <= count; local++) {
    const id = ds.roles.length + 1
    const role: RoleRecord & { company_id: number } = {
      id,
      company_id: companyId,
      name: `${at(flavour.roleTitles, local - 1)} ${local}`,
      permissions: [...at(PERMISSION_SETS, local - 1)],
      ...stamps(id),
    }
    ds.roles.push(role)
  }
  const roleId = (n: number) => firstRoleId + (((n % count) + count) % count)

  // Memberships' role ids (0–2 roles of this company) ------------------------------------------
  let position = 0
  for (const membership of ds.memberships) {
    if (membership.company_id !== companyId) continue
    const howMany = position % 3
    const ids = new Set<number>()
    for (let k = 0; k < howMany; k++) ids.add(roleId(position * 2 + k * 5))
    membership.role_ids = [...ids].sort((a, b) => a - b)
    position++
  }

  // Employees ------------------------------------------------------------------------------------
  const rngEmployees = rngFor(companyId, 'employees')
  const firstEmployeeId = ds.employees.length + 1
  for (let local = 1; local <= count; local++) {
    const id = ds.employees.length + 1
    const contract = at(CONTRACT_TYPES, local - 1)
    const hireIndex = (local * 97) % (offset2026 - 400)
    const terminated = local % 9 === 0
    const employee: EmployeeRow = {
      id,
      company_id: companyId,
      user_id: local % 10 === 0 ? null : at(memberIds, local - 1),
      employee_number: `E-${pad4(local)}`,
      job_title: local % 8 === 0 ? null : at(flavour.jobTitles, local - 1),
      contract_type: contract,
      weekly_hours: contract === 'part_time' ? 20 : at(WEEKLY_HOURS, local - 1),
      hire_date: at(longDays, hireIndex),
      termination_date: terminated ? at(longDays, hireIndex + 180 + (local % 365)) : null,
      supervisor_id: local === 1 ? null : firstEmployeeId + Math.max(0, Math.floor(local / 4) - 1),
      salary_cents: rngEmployees.int(1_800_000, 6_500_000),
      iban: `${flavour.ibanPrefix}${String(id).padStart(12, '0')}`,
      ...stamps(id),
    }
    ds.employees.push(employee)
  }
  const employeeId = (n: number) => firstEmployeeId + (((n % count) + count) % count)

  // Projects ---------------------------------------------------------------------------------------
  const firstProjectId = ds.projects.length + 1
  for (let local = 1; local <= count; local++) {
    const id = ds.projects.length + 1
    const kind = at(PROJECT_KINDS, local - 1)
    const noDates = local % 6 === 0
    const startIndex = offset2026 - 200 + ((local * 11) % 500)
    const project: ProjectRow = {
      id,
      company_id: companyId,
      name: `${at(flavour.projectNames, local - 1)} ${local}`,
      code: `PRJ-${pad4(local)}`,
      status: at(PROJECT_STATUSES, local - 1),
      kind,
      customer_id: kind === 'internal' ? null : 500 + (local % 37),
      starts_on: noDates ? null : at(longDays, startIndex),
      ends_on: noDates || local % 4 === 0 ? null : at(longDays, Math.min(longDays.length - 1, startIndex + 30 + (local % 200))),
      offer_number: kind === 'customer' ? `OFF-2026-${pad4(local)}` : null,
      internal_notes: local % 3 === 0 ? `Margin review ${local}: keep confidential` : null,
      ...stamps(id),
    }
    ds.projects.push(project)
  }
  const projectId = (n: number) => firstProjectId + (((n % count) + count) % count)

  // Shifts -------------------------------------------------------------------------------------------
  for (let local = 1; local <= count; local++) {
    const id = ds.shifts.length + 1
    const special = flavour.specialShifts[local - 1]
    const day = special?.day ?? at(days, local * 13 + companyId * 5)
    const time = special?.time ?? at(SHIFT_TIMES, local - 1)
    const startsAt = localInstant(day, time, tz)
    const shift: ShiftRow = {
      id,
      company_id: companyId,
      employee_id: employeeId(local * 7),
      project_id: local % 4 === 0 ? null : projectId(local * 3),
      status: at(SHIFT_STATUSES, local - 1),
      starts_at: startsAt,
      ends_at: new Date(startsAt.getTime() + 8 * HOUR_MS),
      break_minutes: at(BREAK_MINUTES, local - 1),
      internal_notes: local % 5 === 0 ? `Private note on shift ${local}` : null,
      ...stamps(id),
    }
    ds.shifts.push(shift)
  }

  // Absences ---------------------------------------------------------------------------------------
  for (let local = 1; local <= count; local++) {
    const id = ds.absences.length + 1
    const absence: AbsenceRow = {
      id,
      company_id: companyId,
      employee_id: employeeId(local * 3 + 1),
      date: at(days, local * 17 + companyId),
      type: at(ABSENCE_TYPES, local - 1),
      hours: at(ABSENCE_HOURS, local - 1),
      status: at(ABSENCE_STATUSES, local - 1),
      reason: local % 2 === 0 ? `Private reason ${local}` : null,
      ...stamps(id),
    }
    ds.absences.push(absence)
  }

  // Expenses ---------------------------------------------------------------------------------------
  const rngExpenses = rngFor(companyId, 'expenses')
  for (let local = 1; local <= count; local++) {
    const id = ds.expenses.length + 1
    const category = at(EXPENSE_CATEGORIES, local - 1)
    const random = rngExpenses.int(1, 250_000)
    const expense: ExpenseRow = {
      id,
      company_id: companyId,
      employee_id: employeeId(local * 5 + 2),
      project_id: local % 3 === 0 ? null : projectId(local),
      category,
      description: `${at(flavour.expenseDescriptions, local - 1)} #${local}`,
      date: at(days, local * 19 + companyId * 3),
      amount_cents: SPECIAL_AMOUNTS[local - 1] ?? random,
      currency: flavour.currency,
      km: category === 'travel' ? (local % 2 === 0 ? 12.5 + (local % 300) : 40 + (local % 500)) : null,
      ...stamps(id),
    }
    ds.expenses.push(expense)
  }

  // To-do lists --------------------------------------------------------------------------------------
  const listIds: number[] = []
  for (const name of flavour.todoLists) {
    const id = ds.todoLists.length + 1
    const list: TodoListRow = { id, company_id: companyId, name }
    ds.todoLists.push(list)
    listIds.push(id)
  }

  // To-dos ------------------------------------------------------------------------------------------
  // Checklist step ids are unique across the whole dataset: continue after the last one.
  let stepId = lastStepId(ds) + 1
  for (let local = 1; local <= count; local++) {
    const id = ds.todos.length + 1
    const due: Due = flavour.specialDues[local - 1] ?? cycleDue(local, days)
    const assignment = local % 3
    const assignedTo = assignment === 2 ? null : at(memberIds, local * 5)
    const groupId = assignment === 1 ? null : roleId(local * 2)
    const checklist: ChecklistStep[] = []
    if (local % 3 !== 0) {
      const steps = (local % 4) + 1
      for (let s = 0; s < steps; s++) {
        checklist.push({ id: stepId++, title: `Step ${s + 1}`, done: (local + s) % 2 === 0 })
      }
    }
    const source: TodoSource | null = local % 4 === 1 ? { type: 'project', id: projectId(local) } : null
    const todo: TodoRecord & { company_id: number } = {
      id,
      company_id: companyId,
      title: `${at(flavour.todoTitles, local - 1)} ${local}`,
      notes: local % 2 === 0 ? null : `Notes for to-do ${local}`,
      status: at(TODO_STATUSES, local - 1),
      priority: at(TODO_PRIORITIES, local - 1),
      important: local % 2 === 1,
      due_day: due.kind === 'all_day' ? due.day : null,
      due_at: due.kind === 'timed' ? localInstant(due.day, due.time, tz) : null,
      due_is_all_day: due.kind === 'all_day',
      list_id: at(listIds, local - 1),
      assigned_to: assignedTo,
      assignee_group_id: groupId,
      claimed_by: local % 4 === 0 ? at(memberIds, local * 3 + 1) : null,
      checklist,
      tag_ids: [...at(TAG_SETS, local - 1)],
      source,
      ...stamps(id),
    }
    ds.todos.push(todo)
  }
}

/** The highest checklist step id so far (the last to-do with steps holds it). */
function lastStepId(ds: Dataset): number {
  for (let i = ds.todos.length - 1; i >= 0; i--) {
    const steps = ds.todos[i]?.checklist ?? []
    const last = steps[steps.length - 1]
    if (last !== undefined) return last.id
  }
  return 0
}

/** Due dates past the special ones: none, all-day, timed in turn. */
function cycleDue(local: number, days: readonly Day[]): Due {
  const day = at(days, local * 23 + 40)
  switch (local % 3) {
    case 0:
      return { kind: 'none' }
    case 1:
      return { kind: 'all_day', day }
    default:
      return { kind: 'timed', day, time: at(TODO_TIMES, local) }
  }
}

/** A member from the start (no invitation), with no roles yet: the seed's every membership. */
function acceptedMembership(companyId: number, userId: number, createdAt: Date, updatedAtMs: number): MembershipRow {
  return {
    company_id: companyId,
    user_id: userId,
    role_ids: [],
    invitation_status: 'accepted',
    invited: null,
    created_at: new Date(createdAt.getTime()),
    updated_at: new Date(updatedAtMs),
  }
}
