import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ABSENCE_STATUSES,
  EXPENSE_CATEGORIES,
  PROJECT_KINDS,
  PROJECT_STATUSES,
  SHIFT_STATUSES,
  TODO_STATUSES,
} from '../../src/ports/records.js'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { idsWhere, rowsOf, type Table } from '../helpers/expected-reads.js'
import { listIds } from '../helpers/list-http.js'

interface Case {
  name: string
  resource: Table
  query: string
  expected: number[]
}

const distinct = <T>(values: T[]) => [...new Set(values)]
/** A few values of a column: first, middle and last distinct ones, to keep the suite small. */
const sample = <T>(values: T[]) => {
  const unique = distinct(values)
  return distinct([unique[0], unique[Math.floor(unique.length / 2)], unique[unique.length - 1]].filter((v): v is T => v !== undefined))
}

/** Every non-time filter case of one company, with its expected ids from the dataset. */
function casesFor(companyId: number): Case[] {
  const cases: Case[] = []
  const add = (resource: Table, query: string, expected: number[]) =>
    cases.push({ name: `${resource}?${query}`, resource, query, expected })

  // projects: status, kind, customer_id
  for (const status of PROJECT_STATUSES) add('projects', `status=${status}`, idsWhere('projects', companyId, (p) => p.status === status))
  for (const kind of PROJECT_KINDS) add('projects', `kind=${kind}`, idsWhere('projects', companyId, (p) => p.kind === kind))
  const customers = rowsOf('projects', companyId).map((p) => p.customer_id).filter((c): c is number => c !== null)
  for (const customer of sample(customers)) {
    add('projects', `customer_id=${customer}`, idsWhere('projects', companyId, (p) => p.customer_id === customer))
  }
  add('projects', 'customer_id=499', [])
  add('projects', 'status=active&kind=customer', idsWhere('projects', companyId, (p) => p.status === 'active' && p.kind === 'customer'))

  // shifts: employee_id, project_id, status
  for (const employee of sample(rowsOf('shifts', companyId).map((s) => s.employee_id))) {
    add('shifts', `employee_id=${employee}`, idsWhere('shifts', companyId, (s) => s.employee_id === employee))
  }
  for (const project of sample(rowsOf('shifts', companyId).map((s) => s.project_id).filter((p): p is number => p !== null))) {
    add('shifts', `project_id=${project}`, idsWhere('shifts', companyId, (s) => s.project_id === project))
  }
  for (const status of SHIFT_STATUSES) add('shifts', `status=${status}`, idsWhere('shifts', companyId, (s) => s.status === status))

  // absences: employee_id, status, date window on the stored day
  for (const employee of sample(rowsOf('absences', companyId).map((a) => a.employee_id))) {
    add('absences', `employee_id=${employee}`, idsWhere('absences', companyId, (a) => a.employee_id === employee))
  }
  for (const status of ABSENCE_STATUSES) add('absences', `status=${status}`, idsWhere('absences', companyId, (a) => a.status === status))

  // expenses: employee_id, project_id, category
  for (const employee of sample(rowsOf('expenses', companyId).map((e) => e.employee_id))) {
    add('expenses', `employee_id=${employee}`, idsWhere('expenses', companyId, (e) => e.employee_id === employee))
  }
  for (const project of sample(rowsOf('expenses', companyId).map((e) => e.project_id).filter((p): p is number => p !== null))) {
    add('expenses', `project_id=${project}`, idsWhere('expenses', companyId, (e) => e.project_id === project))
  }
  for (const category of EXPENSE_CATEGORIES) {
    add('expenses', `category=${category}`, idsWhere('expenses', companyId, (e) => e.category === category))
  }

  // todos: status, assigned_to, list_id, important
  for (const status of TODO_STATUSES) add('todos', `status=${status}`, idsWhere('todos', companyId, (t) => t.status === status))
  for (const member of sample(rowsOf('todos', companyId).map((t) => t.assigned_to).filter((m): m is number => m !== null))) {
    add('todos', `assigned_to=${member}`, idsWhere('todos', companyId, (t) => t.assigned_to === member))
  }
  for (const list of distinct(rowsOf('todos', companyId).map((t) => t.list_id))) {
    add('todos', `list_id=${list}`, idsWhere('todos', companyId, (t) => t.list_id === list))
  }
  add('todos', 'important=true', idsWhere('todos', companyId, (t) => t.important))
  add('todos', 'important=false', idsWhere('todos', companyId, (t) => !t.important))
  add('todos', 'important=true&status=open', idsWhere('todos', companyId, (t) => t.important && t.status === 'open'))
  return cases
}

/** Day windows on the stored `date` of absences and expenses: the day as entered, in every zone. */
function storedDayCases(companyId: number): Case[] {
  const cases: Case[] = []
  for (const resource of ['absences', 'expenses'] as const) {
    const rows = rowsOf(resource, companyId)
    const days = distinct(rows.map((row) => row.date)).sort()
    const first = days[0] as string
    const middle = days[Math.floor(days.length / 2)] as string
    const later = days[Math.floor((days.length * 3) / 4)] as string
    const between = (from?: string, to?: string) =>
      rows.filter((row) => (from === undefined || row.date >= from) && (to === undefined || row.date <= to)).map((row) => row.id)
    const push = (query: string, expected: number[]) => cases.push({ name: `${resource}?${query}`, resource, query, expected })
    push(`date_from=${middle}&date_to=${middle}`, between(middle, middle))
    push(`date_from=${middle}&date_to=${later}`, between(middle, later))
    push(`date_from=${middle}`, between(middle))
    push(`date_to=${middle}`, between(undefined, middle))
    push(`date_from=${first}&date_to=${first}`, between(first, first))
    push('date_from=2030-01-01', [])
    push('date_to=2025-12-31', [])
  }
  return cases
}

/** updated_since on every resource that has it: inclusive of a row updated exactly at the bound. */
function updatedSinceCases(companyId: number): Case[] {
  const cases: Case[] = []
  for (const resource of ['employees', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const) {
    const rows: { id: number; updated_at: Date }[] = rowsOf(resource, companyId)
    // A row updated later than it was created: the bound then equals no created_at by chance.
    const pivot = rows.filter((row, index) => index > rows.length / 3 && row.id % 3 === 0)[0]
    if (pivot === undefined) throw new Error(`no pivot in ${resource}`)
    for (const bound of [pivot.updated_at, new Date(pivot.updated_at.getTime() + 1)]) {
      const expected = rows.filter((row) => row.updated_at.getTime() >= bound.getTime()).map((row) => row.id)
      cases.push({ name: `${resource}?updated_since=${bound.toISOString()}`, resource, query: `updated_since=${bound.toISOString()}`, expected })
    }
  }
  return cases
}

describe.each(READ_ADAPTERS)('resource filters ($name)', (adapter) => {
  let t: TestApp
  const keys = new Map<number, string>()
  const keyOf = (companyId: number) => keys.get(companyId) as string

  beforeAll(async () => {
    t = await build({ adapter })
    for (const companyId of [1, 2]) keys.set(companyId, await t.keyFor(companyId, ['all']))
  })
  afterAll(() => t.close())

  describe.each([1, 2])('company %i', (companyId) => {
    it.each(casesFor(companyId))('$name', async ({ resource, query, expected }) => {
      expect(await listIds(t, keyOf(companyId), `/v1/${resource}`, query)).toEqual(expected)
    })

    it.each(storedDayCases(companyId))('$name (stored day)', async ({ resource, query, expected }) => {
      expect(await listIds(t, keyOf(companyId), `/v1/${resource}`, query)).toEqual(expected)
    })

    it.each(updatedSinceCases(companyId))('$name', async ({ resource, query, expected }) => {
      expect(await listIds(t, keyOf(companyId), `/v1/${resource}`, query)).toEqual(expected)
    })

    it('updated_since includes the row updated exactly at the bound and excludes it 1 ms later', async () => {
      for (const resource of ['employees', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const) {
        const row = rowsOf(resource, companyId).find((candidate) => candidate.updated_at > candidate.created_at)
        if (row === undefined) throw new Error(`no updated ${resource}`)
        const at = await listIds(t, keyOf(companyId), `/v1/${resource}`, `updated_since=${row.updated_at.toISOString()}`)
        expect(at, resource).toContain(row.id)
        const later = new Date(row.updated_at.getTime() + 1).toISOString()
        expect(await listIds(t, keyOf(companyId), `/v1/${resource}`, `updated_since=${later}`), resource).not.toContain(row.id)
      }
    })
  })

  it('the seed makes these filters meaningful: most cases select some rows but not all', () => {
    for (const companyId of [1, 2]) {
      const cases = [...casesFor(companyId), ...storedDayCases(companyId), ...updatedSinceCases(companyId)]
      const selective = cases.filter((c) => c.expected.length > 0 && c.expected.length < rowsOf(c.resource, companyId).length)
      expect(selective.length).toBeGreaterThan(cases.length * 0.7)
    }
  })
})
