import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { openSqliteAdapter, type SqliteAdapter } from '../../adapters/sqlite/index.js'
import { workforceApi } from '../../src/index.js'
import type { Dataset } from '../../src/ports/dataset.js'
import { generateDataset } from '../../src/seed/generate.js'
import { companyDayOf } from '../../src/time/calendar.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { readRequests } from './read-requests.js'
import { withResponseChecks } from '../helpers/response-checks.js'

/** Past int4, so ids, money and sequences must travel as int8 and still reach JSON as numbers. */
const BIG_ID = 5_000_000_000
const BIG_CENTS = 123_456_789_012

/** The seed plus rows at the edges of the types: an int8 id and an amount beyond int4 cents. */
function dataset(): Dataset {
  const data = generateDataset({ scale: 60 })
  const template = data.expenses.find((x) => x.company_id === 1)
  if (template === undefined) throw new Error('no expense to copy')
  data.expenses.push({ ...template, id: BIG_ID, amount_cents: BIG_CENTS, description: 'Crane, int8 edge' })
  return data
}

interface Side {
  app: FastifyInstance
  keys: Map<number, string>
}

async function serve(adapter: PostgresAdapter | SqliteAdapter): Promise<Side> {
  const app = withResponseChecks(Fastify())
  await app.register(workforceApi, { prefix: '/api/public', storage: adapter.storage, keyStore: adapter.keyStore, modules: adapter.modules })
  await app.ready()
  const keys = new Map<number, string>()
  for (const companyId of [1, 2, 3]) keys.set(companyId, (await app.workforceApi.keys.create({ companyId, scopes: ['all'] })).key)
  return { app, keys }
}

async function get(side: Side, companyId: number, url: string) {
  return side.app.inject({ method: 'GET', url, headers: { 'x-api-key': side.keys.get(companyId) as string } })
}

describePostgres('read API on Postgres', () => {
  const database = useTestDatabase()
  const data = dataset()
  let postgres: PostgresAdapter
  let sqlite: SqliteAdapter
  let pg: Side
  let lite: Side

  beforeAll(async () => {
    postgres = await openPostgresAdapter({ connectionString: database.current.url })
    sqlite = await openSqliteAdapter({ filename: ':memory:' })
    await postgres.loadDataset(data)
    await sqlite.loadDataset(data)
    pg = await serve(postgres)
    lite = await serve(sqlite)
  })

  afterAll(async () => {
    await pg?.app.close()
    await lite?.app.close()
    await postgres?.close()
    await sqlite?.close()
  })

  it('answers every endpoint and filter byte-for-byte as the SQLite adapter does', async () => {
    const requests = readRequests(data)
    expect(requests.length).toBeGreaterThan(200)
    for (const { companyId, url, expectData } of requests) {
      const [fromPg, fromSqlite] = await Promise.all([get(pg, companyId, url), get(lite, companyId, url)])
      expect(fromPg.statusCode, url).toBe(fromSqlite.statusCode)
      expect(fromPg.body, url).toBe(fromSqlite.body)
      if (expectData) {
        expect(fromPg.statusCode, url).toBe(200)
        const body = fromPg.json() as { data: unknown }
        if (Array.isArray(body.data)) expect(body.data.length, url).toBeGreaterThan(0)
      }
    }
  })

  it('renders int8 ids as JSON numbers and amounts as exact decimal strings', async () => {
    const response = await get(pg, 1, `/api/public/v1/expenses/${BIG_ID}`)
    expect(response.statusCode).toBe(200)
    expect(response.body).toContain(`"id":${BIG_ID},`)
    expect(response.json().data).toMatchObject({ id: BIG_ID, amount: '1234567890.12', currency: 'EUR' })

    const list = (await get(pg, 1, '/api/public/v1/expenses?per_page=100&page=1')).json()
    for (const expense of list.data) {
      const row = data.expenses.find((x) => x.id === expense.id)
      expect(typeof expense.id).toBe('number')
      expect(expense.amount).toMatch(/^-?\d+\.\d{2}$/)
      expect(Math.round(Number(expense.amount) * 100)).toBe(row?.amount_cents)
    }
  })

  it('returns days as YYYY-MM-DD, booleans as booleans and JSON columns as structures', async () => {
    const employee = data.employees.find((e) => e.company_id === 1 && e.termination_date !== null)
    if (employee === undefined) throw new Error('no terminated employee in the seed')
    const { data: rendered } = (await get(pg, 1, `/api/public/v1/employees/${employee.id}`)).json()
    expect(rendered).toMatchObject({ hire_date: employee.hire_date, termination_date: employee.termination_date })

    const todo = data.todos.find((t) => t.company_id === 1 && t.due_is_all_day && t.checklist.length > 0 && t.source !== null)
    if (todo === undefined) throw new Error('no all-day to-do with checklist and source in the seed')
    const { data: renderedTodo } = (await get(pg, 1, `/api/public/v1/todos/${todo.id}`)).json()
    expect(renderedTodo).toMatchObject({
      due_date: todo.due_day,
      due_is_all_day: true,
      important: todo.important,
      checklist: todo.checklist,
      tag_ids: todo.tag_ids,
      source: todo.source,
    })

    const role = data.roles.find((r) => r.company_id === 2 && r.permissions.length > 0)
    const { data: renderedRole } = (await get(pg, 2, `/api/public/v1/roles/${role?.id}`)).json()
    expect(renderedRole.permissions).toEqual(role?.permissions)

    const inactive = (await get(pg, 1, '/api/public/v1/users?active=false&per_page=100')).json()
    for (const user of inactive.data) expect(user.active).toBe(false)
  })

  it('puts a shift on the company-calendar day it starts, across DST changes', async () => {
    for (const [companyId, zone, day] of [
      [1, 'Europe/Rome', '2026-03-29'],
      [1, 'Europe/Rome', '2026-10-25'],
      [2, 'America/New_York', '2026-03-08'],
      [2, 'America/New_York', '2026-11-01'],
    ] as const) {
      const expected = data.shifts
        .filter((s) => s.company_id === companyId && companyDayOf(s.starts_at, zone) === day)
        .map((s) => s.id)
      const body = (await get(pg, companyId, `/api/public/v1/shifts?date_from=${day}&date_to=${day}&per_page=100`)).json()
      expect(expected.length, day).toBeGreaterThan(1)
      expect(body.data.map((s: { id: number }) => s.id), `${zone} ${day}`).toEqual(expected)
      expect(body.pagination.total).toBe(expected.length)
    }
  })

  it('counts a timed to-do on the company day and an all-day one on its own day', async () => {
    const day = '2026-03-29'
    const expected = data.todos
      .filter((t) => t.company_id === 1)
      .filter((t) => (t.due_is_all_day ? t.due_day === day : t.due_at !== null && companyDayOf(t.due_at, 'Europe/Rome') === day))
      .map((t) => t.id)
    const body = (await get(pg, 1, `/api/public/v1/todos?due_from=${day}&due_to=${day}&per_page=100`)).json()
    expect(expected.length).toBeGreaterThan(0)
    expect(body.data.map((t: { id: number }) => t.id)).toEqual(expected)
  })
})
