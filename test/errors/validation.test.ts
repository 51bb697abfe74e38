import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { idsWhere, LIST_RESOURCES, rowsOf, type ListResource } from '../helpers/expected-reads.js'

const UNAUTHORIZED_BODY = '{"error":{"code":"unauthorized","message":"Invalid or missing API key","status":401}}'

/** A 422 `validation_error` in the spec's envelope whose details name exactly `fields`. */
function expectValidationError(res: LightMyRequestResponse, fields: string[]): void {
  expect(res.statusCode, res.body).toBe(422)
  const body = res.json()
  expect(Object.keys(body)).toEqual(['error'])
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message', 'status'])
  expect(body.error.code).toBe('validation_error')
  expect(body.error.status).toBe(422)
  expect(typeof body.error.message).toBe('string')
  const details = body.error.details as { field: string; message: string }[]
  for (const detail of details) {
    expect(Object.keys(detail).sort()).toEqual(['field', 'message'])
    expect(detail.message.length).toBeGreaterThan(0)
  }
  expect([...new Set(details.map((detail) => detail.field))].sort()).toEqual([...fields].sort())
}

const BAD_PER_PAGE = ['0', '101', 'abc', '1.5', '-1', '1e2', '0x10', '+5', '%205', '05']
const BAD_PAGE = ['0', '-1', 'abc', '1.5', '1e1']
const BAD_BOOLEANS = ['1', '0', 'yes', 'no', 'TRUE', 'True', 'FALSE', 'on']
const BAD_INSTANTS = [
  '2026-01-05', // a day, not an instant
  'yesterday',
  '2026-01-05T08:00:00', // no offset
  '2026-01-05 08:00:00Z',
  '1767600000000',
  '2026-13-05T08:00:00Z',
  '2026-02-30T08:00:00Z',
  '2026-01-05T25:00:00Z',
  '2026-01-05T10:00:00+01:00', // unencoded +: arrives as a space
  '2026-01-05T10:00:00%2001:00',
]
const BAD_DAYS = ['2026-02-30', '2026-13-01', '2026-02-29', '2026-04-31', '2026-00-10', '2026-1-5', '20260105', '2026-01-05T00:00:00Z', 'today']

const DAY_FILTERS: [ListResource, string, string][] = [
  ['shifts', 'date_from', 'date_to'],
  ['absences', 'date_from', 'date_to'],
  ['expenses', 'date_from', 'date_to'],
  ['todos', 'due_from', 'due_to'],
]

const UPDATED_SINCE: ListResource[] = ['users', 'employees', 'projects', 'shifts', 'absences', 'expenses', 'todos']

/** A misspelt filter per list: must be rejected, never silently ignored (it would return everything). */
const MISSPELT: [ListResource, string][] = [
  ['users', 'actve=true'],
  ['employees', 'updated_snce=2026-01-01T00:00:00Z'],
  ['roles', 'nmae=x'],
  ['projects', 'customer=501'],
  ['shifts', 'employe_id=1'],
  ['absences', 'date=2026-01-01'],
  ['expenses', 'categroy=travel'],
  ['todos', 'assignee=1'],
]

/** Filters of other endpoints: each list accepts only its own (spec 4.1). */
const FOREIGN_FILTERS: [ListResource, string][] = [
  ['users', 'status=active'],
  ['users', 'employee_id=1'],
  ['employees', 'active=true'],
  ['roles', 'updated_since=2026-01-01T00:00:00Z'],
  ['projects', 'employee_id=1'],
  ['projects', 'date_from=2026-01-01'],
  ['shifts', 'category=travel'],
  ['shifts', 'due_from=2026-01-01'],
  ['absences', 'project_id=1'],
  ['expenses', 'status=approved'],
  ['todos', 'date_from=2026-01-01'],
  ['todos', 'employee_id=1'],
]

const BAD_ENUMS: [ListResource, string][] = [
  ['projects', 'status=open'],
  ['projects', 'status=ACTIVE'],
  ['projects', 'kind=external'],
  ['shifts', 'status=done'],
  ['absences', 'status=pending'],
  ['expenses', 'category=fuel'],
  ['todos', 'status=closed'],
  ['todos', 'status=OPEN'],
]

const EMPTY_VALUES: [ListResource, string][] = [
  ['users', 'email'],
  ['users', 'active'],
  ['users', 'updated_since'],
  ['users', 'page'],
  ['users', 'per_page'],
  ['projects', 'status'],
  ['projects', 'customer_id'],
  ['shifts', 'employee_id'],
  ['shifts', 'date_from'],
  ['absences', 'date_to'],
  ['expenses', 'category'],
  ['todos', 'important'],
  ['todos', 'due_from'],
  ['todos', 'list_id'],
]

const REPEATED: [ListResource, string, string][] = [
  ['todos', 'status=open&status=done', 'status'],
  ['users', 'page=1&page=2', 'page'],
  ['users', 'per_page=10&per_page=10', 'per_page'],
  ['shifts', 'employee_id=1&employee_id=2', 'employee_id'],
  ['users', 'email=a%40example.com&email=b%40example.com', 'email'],
  ['absences', 'date_from=2026-01-01&date_from=2026-02-01', 'date_from'],
  ['todos', 'important=true&important=true', 'important'],
]

const BAD_IDS = ['abc', '0', '-1', '1.5', '9007199254740993']
const ID_FILTERS: [ListResource, string][] = [
  ['projects', 'customer_id'],
  ['shifts', 'employee_id'],
  ['shifts', 'project_id'],
  ['absences', 'employee_id'],
  ['expenses', 'employee_id'],
  ['expenses', 'project_id'],
  ['todos', 'assigned_to'],
  ['todos', 'list_id'],
]

// Spec 4.2.3, 4.3 and 7: invalid input answers 422 validation_error naming the parameter.
describe.each(READ_ADAPTERS)('query validation ($name)', (adapter) => {
  let t: TestApp
  let key: string

  beforeAll(async () => {
    t = await build({ adapter })
    key = await t.keyFor(1, ['all'])
  })
  afterAll(() => t.close())

  const get = (resource: string, query: string) => t.get(`/v1/${resource}?${query}`, key)

  describe.each(LIST_RESOURCES)('/v1/%s', (resource) => {
    it.each(BAD_PER_PAGE)('per_page=%s is 422 naming per_page', async (value) => {
      expectValidationError(await get(resource, `per_page=${value}`), ['per_page'])
    })

    it.each(BAD_PAGE)('page=%s is 422 naming page', async (value) => {
      expectValidationError(await get(resource, `page=${value}`), ['page'])
    })
  })

  it('names every offending parameter at once', async () => {
    expectValidationError(await get('users', 'per_page=0&page=0&active=yes&colour=red'), ['per_page', 'page', 'active', 'colour'])
  })

  it.each(BAD_BOOLEANS)('active=%s and important=%s are 422: booleans are exactly true or false', async (value) => {
    expectValidationError(await get('users', `active=${value}`), ['active'])
    expectValidationError(await get('todos', `important=${value}`), ['important'])
  })

  describe.each(UPDATED_SINCE)('/v1/%s updated_since', (resource) => {
    it.each(BAD_INSTANTS)('%s is 422 naming updated_since', async (value) => {
      expectValidationError(await get(resource, `updated_since=${value}`), ['updated_since'])
    })
  })

  it('updated_since with an encoded offset (%2B02:00) is the same instant as its UTC form', async () => {
    // 2026-01-09T13:03:00+02:00 is 2026-01-09T11:03:00Z; -05:00 needs no encoding.
    const bound = Date.parse('2026-01-09T11:03:00.000Z')
    for (const resource of ['users', 'shifts', 'todos'] as const) {
      const expected = idsWhere(resource, 1, (row: { updated_at: Date }) => row.updated_at.getTime() >= bound)
      expect(expected.length).toBeGreaterThan(0)
      const utc = await get(resource, 'per_page=100&updated_since=2026-01-09T11:03:00.000Z')
      const plus = await get(resource, 'per_page=100&updated_since=2026-01-09T13:03:00%2B02:00')
      const minus = await get(resource, 'per_page=100&updated_since=2026-01-09T06:03:00-05:00')
      const noMillis = await get(resource, 'per_page=100&updated_since=2026-01-09T11:03:00Z')
      for (const res of [utc, plus, minus, noMillis]) {
        expect(res.statusCode, res.body).toBe(200)
        expect(res.body).toBe(utc.body)
      }
      expect((utc.json().data as { id: number }[]).map((row) => row.id)).toEqual(expected)
    }
  })

  describe.each(DAY_FILTERS)('/v1/%s %s/%s', (resource, fromName, toName) => {
    it.each(BAD_DAYS)('a non-existent or malformed day %s is 422 naming the parameter', async (value) => {
      expectValidationError(await get(resource, `${fromName}=${value}`), [fromName])
      expectValidationError(await get(resource, `${toName}=${value}`), [toName])
    })

    it('a leap day that exists is accepted', async () => {
      const res = await get(resource, `${fromName}=2028-02-29&${toName}=2028-02-29`)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json()).toStrictEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } })
    })

    it('a window whose first day is after its last is 422 naming the first', async () => {
      expectValidationError(await get(resource, `${fromName}=2026-03-02&${toName}=2026-03-01`), [fromName])
      expectValidationError(await get(resource, `${fromName}=2027-01-01&${toName}=2026-12-31`), [fromName])
    })

    it('a one-day window (first = last) is accepted', async () => {
      expect((await get(resource, `${fromName}=2026-03-20&${toName}=2026-03-20`)).statusCode).toBe(200)
    })
  })

  it.each(MISSPELT)('/v1/%s?%s (misspelt filter) is 422 naming it', async (resource, query) => {
    expectValidationError(await get(resource, query), [query.split('=')[0] as string])
  })

  it.each(FOREIGN_FILTERS)('/v1/%s?%s (another endpoint’s filter) is 422 naming it', async (resource, query) => {
    expectValidationError(await get(resource, query), [query.split('=')[0] as string])
  })

  it('/v1/company takes no query parameters', async () => {
    expectValidationError(await t.get('/v1/company?page=1', key), ['page'])
    expectValidationError(await t.get('/v1/company?id=2', key), ['id'])
  })

  it.each(BAD_ENUMS)('/v1/%s?%s (not an allowed value) is 422 naming it', async (resource, query) => {
    expectValidationError(await get(resource, query), [query.split('=')[0] as string])
  })

  it.each(EMPTY_VALUES)('/v1/%s?%s= (empty value) is 422 naming it', async (resource, name) => {
    expectValidationError(await get(resource, `${name}=`), [name])
  })

  it.each(REPEATED)('/v1/%s?%s (repeated parameter) is 422 naming it', async (resource, query, name) => {
    expectValidationError(await get(resource, query), [name])
  })

  describe.each(ID_FILTERS)('/v1/%s %s', (resource, name) => {
    it.each(BAD_IDS)('=%s is 422', async (value) => {
      expectValidationError(await get(resource, `${name}=${value}`), [name])
    })
  })

  it('a valid query on the same endpoints answers 200 (the 422s above are not blanket refusals)', async () => {
    const employee = rowsOf('shifts', 1)[0]?.employee_id
    for (const query of [
      'users?active=true&email=x%40example.com&updated_since=2026-01-01T00:00:00Z&page=1&per_page=100',
      `shifts?employee_id=${employee}&status=scheduled&date_from=2026-01-01&date_to=2026-12-31`,
      'todos?important=false&status=open&due_from=2026-01-01&due_to=2026-12-31',
      'expenses?category=travel&date_from=2026-01-01',
      'projects?status=active&kind=customer&customer_id=501',
    ]) {
      const res = await t.get(`/v1/${query}`, key)
      expect(res.statusCode, `${query}: ${res.body}`).toBe(200)
    }
  })

  it('401 takes precedence over 422: a bad query with a bad or missing key is the generic 401', async () => {
    const badKey = `owk_${'0'.repeat(16)}_${'0'.repeat(64)}`
    for (const headers of [{ 'x-api-key': badKey }, { 'x-api-key': 'nonsense' }, {}]) {
      const res = await t.get('/v1/users?per_page=0&bogus=1', headers)
      expect(res.statusCode).toBe(401)
      expect(res.body).toBe(UNAUTHORIZED_BODY)
    }
  })
})
