import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import {
  DATASET,
  decimalOf,
  LIST_RESOURCES,
  PRIVATE_FIELDS,
  rowsOf,
  TIMESTAMP,
  WIRE_KEYS,
} from '../helpers/expected-reads.js'
import { listAll } from '../helpers/list-http.js'

/** Every string value of a storage-only field in the dataset: none may appear in any body. */
function privateValues(): string[] {
  const values = new Set<string>()
  const add = (value: unknown) => {
    if (typeof value === 'string' && value !== '') values.add(value)
  }
  DATASET.people.forEach((row) => add(row.password_hash))
  DATASET.employees.forEach((row) => add(row.iban))
  DATASET.projects.forEach((row) => {
    add(row.offer_number)
    add(row.internal_notes)
  })
  DATASET.shifts.forEach((row) => add(row.internal_notes))
  DATASET.absences.forEach((row) => add(row.reason))
  return [...values]
}

// Spec 2.1 (omitted fields), 2.3 (amounts) and 2.4 (ids, timestamps).
describe.each(READ_ADAPTERS)('wire conventions ($name)', (adapter) => {
  let t: TestApp
  const bodies = new Map<string, string>()

  beforeAll(async () => {
    t = await build({ adapter })
    for (const companyId of [1, 2]) {
      const key = await t.keyFor(companyId, ['all'])
      for (const resource of LIST_RESOURCES) {
        const res = await t.get(`/v1/${resource}?per_page=100`, key)
        expect(res.statusCode).toBe(200)
        bodies.set(`${companyId}:${resource}`, res.body)
        const first = (res.json().data as { id: number }[])[0]
        if (first === undefined) throw new Error(`no ${resource}`)
        bodies.set(`${companyId}:${resource}/id`, (await t.get(`/v1/${resource}/${first.id}`, key)).body)
      }
      bodies.set(`${companyId}:company`, (await t.get('/v1/company', key)).body)
    }
  })
  afterAll(() => t.close())

  const recordsOf = (name: string): Record<string, unknown>[] => {
    const body = JSON.parse(bodies.get(name) as string) as { data: Record<string, unknown> | Record<string, unknown>[] }
    return Array.isArray(body.data) ? body.data : [body.data]
  }

  it.each(LIST_RESOURCES)('%s objects have exactly the documented keys, in lists and by id', (resource) => {
    for (const companyId of [1, 2]) {
      for (const name of [`${companyId}:${resource}`, `${companyId}:${resource}/id`]) {
        const records = recordsOf(name)
        expect(records.length).toBeGreaterThan(0)
        for (const record of records) expect(Object.keys(record).sort()).toEqual([...WIRE_KEYS[resource]].sort())
      }
    }
  })

  it('company has exactly the documented keys', () => {
    for (const companyId of [1, 2]) {
      const [company] = recordsOf(`${companyId}:company`)
      expect(Object.keys(company ?? {}).sort()).toEqual([...WIRE_KEYS.company].sort())
    }
  })

  it('no response names a private field or carries a private value', () => {
    const secrets = privateValues()
    expect(secrets.length).toBeGreaterThan(50)
    for (const [name, body] of bodies) {
      for (const field of PRIVATE_FIELDS) expect(body, `${name} has "${field}"`).not.toContain(`"${field}"`)
      for (const value of secrets) expect(body, `${name} leaks ${value}`).not.toContain(value)
    }
  })

  it('every *_at is a UTC instant with milliseconds and Z', () => {
    let checked = 0
    for (const name of bodies.keys()) {
      for (const record of recordsOf(name)) {
        for (const [key, value] of Object.entries(record)) {
          if (!key.endsWith('_at')) continue
          expect(value, `${name} ${key}`).toMatch(TIMESTAMP)
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(1000)
  })

  it('a timed to-do due_date is such an instant; an all-day one is the day as entered', () => {
    for (const companyId of [1, 2]) {
      const byId = new Map(recordsOf(`${companyId}:todos`).map((todo) => [todo.id, todo]))
      for (const row of rowsOf('todos', companyId)) {
        const wire = byId.get(row.id)
        if (row.due_is_all_day) expect(wire?.due_date).toBe(row.due_day)
        else if (row.due_at !== null) expect(wire?.due_date).toMatch(TIMESTAMP)
        else expect(wire?.due_date).toBeNull()
      }
    }
  })

  it('ids and references are integers', () => {
    for (const name of bodies.keys()) {
      for (const record of recordsOf(name)) {
        for (const [key, value] of Object.entries(record)) {
          if (key !== 'id' && !key.endsWith('_id')) continue
          if (value !== null) expect(Number.isInteger(value), `${name} ${key}=${JSON.stringify(value)}`).toBe(true)
        }
        if (Array.isArray(record.role_ids)) record.role_ids.forEach((id) => expect(Number.isInteger(id)).toBe(true))
        if (Array.isArray(record.tag_ids)) record.tag_ids.forEach((id) => expect(Number.isInteger(id)).toBe(true))
      }
    }
  })

  it('expense amounts are exact decimal strings with two fractional digits', () => {
    for (const companyId of [1, 2]) {
      const byId = new Map(recordsOf(`${companyId}:expenses`).map((expense) => [expense.id, expense.amount]))
      for (const row of rowsOf('expenses', companyId)) {
        const amount = byId.get(row.id)
        expect(typeof amount).toBe('string')
        expect(amount).toMatch(/^-?\d+\.\d{2}$/)
        expect(amount).toBe(decimalOf(row.amount_cents))
      }
    }
  })

  it('renders the seed’s special amounts exactly (0.05, 0.01, 0.99, 12.34, 1000.00, 2500.50)', async () => {
    const key = await t.keyFor(1, ['expenses:read'])
    const amounts = new Map((await listAll(t, key, '/v1/expenses')).map((e) => [e.id, e.amount]))
    const expected: [number, string][] = [
      [5, '0.05'],
      [1, '0.01'],
      [99, '0.99'],
      [1234, '12.34'],
      [100000, '1000.00'],
      [250050, '2500.50'],
    ]
    for (const [cents, text] of expected) {
      const row = rowsOf('expenses', 1).find((expense) => expense.amount_cents === cents)
      expect(row, `an expense of ${cents} cents`).toBeDefined()
      expect(amounts.get(row?.id)).toBe(text)
    }
  })
})
