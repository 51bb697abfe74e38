import { Temporal } from '@js-temporal/polyfill'
import { describe, expect, it } from 'vitest'
import type { Dataset } from '../../src/ports/dataset.js'
import { generateDataset, SEED_COMPANIES } from '../../src/seed/generate.js'
import { companyDayOf } from '../../src/time/calendar.js'

type ListTable = 'roles' | 'employees' | 'projects' | 'shifts' | 'absences' | 'expenses' | 'todos'
const LIST_TABLES: ListTable[] = ['roles', 'employees', 'projects', 'shifts', 'absences', 'expenses', 'todos']
const ID_TABLES = [...LIST_TABLES, 'people', 'todoLists', 'companies'] as const

function countFor(ds: Dataset, table: ListTable | 'memberships', companyId: number): number {
  return ds[table].filter((row) => row.company_id === companyId).length
}

function timezoneOf(companyId: number): string {
  const company = SEED_COMPANIES.find((c) => c.id === companyId)
  if (!company) throw new Error(`no company ${companyId}`)
  return company.timezone
}

/** `HH:MM:SS` wall-clock time of `instant` in `timeZone`. */
function localTime(instant: Date, timeZone: string): string {
  return Temporal.Instant.fromEpochMilliseconds(instant.getTime())
    .toZonedDateTimeISO(timeZone)
    .toPlainTime()
    .toString({ smallestUnit: 'second' })
}

const dataset = generateDataset()

describe('generateDataset', () => {
  it('is deterministic', () => {
    expect(generateDataset()).toEqual(generateDataset())
    expect(generateDataset({ scale: 77 })).toEqual(generateDataset({ scale: 77 }))
  })

  it('rejects a scale that is not an integer >= 40', () => {
    expect(() => generateDataset({ scale: 39 })).toThrow(RangeError)
    expect(() => generateDataset({ scale: 40.5 })).toThrow(RangeError)
    expect(() => generateDataset({ scale: Number.NaN })).toThrow(RangeError)
  })

  it('seeds the three companies and their modules', () => {
    expect(dataset.companies.map((c) => [c.id, c.name, c.timezone, c.country])).toEqual(
      SEED_COMPANIES.map((c) => [c.id, c.name, c.timezone, c.country]),
    )
    expect(dataset.modules).toHaveLength(9)
    for (const companyId of [1, 2]) {
      expect(dataset.modules.filter((m) => m.company_id === companyId).every((m) => m.active)).toBe(true)
    }
    expect(dataset.modules.filter((m) => m.company_id === 3).map((m) => [m.module, m.active])).toEqual([
      ['core', true],
      ['projects', false],
      ['todo', false],
    ])
  })

  it.each([
    [undefined, 40],
    [500, 500],
  ])('counts per company for scale %s', (scale, expected) => {
    const ds = scale === undefined ? dataset : generateDataset({ scale })
    for (const table of [...LIST_TABLES, 'memberships'] as const) {
      expect(countFor(ds, table, 1), `${table} company 1`).toBe(expected)
      expect(countFor(ds, table, 2), `${table} company 2`).toBe(45)
      expect(countFor(ds, table, 3), `${table} company 3`).toBe(0)
    }
    expect(ds.todoLists.filter((l) => l.company_id === 1)).toHaveLength(3)
    expect(ds.todoLists.filter((l) => l.company_id === 2)).toHaveLength(3)
    expect(ds.todoLists.filter((l) => l.company_id === 3)).toHaveLength(0)
  })

  it('numbers ids from 1, monotonic per table, company 2 after company 1', () => {
    for (const table of ID_TABLES) {
      const rows: { id: number; created_at?: Date }[] = dataset[table]
      rows.forEach((row, index) => expect(row.id, `${table}[${index}]`).toBe(index + 1))
      for (let i = 1; i < rows.length; i++) {
        const previous = rows[i - 1]?.created_at
        const current = rows[i]?.created_at
        if (previous && current) expect(current.getTime()).toBeGreaterThan(previous.getTime())
      }
    }
    for (const table of LIST_TABLES) {
      const rows = dataset[table]
      const maxOne = Math.max(...rows.filter((r) => r.company_id === 1).map((r) => r.id))
      const minTwo = Math.min(...rows.filter((r) => r.company_id === 2).map((r) => r.id))
      expect(minTwo, table).toBeGreaterThan(maxOne)
    }
  })

  it('keeps updated_at >= created_at, with some rows updated later', () => {
    for (const table of [...LIST_TABLES, 'people', 'memberships'] as const) {
      const rows: { created_at: Date; updated_at: Date }[] = dataset[table]
      expect(rows.every((r) => r.updated_at.getTime() >= r.created_at.getTime()), table).toBe(true)
      expect(rows.some((r) => r.updated_at.getTime() > r.created_at.getTime()), table).toBe(true)
    }
    const people = new Map(dataset.people.map((p) => [p.id, p]))
    for (const m of dataset.memberships) {
      expect(m.updated_at.getTime()).toBeGreaterThanOrEqual(people.get(m.person_id ?? 0)?.updated_at.getTime() ?? Infinity)
    }
  })

  it('makes every membership accepted, with no invited data (the seed has no pending invitation)', () => {
    const states = new Set(dataset.memberships.map((m) => `${m.invitation_status}:${m.invited === null ? 'no invited data' : 'invited data'}`))
    expect([...states]).toEqual(['accepted:no invited data'])
  })

  it('keeps references inside the company', () => {
    const members = new Set(dataset.memberships.map((m) => `${m.company_id}:${m.user_id}`))
    const owner = (rows: { id: number; company_id: number }[]) => new Map(rows.map((r) => [r.id, r.company_id]))
    const roleCompany = owner(dataset.roles)
    const employeeCompany = owner(dataset.employees)
    const projectCompany = owner(dataset.projects)
    const listCompany = owner(dataset.todoLists)

    for (const m of dataset.memberships) {
      for (const roleId of m.role_ids) expect(roleCompany.get(roleId)).toBe(m.company_id)
      expect(m.role_ids.length).toBeLessThanOrEqual(2)
    }
    for (const e of dataset.employees) {
      if (e.user_id !== null) expect(members.has(`${e.company_id}:${e.user_id}`)).toBe(true)
      if (e.supervisor_id !== null) {
        expect(employeeCompany.get(e.supervisor_id)).toBe(e.company_id)
        expect(e.supervisor_id).toBeLessThan(e.id)
      }
    }
    for (const companyId of [1, 2]) {
      const first = dataset.employees.find((e) => e.company_id === companyId)
      expect(first?.supervisor_id).toBeNull()
    }
    expect(dataset.employees.some((e) => e.user_id === null)).toBe(true)
    for (const row of [...dataset.shifts, ...dataset.expenses]) {
      expect(employeeCompany.get(row.employee_id)).toBe(row.company_id)
      if (row.project_id !== null) expect(projectCompany.get(row.project_id)).toBe(row.company_id)
    }
    for (const a of dataset.absences) expect(employeeCompany.get(a.employee_id)).toBe(a.company_id)
    for (const t of dataset.todos) {
      expect(listCompany.get(t.list_id)).toBe(t.company_id)
      expect(t.assigned_to !== null || t.assignee_group_id !== null).toBe(true)
      if (t.assigned_to !== null) expect(members.has(`${t.company_id}:${t.assigned_to}`)).toBe(true)
      if (t.claimed_by !== null) expect(members.has(`${t.company_id}:${t.claimed_by}`)).toBe(true)
      if (t.assignee_group_id !== null) expect(roleCompany.get(t.assignee_group_id)).toBe(t.company_id)
      if (t.source !== null) expect(projectCompany.get(t.source.id)).toBe(t.company_id)
    }
    const stepIds = dataset.todos.flatMap((t) => t.checklist.map((s) => s.id))
    expect(new Set(stepIds).size).toBe(stepIds.length)
  })

  it('has shifts starting at 00:30 and 23:59:59 local time in each company, DST days included', () => {
    const dstDays: Record<number, string[]> = { 1: ['2026-03-29', '2026-10-25'], 2: ['2026-03-08', '2026-11-01'] }
    for (const companyId of [1, 2]) {
      const tz = timezoneOf(companyId)
      const shifts = dataset.shifts.filter((s) => s.company_id === companyId)
      const at = (time: string) => shifts.filter((s) => localTime(s.starts_at, tz) === time)
      const halfPast = at('00:30:00')
      const lastSecond = at('23:59:59')
      expect(new Set(halfPast.map((s) => companyDayOf(s.starts_at, tz))).size).toBeGreaterThan(1)
      expect(new Set(lastSecond.map((s) => companyDayOf(s.starts_at, tz))).size).toBeGreaterThan(1)
      for (const day of dstDays[companyId] ?? []) {
        expect(halfPast.some((s) => companyDayOf(s.starts_at, tz) === day), `00:30 on ${day}`).toBe(true)
        expect(lastSecond.some((s) => companyDayOf(s.starts_at, tz) === day), `23:59:59 on ${day}`).toBe(true)
      }
      for (const s of shifts) expect(s.ends_at.getTime()).toBeGreaterThan(s.starts_at.getTime())
    }
    // 00:30 in Rome is the previous UTC day.
    const rome = dataset.shifts.find(
      (s) => s.company_id === 1 && localTime(s.starts_at, 'Europe/Rome') === '00:30:00' && companyDayOf(s.starts_at, 'Europe/Rome') === '2026-03-29',
    )
    expect(rome?.starts_at.toISOString()).toBe('2026-03-28T23:30:00.000Z')
  })

  it('has timed to-dos at 00:30 and 23:59:59 local and all-day to-dos on the same days', () => {
    for (const companyId of [1, 2]) {
      const tz = timezoneOf(companyId)
      const todos = dataset.todos.filter((t) => t.company_id === companyId)
      for (const t of todos) {
        if (t.due_is_all_day) expect(t.due_day !== null && t.due_at === null).toBe(true)
        else expect(t.due_day).toBeNull()
      }
      const timed = todos.filter((t) => t.due_at !== null)
      const timedOn = (time: string) =>
        new Set(timed.filter((t) => t.due_at && localTime(t.due_at, tz) === time).map((t) => t.due_at && companyDayOf(t.due_at, tz)))
      const allDay = new Set(todos.filter((t) => t.due_is_all_day).map((t) => t.due_day))
      expect(todos.some((t) => !t.due_is_all_day && t.due_at === null)).toBe(true)
      for (const day of ['2026-03-20', companyId === 1 ? '2026-03-29' : '2026-03-08']) {
        expect(timedOn('00:30:00').has(day), `00:30 on ${day}`).toBe(true)
        expect(timedOn('23:59:59').has(day), `23:59:59 on ${day}`).toBe(true)
        expect(allDay.has(day), `all-day on ${day}`).toBe(true)
      }
    }
  })

  it('has shared and inactive users, and unique, partly mixed-case emails', () => {
    const byCompany = (companyId: number) =>
      new Set(dataset.memberships.filter((m) => m.company_id === companyId).map((m) => m.person_id as number))
    const one = byCompany(1)
    const two = byCompany(2)
    expect([...one].filter((id) => two.has(id)).length).toBeGreaterThanOrEqual(3)
    const people = new Map(dataset.people.map((p) => [p.id, p]))
    for (const members of [one, two]) {
      expect([...members].filter((id) => people.get(id)?.active === false).length).toBeGreaterThanOrEqual(5)
    }
    const emails = dataset.people.map((p) => p.email.toLowerCase())
    // User ids are per company (issue 21): a shared person has a different id in each.
    const userIds = dataset.memberships.map((m) => m.user_id)
    expect(new Set(userIds).size).toBe(userIds.length)
    for (const m of dataset.memberships.filter((m) => m.company_id === 2 && one.has(m.person_id as number))) {
      expect(m.user_id).not.toBe(m.person_id)
      expect(m.user_id).toBeGreaterThan(Math.max(...dataset.people.map((p) => p.id)))
    }
    expect(new Set(emails).size).toBe(emails.length)
    expect(dataset.people.filter((p) => p.email !== p.email.toLowerCase()).length).toBeGreaterThanOrEqual(2)
  })

  it('has expenses with cents, in the company currency', () => {
    for (const [companyId, currency] of [
      [1, 'EUR'],
      [2, 'USD'],
    ] as const) {
      const expenses = dataset.expenses.filter((e) => e.company_id === companyId)
      expect(expenses.every((e) => e.currency === currency && Number.isSafeInteger(e.amount_cents))).toBe(true)
      expect(expenses.some((e) => e.amount_cents % 100 !== 0)).toBe(true)
      expect(expenses.some((e) => e.amount_cents < 100)).toBe(true)
    }
  })

  it('covers every enum value in company 1', () => {
    const values = <T>(rows: T[], pick: (row: T) => string) => new Set(rows.map(pick)).size
    expect(values(dataset.projects, (p) => p.status)).toBe(5)
    expect(values(dataset.projects, (p) => p.kind)).toBe(3)
    expect(values(dataset.shifts, (s) => s.status)).toBe(4)
    expect(values(dataset.todos, (t) => t.status)).toBe(5)
    expect(values(dataset.todos, (t) => t.priority)).toBe(4)
    expect(dataset.projects.some((p) => p.customer_id === null)).toBe(true)
    expect(dataset.projects.some((p) => p.customer_id !== null)).toBe(true)
  })

  // Linear work only: vitest's default 5 s test timeout is the time limit; asserting on
  // wall-clock time here would only make the test flaky on slow machines.
  it('handles scale 100000', () => {
    const big = generateDataset({ scale: 100_000 })
    for (const table of [...LIST_TABLES, 'memberships'] as const) {
      expect(countFor(big, table, 1), table).toBe(100_000)
      expect(countFor(big, table, 2), table).toBe(45)
    }
  })
})
