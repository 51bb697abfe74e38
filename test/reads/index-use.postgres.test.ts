import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { postgresCodec } from '../../adapters/postgres/postgres-codec.js'
import { createPostgresRunner } from '../../adapters/postgres/postgres-database.js'
import type { PreparedQuery, SqlRunner } from '../../adapters/sql/prepared.js'
import { RESOURCE_TABLES } from '../../adapters/sql/tables/index.js'
import { SqlStorage } from '../../adapters/sql/sql-storage.js'
import type { Dataset } from '../../src/ports/dataset.js'
import { generateDataset } from '../../src/seed/generate.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'

/** Company 1 gets this many rows of every resource: enough that a Seq Scan is a real cost. */
const SCALE = 5_000

type Resource = 'users' | 'employees' | 'roles' | 'projects' | 'shifts' | 'absences' | 'expenses' | 'todos'

/** The table each resource is scoped to a tenant by. */
const TENANT_TABLE: Record<Resource, string> = {
  users: 'wfa_memberships',
  employees: 'wfa_employees',
  roles: 'wfa_roles',
  projects: 'wfa_projects',
  shifts: 'wfa_shifts',
  absences: 'wfa_absences',
  expenses: 'wfa_expenses',
  todos: 'wfa_todos',
}

const FILTER_NAMES = Object.fromEntries(RESOURCE_TABLES.map(({ name, query }) => [name, Object.keys(query.filters)])) as Record<Resource, string[]>

/** Filters declared `range` in the shared SQL: their pages are ordered by `id + 0`. */
const RANGE_FILTERS = new Set(
  RESOURCE_TABLES.flatMap(({ query }) =>
    Object.entries(query.filters as Record<string, { range?: true }>).filter(([, sql]) => sql.range === true).map(([name]) => name),
  ),
)

/** A realistic value for each filter of one company, taken from its own rows. */
function filterValues(data: Dataset, companyId: number): Record<Resource, Record<string, unknown>> {
  const own = <T extends { company_id: number }>(rows: T[]) => rows.filter((row) => row.company_id === companyId)
  const middle = <T>(rows: T[]): T => {
    const row = rows[Math.floor(rows.length / 2)]
    if (row === undefined) throw new Error(`company ${companyId} has no rows`)
    return row
  }
  // A sync asks for the most recent tenth of changes.
  const recent = (rows: Array<{ updated_at: Date }>) => {
    const sorted = rows.map((row) => row.updated_at.getTime()).sort((a, b) => a - b)
    return new Date(sorted[Math.floor(sorted.length * 0.9)] as number)
  }
  const member = middle(data.memberships.filter((m) => m.company_id === companyId))
  const person = data.people.find((p) => p.id === member.user_id)
  const project = middle(own(data.projects).filter((p) => p.customer_id !== null))
  const shift = middle(own(data.shifts).filter((s) => s.project_id !== null))
  const absence = middle(own(data.absences))
  const expense = middle(own(data.expenses).filter((x) => x.project_id !== null))
  const todo = middle(own(data.todos).filter((t) => t.assigned_to !== null))
  const week = (start: Date) => ({ from: start, before: new Date(start.getTime() + 7 * 86_400_000) })
  const shiftWeek = week(shift.starts_at)
  const dueWeek = week(todo.due_at ?? todo.created_at)
  const day = (date: Date) => date.toISOString().slice(0, 10)
  return {
    users: {
      active: true,
      email: person?.email.toLowerCase(),
      updatedSince: recent(data.memberships.filter((m) => m.company_id === companyId)),
    },
    employees: { updatedSince: recent(own(data.employees)) },
    roles: {},
    projects: { status: project.status, kind: project.kind, customerId: project.customer_id, updatedSince: recent(own(data.projects)) },
    shifts: {
      employeeId: shift.employee_id,
      projectId: shift.project_id,
      status: shift.status,
      startsFrom: shiftWeek.from,
      startsBefore: shiftWeek.before,
      updatedSince: recent(own(data.shifts)),
    },
    absences: { employeeId: absence.employee_id, status: absence.status, dateFrom: absence.date, dateTo: absence.date, updatedSince: recent(own(data.absences)) },
    expenses: {
      employeeId: expense.employee_id,
      projectId: expense.project_id,
      category: expense.category,
      dateFrom: expense.date,
      dateTo: expense.date,
      updatedSince: recent(own(data.expenses)),
    },
    todos: {
      status: todo.status,
      assignedTo: todo.assigned_to,
      listId: todo.list_id,
      important: true,
      dueFrom: { day: day(dueWeek.from), instant: dueWeek.from },
      dueTo: { day: day(dueWeek.before), instant: dueWeek.before },
      updatedSince: recent(own(data.todos)),
    },
  }
}

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  Plans?: PlanNode[]
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)]
}

const describeNode = (node: PlanNode) =>
  [node['Node Type'], node['Relation Name'] && `on ${node['Relation Name']}`, node['Index Name'] && `using ${node['Index Name']}`].filter(Boolean).join(' ')

describePostgres('index use of the compiled list queries', () => {
  const database = useTestDatabase()
  const data = generateDataset({ scale: SCALE })
  let adapter: PostgresAdapter
  let storage: SqlStorage
  const captured: Array<{ query: PreparedQuery; values: unknown[] }> = []

  beforeAll(async () => {
    adapter = await openPostgresAdapter({ connectionString: database.current.url })
    await adapter.loadDataset(data)
    // Statistics and visibility for the plans below, on a connection of its own without the
    // pool's statement_timeout (under a loaded CI machine a database-wide vacuum outlasts it).
    const client = await adapter.pool.connect()
    try {
      await client.query('set statement_timeout = 0')
      await client.query('vacuum analyze')
    } finally {
      await client.query('reset statement_timeout').catch(() => {})
      client.release()
    }
    const inner = createPostgresRunner(adapter.pool)
    const recording: SqlRunner = {
      all(query, values) {
        captured.push({ query, values })
        return inner.all(query, values)
      },
    }
    storage = new SqlStorage(adapter.db, recording, postgresCodec)
  })

  afterAll(async () => {
    await adapter?.close()
  })

  /** Runs `list` as the API would and returns the plans of the statements it executed. */
  async function plansOf(resource: Resource, companyId: number, filter: Record<string, unknown>) {
    captured.length = 0
    const { total } = await storage[resource].list(companyId, filter as never, { limit: 25, offset: 0 })
    const plans = []
    for (const { query, values } of captured) {
      // Same SQL and values, planned for the values as our pool plans them (force_custom_plan).
      const { rows } = await adapter.pool.query({ text: `explain (format json) ${query.sql}`, values })
      const plan = (rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]?.Plan as PlanNode
      plans.push({ kind: query.sql.startsWith('select count(') ? 'count' : 'page', sql: query.sql, nodes: nodes(plan) })
    }
    return { total, plans }
  }

  it('gives every filter of every resource a value, so none escapes the check', () => {
    const values = filterValues(data, 1)
    for (const [resource, names] of Object.entries(FILTER_NAMES) as Array<[Resource, string[]]>) {
      expect(Object.keys(values[resource]).sort(), resource).toEqual([...names].sort())
    }
  })

  it('never reads a whole table for page 1 of a list, for a large and a small tenant', async () => {
    const failures: string[] = []
    let rangedChecked = 0
    for (const companyId of [1, 2]) {
      const values = filterValues(data, companyId)
      for (const resource of Object.keys(FILTER_NAMES) as Resource[]) {
        const shapes: Array<[string, Record<string, unknown>]> = [['no filter', {}]]
        for (const name of FILTER_NAMES[resource]) shapes.push([name, { [name]: values[resource][name] }])
        if (resource === 'shifts') {
          const { status, startsFrom, startsBefore } = values.shifts
          shapes.push(['status + week', { status, startsFrom, startsBefore }])
        }
        if (resource === 'todos') shapes.push(['due week', { dueFrom: values.todos.dueFrom, dueTo: values.todos.dueTo }])
        const table = TENANT_TABLE[resource]
        const { rows } = await adapter.pool.query(`select count(*)::int as n from ${table}`)
        for (const [shape, filter] of shapes) {
          const { total, plans } = await plansOf(resource, companyId, filter)
          const page = plans.find((plan) => plan.kind === 'page')
          expect(page, `${resource} ${shape}`).toBeDefined()
          // With a time range the page is found through the range (ORDER BY id + 0), so it costs
          // what the COUNT costs: a range matching most of the table reads it, like the COUNT does.
          // A selective range, and every shape without a range, must never read a whole table.
          const ranged = Object.keys(filter).some((name) => RANGE_FILTERS.has(name))
          if (ranged && total >= rows[0].n / 10) continue
          if (ranged) rangedChecked++
          const seqScans =
            page?.nodes.filter((node) => node['Node Type'] === 'Seq Scan' && (!ranged || node['Relation Name'] === table)) ?? []
          if (seqScans.length > 0) failures.push(`company ${companyId} ${resource} [${shape}]: ${seqScans.map(describeNode).join(', ')}`)
        }
      }
    }
    expect(rangedChecked).toBeGreaterThan(10)
    expect(failures).toEqual([])
  })

  it('counts a selective filter (under a tenth of the table) through an index', async () => {
    const failures: string[] = []
    let checked = 0
    for (const companyId of [1, 2]) {
      const values = filterValues(data, companyId)
      for (const resource of Object.keys(FILTER_NAMES) as Resource[]) {
        const table = TENANT_TABLE[resource]
        const { rows } = await adapter.pool.query(`select count(*)::int as n from ${table}`)
        for (const name of [undefined, ...FILTER_NAMES[resource]]) {
          const filter = name === undefined ? {} : { [name]: values[resource][name] }
          const { total, plans } = await plansOf(resource, companyId, filter)
          if (total >= rows[0].n / 10) continue // most of the table: reading it all is the right plan
          checked++
          const count = plans.find((plan) => plan.kind === 'count')
          const seqScans = count?.nodes.filter((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === table) ?? []
          if (seqScans.length > 0) failures.push(`company ${companyId} ${resource} [${name ?? 'no filter'}] total ${total}`)
        }
      }
    }
    expect(checked).toBeGreaterThan(40)
    expect(failures).toEqual([])
  })
})
