import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { expectedCompany, expectedList, LIST_RESOURCES } from '../helpers/expected-reads.js'

// Spec 4.1: every GET endpoint, compared record by record with the seed dataset.
describe.each(READ_ADAPTERS)('read endpoints ($name)', (adapter) => {
  let t: TestApp
  const keys = new Map<number, string>()
  const keyOf = (companyId: number) => keys.get(companyId) as string

  beforeAll(async () => {
    t = await build({ adapter })
    for (const companyId of [1, 2, 3]) keys.set(companyId, await t.keyFor(companyId, ['all']))
  })
  afterAll(() => t.close())

  describe.each([1, 2])('company %i', (companyId) => {
    it.each(LIST_RESOURCES)('GET /v1/%s returns the list envelope with every record of the company', async (resource) => {
      const expected = expectedList(resource, companyId)
      expect(expected.length).toBeGreaterThanOrEqual(40)

      const res = await t.get(`/v1/${resource}?per_page=100`, keyOf(companyId))

      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toMatch(/^application\/json/)
      expect(res.json()).toStrictEqual({
        data: expected,
        pagination: { page: 1, per_page: 100, total: expected.length, total_pages: 1 },
      })
    })

    it.each(LIST_RESOURCES)('GET /v1/%s/:id returns { data: record } for every id of the company', async (resource) => {
      for (const record of expectedList(resource, companyId)) {
        const res = await t.get(`/v1/${resource}/${record.id as number}`, keyOf(companyId))
        expect(res.statusCode, `${resource}/${record.id as number}`).toBe(200)
        expect(res.json()).toStrictEqual({ data: record })
      }
    })

    it('GET /v1/company returns the key’s own company in { data }', async () => {
      const res = await t.get('/v1/company', keyOf(companyId))
      expect(res.statusCode).toBe(200)
      expect(res.json()).toStrictEqual({ data: expectedCompany(companyId) })
    })
  })

  it('GET /v1/company for the empty company 3 is its own profile', async () => {
    const res = await t.get('/v1/company', keyOf(3))
    expect(res.statusCode).toBe(200)
    expect(res.json()).toStrictEqual({ data: expectedCompany(3) })
    expect(res.json().data).toMatchObject({ id: 3, name: 'Empty Co', timezone: 'Asia/Tokyo', country: 'JP' })
  })

  it('has no list and no lookup by id for company', async () => {
    for (const path of ['/v1/companies', '/v1/company/1', '/v1/companies/1']) {
      const res = await t.get(path, keyOf(1))
      expect(res.statusCode, path).toBe(404)
      expect(res.json().error).toMatchObject({ code: 'not_found', status: 404 })
    }
  })
})
