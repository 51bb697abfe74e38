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
 * - `streamDataset` yields the same rows in small chunks, made as they are asked for, so a
 *   database can be seeded at any scale in bounded memory; `generateDataset` collects them.
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
import type {
  AbsenceRow,
  Dataset,
  DatasetChunk,
  EmployeeRow,
  ExpenseRow,
  MembershipRow,
  ModuleRow,
  PersonRow,
  ProjectRow,
  ShiftRow,
  TodoListRow,
} from '../ports/dataset.js'
import { DATASET_TABLES, emptyDataset } from '../ports/dataset.js'
import { mulberry32 } from './prng.js'

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

/** `created_at` of row `id` of a table: one minute per id after the base instant. */
function createdAt(id: number): Date {
  return new Date(BASE_MS + id * MINUTE_MS)
}

/** `updated_at` of row `id` of a table: every third row changed some days after it was created. */
function updatedAt(id: number): Date {
  const created = BASE_MS + id * MINUTE_MS
  return new Date(id % 3 === 0 ? created + ((id % 10) + 1) * DAY_MS + (id % 7) * HOUR_MS : created)
}

/**
 * Consecutive calendar days from `first`. UTC midnights are exactly a day apart (no DST), so
 * plain millisecond arithmetic gives the same days as Temporal, without its start-up cost in
 * every thread that seeds.
 */
function dayRange(first: Day, count: number): Day[] {
  const start = Date.parse(`${first}T00:00:00Z`)
  const days: Day[] = []
  for (let i = 0; i < count; i++) days.push(new Date(start + i * DAY_MS).toISOString().slice(0, 10))
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
  daysSince2012Cache ??= dayRange('2012-01-01', (Date.UTC(2027, 0, 1) - Date.UTC(2012, 0, 1)) / DAY_MS)
  return daysSince2012Cache
}

/** Time zone → day → wall-clock time → epoch ms. Nested rather than one joined key: building that key for every shift and to-do cost more than the lookup. */
const instantCache = new Map<string, Map<Day, Map<string, number>>>()

/** The instant of wall-clock `time` (`HH:MM[:SS]`) on `day` in `timeZone`, DST-aware. */
function localInstant(day: Day, time: string, timeZone: string): Date {
  let days = instantCache.get(timeZone)
  if (days === undefined) instantCache.set(timeZone, (days = new Map()))
  let times = days.get(day)
  if (times === undefined) days.set(day, (times = new Map()))
  let ms = times.get(time)
  if (ms === undefined) {
    ms = Temporal.PlainDateTime.from(`${day}T${time}`).toZonedDateTime(timeZone, { disambiguation: 'compatible' }).epochMilliseconds
    times.set(time, ms)
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
// Plan: where each company's rows start, known before any row is made

/**
 * A company with data, and where its rows sit in each table. Every list table (roles … to-dos)
 * holds `count` rows per company, company 1's first, so one `firstId` serves them all.
 */
interface CompanyPlan {
  id: number
  timezone: string
  flavour: Flavour
  /** Records of every list resource. */
  count: number
  /** The company's first id in every list table. */
  firstId: number
  /** People of an earlier company who are members here too; they come first among the members. */
  sharedPeople: readonly number[]
  /**
   * The user ids of `sharedPeople` in this company: user ids are per company (a person's id in
   * an earlier company never links them here), fresh ids after every person's.
   */
  sharedMemberIds: readonly number[]
  /** The people this company adds: `newPeople` ids from `firstPersonId`. */
  firstPersonId: number
  newPeople: number
  firstListId: number
}

function planCompanies(options: SeedOptions): readonly CompanyPlan[] {
  const scale = options.scale ?? DEFAULT_SCALE
  if (!Number.isSafeInteger(scale) || scale < MIN_SCALE) {
    throw new RangeError(`seed scale must be an integer >= ${MIN_SCALE}, got ${String(scale)}`)
  }
  const [c1, c2] = SEED_COMPANIES
  if (c1 === undefined || c2 === undefined) throw new Error('seed: companies missing')
  const first: CompanyPlan = {
    id: c1.id,
    timezone: c1.timezone,
    flavour: FLAVOURS[1],
    count: scale,
    firstId: 1,
    sharedPeople: [],
    sharedMemberIds: [],
    firstPersonId: 1,
    newPeople: scale,
    firstListId: 1,
  }
  const sharedPeople = SHARED_LOCAL_INDEXES.map((local) => first.firstPersonId + local - 1)
  const second: CompanyPlan = {
    id: c2.id,
    timezone: c2.timezone,
    flavour: FLAVOURS[2],
    count: COMPANY_2_COUNT,
    firstId: first.firstId + first.count,
    sharedPeople,
    // After company 2's own people, the last people of the seed.
    sharedMemberIds: sharedPeople.map((_, k) => first.firstPersonId + first.newPeople + COMPANY_2_COUNT - sharedPeople.length + k),
    firstPersonId: first.firstPersonId + first.newPeople,
    newPeople: COMPANY_2_COUNT - sharedPeople.length,
    firstListId: first.firstListId + first.flavour.todoLists.length,
  }
  return [first, second]
}

/** The company's `n`th row of a list table, cycling: `ids[n mod count]`. */
function listId(company: CompanyPlan, n: number): number {
  return company.firstId + (((n % company.count) + company.count) % company.count)
}

/** The company's `n`th member (shared people first), cycling. */
function memberId(company: CompanyPlan, n: number): number {
  const members = company.sharedPeople.length + company.newPeople
  const k = ((n % members) + members) % members
  return k < company.sharedPeople.length ? at(company.sharedMemberIds, k) : company.firstPersonId + k - company.sharedPeople.length
}

// ---------------------------------------------------------------------------------------------
// Rows, one generator per table

function* companyRows(): Generator<CompanyRecord> {
  for (const company of SEED_COMPANIES) {
    const created = BASE_MS - 90 * DAY_MS + company.id * MINUTE_MS
    yield {
      id: company.id,
      name: company.name,
      timezone: company.timezone,
      country: company.country,
      created_at: new Date(created),
      updated_at: new Date(created + company.id * DAY_MS),
    }
  }
}

function* moduleRows(): Generator<ModuleRow> {
  for (const company of SEED_COMPANIES) {
    for (const module of PLATFORM_MODULES) yield { company_id: company.id, module, active: company.id !== 3 || module === 'core' }
  }
}

function* personRows(plan: readonly CompanyPlan[]): Generator<PersonRow> {
  for (const company of plan) {
    const rng = rngFor(company.id, 'people')
    const flavour = company.flavour
    for (let local = 1; local <= company.newPeople; local++) {
      const id = company.firstPersonId + local - 1
      const first = rng.pick(flavour.firstNames)
      const last = rng.pick(flavour.lastNames)
      const mixed = flavour.mixedCaseEmails.includes(local)
      const domain = mixed ? flavour.emailDomain.replace(/^./, (c) => c.toUpperCase()) : flavour.emailDomain
      const localPart = mixed ? `${first}.${last}${id}` : `${first}.${last}${id}`.toLowerCase()
      yield {
        id,
        email: `${localPart}@${domain}`,
        first_name: first,
        last_name: last,
        active: local % 7 !== 0,
        password_hash: PASSWORD_HASH,
        created_at: createdAt(id),
        updated_at: updatedAt(id),
      }
    }
  }
}

/**
 * The company's own people's memberships, then shared people's under their fresh user ids (in
 * id order, as a company adds users), each with 0–2 of its roles. The user id of an own person's
 * membership is the person's id; the person behind every membership is `person_id`.
 */
function* membershipRows(plan: readonly CompanyPlan[]): Generator<MembershipRow> {
  for (const company of plan) {
    let position = 0
    const roleIds = () => {
      const howMany = position % 3
      const ids = new Set<number>()
      for (let k = 0; k < howMany; k++) ids.add(listId(company, position * 2 + k * 5))
      position++
      return [...ids].sort((a, b) => a - b)
    }
    // Roles are drawn in the old order (shared people first) so every other row stays as it was.
    const sharedRoles = company.sharedPeople.map(() => roleIds())
    for (let local = 1; local <= company.newPeople; local++) {
      const id = company.firstPersonId + local - 1
      const updated = updatedAt(id).getTime() + (id % 5 === 0 ? 2 * DAY_MS : 0)
      yield acceptedMembership(company.id, id, id, roleIds(), createdAt(id), updated)
    }
    for (const [k, personId] of company.sharedPeople.entries()) {
      // Added after the company's own people; it changed later (role changes in this company).
      const created = new Date(createdAt(at(company.sharedMemberIds, k)).getTime())
      const updated = Math.max(updatedAt(personId).getTime(), created.getTime() + 20 * DAY_MS)
      yield acceptedMembership(company.id, at(company.sharedMemberIds, k), personId, at(sharedRoles, k), created, updated)
    }
  }
}

/** What every list table's row has besides its own fields. */
interface ListTableRow {
  id: number
  company_id: number
  created_at: Date
  updated_at: Date
}
type OwnFields<Row extends ListTableRow> = Omit<Row, keyof ListTableRow>

/**
 * A list table's rows: `count` per company, ids from the company's `firstId`, dated by id.
 * `fieldsFor(company)` runs once per company as its rows begin (so it can hold the company's
 * random stream); the function it returns gives the own fields of the company's `local`th row.
 */
function* listTableRows<Row extends ListTableRow>(
  plan: readonly CompanyPlan[],
  fieldsFor: (company: CompanyPlan) => (local: number, id: number) => OwnFields<Row>,
): Generator<ListTableRow & OwnFields<Row>> {
  for (const company of plan) {
    const fields = fieldsFor(company)
    for (let local = 1; local <= company.count; local++) {
      const id = company.firstId + local - 1
      yield { id, company_id: company.id, ...fields(local, id), created_at: createdAt(id), updated_at: updatedAt(id) }
    }
  }
}

function* roleRows(plan: readonly CompanyPlan[]): Generator<RoleRecord & { company_id: number }> {
  yield* listTableRows<RoleRecord & { company_id: number }>(plan, (company) => (local) => ({
    name: `${at(company.flavour.roleTitles, local - 1)} ${local}`,
    permissions: [...at(PERMISSION_SETS, local - 1)],
  }))
}

function* employeeRows(plan: readonly CompanyPlan[]): Generator<EmployeeRow> {
  const longDays = daysSince2012()
  const offset2026 = longDays.indexOf('2026-01-01')
  yield* listTableRows<EmployeeRow>(plan, (company) => {
    const rng = rngFor(company.id, 'employees')
    const flavour = company.flavour
    return (local, id) => {
      const contract = at(CONTRACT_TYPES, local - 1)
      const hireIndex = (local * 97) % (offset2026 - 400)
      const terminated = local % 9 === 0
      return {
        user_id: local % 10 === 0 ? null : memberId(company, local - 1),
        employee_number: `E-${pad4(local)}`,
        job_title: local % 8 === 0 ? null : at(flavour.jobTitles, local - 1),
        contract_type: contract,
        weekly_hours: contract === 'part_time' ? 20 : at(WEEKLY_HOURS, local - 1),
        hire_date: at(longDays, hireIndex),
        termination_date: terminated ? at(longDays, hireIndex + 180 + (local % 365)) : null,
        supervisor_id: local === 1 ? null : company.firstId + Math.max(0, Math.floor(local / 4) - 1),
        salary_cents: rng.int(1_800_000, 6_500_000),
        iban: `${flavour.ibanPrefix}${String(id).padStart(12, '0')}`,
      }
    }
  })
}

function* projectRows(plan: readonly CompanyPlan[]): Generator<ProjectRow> {
  const longDays = daysSince2012()
  const offset2026 = longDays.indexOf('2026-01-01')
  yield* listTableRows<ProjectRow>(plan, (company) => (local) => {
    const kind = at(PROJECT_KINDS, local - 1)
    const noDates = local % 6 === 0
    const startIndex = offset2026 - 200 + ((local * 11) % 500)
    return {
      name: `${at(company.flavour.projectNames, local - 1)} ${local}`,
      code: `PRJ-${pad4(local)}`,
      status: at(PROJECT_STATUSES, local - 1),
      kind,
      customer_id: kind === 'internal' ? null : 500 + (local % 37),
      starts_on: noDates ? null : at(longDays, startIndex),
      ends_on: noDates || local % 4 === 0 ? null : at(longDays, Math.min(longDays.length - 1, startIndex + 30 + (local % 200))),
      offer_number: kind === 'customer' ? `OFF-2026-${pad4(local)}` : null,
      internal_notes: local % 3 === 0 ? `Margin review ${local}: keep confidential` : null,
    }
  })
}

function* shiftRows(plan: readonly CompanyPlan[]): Generator<ShiftRow> {
  const days = days2026()
  yield* listTableRows<ShiftRow>(plan, (company) => (local) => {
    const special = company.flavour.specialShifts[local - 1]
    const day = special?.day ?? at(days, local * 13 + company.id * 5)
    const time = special?.time ?? at(SHIFT_TIMES, local - 1)
    const startsAt = localInstant(day, time, company.timezone)
    return {
      employee_id: listId(company, local * 7),
      project_id: local % 4 === 0 ? null : listId(company, local * 3),
      status: at(SHIFT_STATUSES, local - 1),
      starts_at: startsAt,
      ends_at: new Date(startsAt.getTime() + 8 * HOUR_MS),
      break_minutes: at(BREAK_MINUTES, local - 1),
      internal_notes: local % 5 === 0 ? `Private note on shift ${local}` : null,
    }
  })
}

function* absenceRows(plan: readonly CompanyPlan[]): Generator<AbsenceRow> {
  const days = days2026()
  yield* listTableRows<AbsenceRow>(plan, (company) => (local) => ({
    employee_id: listId(company, local * 3 + 1),
    date: at(days, local * 17 + company.id),
    type: at(ABSENCE_TYPES, local - 1),
    hours: at(ABSENCE_HOURS, local - 1),
    status: at(ABSENCE_STATUSES, local - 1),
    reason: local % 2 === 0 ? `Private reason ${local}` : null,
  }))
}

function* expenseRows(plan: readonly CompanyPlan[]): Generator<ExpenseRow> {
  const days = days2026()
  yield* listTableRows<ExpenseRow>(plan, (company) => {
    const rng = rngFor(company.id, 'expenses')
    return (local) => {
      const category = at(EXPENSE_CATEGORIES, local - 1)
      const random = rng.int(1, 250_000)
      return {
        employee_id: listId(company, local * 5 + 2),
        project_id: local % 3 === 0 ? null : listId(company, local),
        category,
        description: `${at(company.flavour.expenseDescriptions, local - 1)} #${local}`,
        date: at(days, local * 19 + company.id * 3),
        amount_cents: SPECIAL_AMOUNTS[local - 1] ?? random,
        currency: company.flavour.currency,
        km: category === 'travel' ? (local % 2 === 0 ? 12.5 + (local % 300) : 40 + (local % 500)) : null,
      }
    }
  })
}

function* todoListRows(plan: readonly CompanyPlan[]): Generator<TodoListRow> {
  for (const company of plan) {
    for (const [index, name] of company.flavour.todoLists.entries()) yield { id: company.firstListId + index, company_id: company.id, name }
  }
}

function* todoRows(plan: readonly CompanyPlan[]): Generator<TodoRecord & { company_id: number }> {
  const days = days2026()
  // Checklist step ids are unique across the whole dataset: one sequence for every company.
  let stepId = 1
  yield* listTableRows<TodoRecord & { company_id: number }>(plan, (company) => {
    const flavour = company.flavour
    const listIds = flavour.todoLists.map((_, index) => company.firstListId + index)
    return (local) => {
      const due: Due = flavour.specialDues[local - 1] ?? cycleDue(local, days)
      const assignment = local % 3
      const assignedTo = assignment === 2 ? null : memberId(company, local * 5)
      const groupId = assignment === 1 ? null : listId(company, local * 2)
      const checklist: ChecklistStep[] = []
      if (local % 3 !== 0) {
        const steps = (local % 4) + 1
        for (let s = 0; s < steps; s++) {
          checklist.push({ id: stepId++, title: `Step ${s + 1}`, done: (local + s) % 2 === 0 })
        }
      }
      const source: TodoSource | null = local % 4 === 1 ? { type: 'project', id: listId(company, local) } : null
      return {
        title: `${at(flavour.todoTitles, local - 1)} ${local}`,
        notes: local % 2 === 0 ? null : `Notes for to-do ${local}`,
        status: at(TODO_STATUSES, local - 1),
        priority: at(TODO_PRIORITIES, local - 1),
        important: local % 2 === 1,
        due_day: due.kind === 'all_day' ? due.day : null,
        due_at: due.kind === 'timed' ? localInstant(due.day, due.time, company.timezone) : null,
        due_is_all_day: due.kind === 'all_day',
        list_id: at(listIds, local - 1),
        assigned_to: assignedTo,
        assignee_group_id: groupId,
        claimed_by: local % 4 === 0 ? memberId(company, local * 3 + 1) : null,
        checklist,
        tag_ids: [...at(TAG_SETS, local - 1)],
        source,
      }
    }
  })
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

/** An accepted member (its invitation accepted long ago): the seed's every membership. */
function acceptedMembership(companyId: number, userId: number, personId: number, roleIds: number[], created: Date, updatedAtMs: number): MembershipRow {
  return {
    company_id: companyId,
    user_id: userId,
    person_id: personId,
    role_ids: roleIds,
    invitation_status: 'accepted',
    invited: null,
    created_at: new Date(created.getTime()),
    updated_at: new Date(updatedAtMs),
  }
}

// ---------------------------------------------------------------------------------------------
// Generator

type TableRows = { [T in keyof Dataset]: (plan: readonly CompanyPlan[]) => Iterable<Dataset[T][number]> }

/** Each table's rows, made and streamed in `DATASET_TABLES` order (src/ports/dataset.ts). */
const TABLE_ROWS: TableRows = {
  companies: companyRows,
  people: personRows,
  memberships: membershipRows,
  roles: roleRows,
  employees: employeeRows,
  projects: projectRows,
  shifts: shiftRows,
  absences: absenceRows,
  expenses: expenseRows,
  todoLists: todoListRows,
  todos: todoRows,
  modules: moduleRows,
}

function rowsOf(table: keyof Dataset, plan: readonly CompanyPlan[]): Iterable<unknown> {
  return TABLE_ROWS[table](plan)
}

export interface StreamOptions extends SeedOptions {
  /** Rows per chunk, at most. Default 100. */
  chunkRows?: number
  /**
   * Only these tables, still in `DATASET_TABLES` order (default: all). Each table's rows are
   * the same whichever others are made, so loaders on several threads can each make their own.
   */
  tables?: readonly (keyof Dataset)[]
}

/**
 * Small on purpose: a chunk consumed at once dies in V8's young generation. Chunks of thousands
 * of rows outlive a scavenge or two and get promoted; generating `scale` 1,000,000 then took
 * 9 s instead of 5 s, the difference spent collecting garbage.
 */
const DEFAULT_CHUNK_ROWS = 100

/**
 * Builds the seed dataset. Company 1 gets `scale` records of every list resource, company 2
 * exactly 45, company 3 ("Empty Co") only itself and its modules.
 */
export function generateDataset(options: SeedOptions = {}): Dataset {
  const plan = planCompanies(options)
  const dataset = emptyDataset()
  for (const table of DATASET_TABLES) (dataset[table] as unknown[]) = Array.from(rowsOf(table, plan))
  return dataset
}

/**
 * The rows of `generateDataset(options)`, made as they are asked for, in chunks of at most
 * `chunkRows`: table by table in `DATASET_TABLES` order, each table's rows in the same order as
 * its array. Memory stays at one chunk whatever the scale (a million-row seed streams into a
 * database instead of being built first).
 *
 * @example
 * for (const { table, rows } of streamDataset({ scale: 1_000_000 })) await insert(table, rows)
 */
export function* streamDataset(options: StreamOptions = {}): Generator<DatasetChunk> {
  const plan = planCompanies(options)
  const chunkRows = options.chunkRows ?? DEFAULT_CHUNK_ROWS
  if (!Number.isSafeInteger(chunkRows) || chunkRows < 1) throw new RangeError(`chunkRows must be a positive integer, got ${String(chunkRows)}`)
  const only = options.tables === undefined ? undefined : new Set(options.tables)
  for (const table of DATASET_TABLES) {
    if (only !== undefined && !only.has(table)) continue
    let rows: unknown[] = []
    for (const row of rowsOf(table, plan)) {
      rows.push(row)
      if (rows.length === chunkRows) {
        yield { table, rows } as DatasetChunk
        rows = []
      }
    }
    if (rows.length > 0) yield { table, rows } as DatasetChunk
  }
}

/** How many rows `generateDataset(options)` holds, all tables together, without making them. */
export function seedRowCount(options: SeedOptions = {}): number {
  const plan = planCompanies(options)
  const perCompany = plan.reduce(
    (sum, company) =>
      sum +
      company.newPeople + // people
      company.sharedPeople.length + company.newPeople + // memberships
      7 * company.count + // roles, employees, projects, shifts, absences, expenses, to-dos
      company.flavour.todoLists.length,
    0,
  )
  return perCompany + SEED_COMPANIES.length * (1 + PLATFORM_MODULES.length)
}
