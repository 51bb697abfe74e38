import type { Dataset } from '../../src/ports/dataset.js'

/** One GET against the read API, as a company's integration would send it. */
export interface ReadRequest {
  companyId: number
  url: string
  /** The response must carry at least one row (list) or a record (get): guards against comparing empty with empty. */
  expectData: boolean
}

const PREFIX = '/api/public/v1'

/** DST changes and midnight edges the seed generator plants shifts and to-dos on (see src/seed/generate.ts). */
const SHIFT_EDGE_DAYS: Record<number, string[]> = {
  1: ['2026-03-28', '2026-03-29', '2026-03-30', '2026-10-25'],
  2: ['2026-03-07', '2026-03-08', '2026-03-09', '2026-11-01'],
}
const TODO_EDGE_DAYS: Record<number, string[]> = {
  1: ['2026-03-28', '2026-03-29', '2026-10-25'],
  2: ['2026-03-07', '2026-03-08', '2026-11-01'],
}

type ListName = 'users' | 'employees' | 'roles' | 'projects' | 'shifts' | 'absences' | 'expenses' | 'todos'

/**
 * A representative set of requests covering every endpoint and every filter, built from the
 * dataset so filters hit real rows. Each is sent to both adapters and the bodies compared.
 */
export function readRequests(data: Dataset): ReadRequest[] {
  const requests: ReadRequest[] = []
  const add = (companyId: number, path: string, expectData: boolean) => requests.push({ companyId, url: PREFIX + path, expectData })

  for (const companyId of [1, 2, 3]) add(companyId, '/company', true)

  for (const companyId of [1, 2]) {
    const of = <T extends { company_id: number }>(rows: T[]) => rows.filter((row) => row.company_id === companyId)
    const users = data.memberships.filter((m) => m.company_id === companyId).map((m) => ({ ...m, id: m.user_id }))
    const other = companyId === 1 ? 2 : 1
    const lists: Record<ListName, Array<{ id: number; updated_at: Date }>> = {
      users,
      employees: of(data.employees),
      roles: of(data.roles),
      projects: of(data.projects),
      shifts: of(data.shifts),
      absences: of(data.absences),
      expenses: of(data.expenses),
      todos: of(data.todos),
    }

    for (const [name, rows] of Object.entries(lists) as Array<[ListName, Array<{ id: number; updated_at: Date }>]>) {
      const first = rows[0]
      const last = rows[rows.length - 1]
      if (first === undefined || last === undefined) throw new Error(`dataset has no ${name} for company ${companyId}`)
      add(companyId, `/${name}`, true)
      add(companyId, `/${name}?page=2&per_page=7`, true)
      add(companyId, `/${name}?per_page=100`, true)
      add(companyId, `/${name}?page=999&per_page=50`, false)
      add(companyId, `/${name}/${first.id}`, true)
      add(companyId, `/${name}/${last.id}`, true)
      const everyRow = name === 'users' ? data.memberships.map((m) => ({ company_id: m.company_id, id: m.user_id })) : (data[name] as Array<{ company_id: number; id: number }>)
      const foreign = everyRow.find((row) => row.company_id === other && !rows.some((own) => own.id === row.id))
      if (foreign !== undefined) add(companyId, `/${name}/${foreign.id}`, false)
      add(companyId, `/${name}/987654321`, false)
      if (name !== 'roles') {
        const median = [...rows].sort((a, b) => a.updated_at.getTime() - b.updated_at.getTime())[Math.floor(rows.length / 2)]
        if (median === undefined) throw new Error('no median row')
        add(companyId, `/${name}?updated_since=${median.updated_at.toISOString()}`, true)
        add(companyId, `/${name}?updated_since=${encodeURIComponent(withOffset(median.updated_at, 2))}&per_page=100`, true)
      }
    }

    const person = data.people.find((p) => p.id === users[1]?.user_id)
    if (person === undefined) throw new Error('no second user')
    add(companyId, '/users?active=true', true)
    add(companyId, '/users?active=false', data.people.some((p) => !p.active && users.some((u) => u.user_id === p.id)))
    add(companyId, `/users?email=${encodeURIComponent(person.email.toUpperCase())}`, true)

    const projects = of(data.projects)
    for (const status of distinct(projects.map((p) => p.status))) add(companyId, `/projects?status=${status}`, true)
    for (const kind of distinct(projects.map((p) => p.kind))) add(companyId, `/projects?kind=${kind}&per_page=5`, true)
    const customer = projects.find((p) => p.customer_id !== null)?.customer_id
    if (customer != null) add(companyId, `/projects?customer_id=${customer}`, true)

    const shifts = of(data.shifts)
    const shift = shifts[3]
    if (shift === undefined) throw new Error('no shift')
    add(companyId, `/shifts?employee_id=${shift.employee_id}`, true)
    if (shift.project_id !== null) add(companyId, `/shifts?project_id=${shift.project_id}`, true)
    for (const status of distinct(shifts.map((s) => s.status))) add(companyId, `/shifts?status=${status}&per_page=100`, true)
    for (const day of SHIFT_EDGE_DAYS[companyId] ?? []) {
      add(companyId, `/shifts?date_from=${day}&date_to=${day}`, true)
      add(companyId, `/shifts?date_from=${day}&per_page=100`, true)
      add(companyId, `/shifts?date_to=${day}&per_page=100`, true)
    }
    for (const day of TODO_EDGE_DAYS[companyId] ?? []) {
      add(companyId, `/todos?due_from=${day}&due_to=${day}`, true)
      add(companyId, `/todos?due_from=${day}&per_page=100`, true)
      add(companyId, `/todos?due_to=${day}&per_page=100`, true)
    }
    add(companyId, `/shifts?status=${shift.status}&date_from=2026-01-01&date_to=2026-12-31&employee_id=${shift.employee_id}`, true)

    const absences = of(data.absences)
    const absence = absences[2]
    if (absence === undefined) throw new Error('no absence')
    add(companyId, `/absences?employee_id=${absence.employee_id}`, true)
    for (const status of distinct(absences.map((a) => a.status))) add(companyId, `/absences?status=${status}`, true)
    add(companyId, `/absences?date_from=${absence.date}&date_to=${absence.date}`, true)
    add(companyId, `/absences?date_from=${absence.date}&status=${absence.status}&per_page=100`, true)

    const expenses = of(data.expenses)
    const expense = expenses[4]
    if (expense === undefined) throw new Error('no expense')
    add(companyId, `/expenses?employee_id=${expense.employee_id}`, true)
    if (expense.project_id !== null) add(companyId, `/expenses?project_id=${expense.project_id}`, true)
    for (const category of distinct(expenses.map((x) => x.category))) add(companyId, `/expenses?category=${category}`, true)
    add(companyId, `/expenses?date_from=${expense.date}&date_to=${expense.date}`, true)
    add(companyId, `/expenses?date_to=${expense.date}&per_page=100`, true)

    const todos = of(data.todos)
    const todo = todos.find((t) => t.assigned_to !== null)
    if (todo === undefined) throw new Error('no assigned to-do')
    for (const status of distinct(todos.map((t) => t.status))) add(companyId, `/todos?status=${status}`, true)
    add(companyId, `/todos?assigned_to=${todo.assigned_to}`, true)
    add(companyId, `/todos?list_id=${todo.list_id}&per_page=100`, true)
    add(companyId, '/todos?important=true', true)
    add(companyId, '/todos?important=false&status=open', todos.some((t) => !t.important && t.status === 'open'))
  }

  for (const name of ['users', 'roles', 'employees', 'projects', 'todos'] as const) add(3, `/${name}`, false)
  return requests
}

function distinct<T>(values: T[]): T[] {
  return [...new Set(values)]
}

/** The same instant written with a `+HH:00` offset (spec 4.3: must be URL-encoded). */
function withOffset(instant: Date, hours: number): string {
  const local = new Date(instant.getTime() + hours * 3_600_000).toISOString().slice(0, -1)
  return `${local}+${String(hours).padStart(2, '0')}:00`
}
