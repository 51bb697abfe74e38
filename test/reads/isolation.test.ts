import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { expectedList, idsWhere, LIST_RESOURCES, rowsOf } from '../helpers/expected-reads.js'
import { listIds } from '../helpers/list-http.js'
import { sharedMemberIds, userIdIn } from '../helpers/seed-facts.js'

const NOT_FOUND_ID = 999_999

/** Ids of `resource` visible to `owner` but not to `viewer` (users may belong to both). */
function foreignIds(resource: (typeof LIST_RESOURCES)[number], owner: number, viewer: number): number[] {
  const visible = new Set(idsWhere(resource, viewer))
  return idsWhere(resource, owner).filter((id) => !visible.has(id))
}

// Spec 1: an integration can only ever see the data of its own company.
describe.each(READ_ADAPTERS)('tenant isolation ($name)', (adapter) => {
  let t: TestApp
  const keys = new Map<number, string>()
  const keyOf = (companyId: number) => keys.get(companyId) as string

  beforeAll(async () => {
    t = await build({ adapter })
    for (const companyId of [1, 2, 3]) keys.set(companyId, await t.keyFor(companyId, ['all']))
    await t.adapter.modules.setActive(3, 'projects', true)
    await t.adapter.modules.setActive(3, 'todo', true)
  })
  afterAll(() => t.close())

  describe.each([
    [2, 1],
    [1, 2],
  ])('company %i’s key and company %i’s rows', (viewer, owner) => {
    it.each(LIST_RESOURCES)('/v1/%s lists (all pages) hold exactly the own company’s rows', async (resource) => {
      const ids = await listIds(t, keyOf(viewer), `/v1/${resource}`)
      expect(ids).toEqual(idsWhere(resource, viewer))
      const foreign = foreignIds(resource, owner, viewer)
      expect(foreign.length).toBeGreaterThanOrEqual(35)
      for (const id of foreign) expect(ids).not.toContain(id)
    })

    it.each(LIST_RESOURCES)('/v1/%s/:id of the other company is a 404 identical to an unknown id', async (resource) => {
      const unknown = await t.get(`/v1/${resource}/${NOT_FOUND_ID}`, keyOf(viewer))
      expect(unknown.statusCode).toBe(404)
      expect(unknown.json()).toStrictEqual({ error: { code: 'not_found', message: unknown.json().error.message, status: 404 } })
      for (const id of foreignIds(resource, owner, viewer)) {
        const res = await t.get(`/v1/${resource}/${id}`, keyOf(viewer))
        expect(res.statusCode, `${resource}/${id}`).toBe(404)
        expect(res.body).toBe(unknown.body)
        expect(res.headers['content-type']).toBe(unknown.headers['content-type'])
      }
    })
  })

  it('a person in both companies is a different user id in each, seen with that company’s own roles and dates', async () => {
    // Ids are per company (issue 21): nothing on the wire links the two memberships of one person.
    const shared = sharedMemberIds(2, 1)
    expect(shared.length).toBeGreaterThanOrEqual(3)
    for (const userId of shared) {
      const otherId = userIdIn(1, userId) as number
      expect(otherId).toBeDefined()
      expect(otherId).not.toBe(userId)
      for (const [companyId, id, foreignId] of [[2, userId, otherId], [1, otherId, userId]] as const) {
        const res = await t.get(`/v1/users/${id}`, keyOf(companyId))
        expect(res.statusCode).toBe(200)
        const expected = expectedList('users', companyId).find((row) => row.id === id)
        expect(res.json()).toStrictEqual({ data: expected })
        const companyRoles = new Set(idsWhere('roles', companyId))
        for (const roleId of res.json().data.role_ids as number[]) expect(companyRoles.has(roleId)).toBe(true)
        // The same person's id in the other company is not a user here.
        expect((await t.get(`/v1/users/${foreignId}`, keyOf(companyId))).statusCode).toBe(404)
      }
    }
  })

  it('filters naming another company’s ids return nothing', async () => {
    const employee1 = rowsOf('employees', 1)[0]?.id as number
    const project1 = rowsOf('projects', 1)[0]?.id as number
    const onlyCompany1User = foreignIds('users', 1, 2)[0] as number
    const list1 = rowsOf('todos', 1)[0]?.list_id as number
    // Sanity: in company 1 these filters do select rows.
    expect(idsWhere('shifts', 1, (s) => s.employee_id === employee1).length + idsWhere('absences', 1, (a) => a.employee_id === employee1).length).toBeGreaterThan(0)
    expect(idsWhere('todos', 1, (todo) => todo.list_id === list1).length).toBeGreaterThan(0)

    for (const query of [
      `/v1/shifts?employee_id=${employee1}`,
      `/v1/shifts?project_id=${project1}`,
      `/v1/absences?employee_id=${employee1}`,
      `/v1/expenses?employee_id=${employee1}`,
      `/v1/expenses?project_id=${project1}`,
      `/v1/todos?list_id=${list1}`,
      `/v1/todos?assigned_to=${onlyCompany1User}`,
    ]) {
      const res = await t.get(query, keyOf(2))
      expect(res.statusCode, query).toBe(200)
      expect(res.json(), query).toStrictEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } })
    }
  })

  it('company 3 sees empty lists on every endpoint and none of the others’ ids', async () => {
    for (const resource of LIST_RESOURCES) {
      const res = await t.get(`/v1/${resource}`, keyOf(3))
      expect(res.statusCode, resource).toBe(200)
      expect(res.json()).toStrictEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } })
      for (const companyId of [1, 2]) {
        const id = idsWhere(resource, companyId)[0] as number
        expect((await t.get(`/v1/${resource}/${id}`, keyOf(3))).statusCode, `${resource}/${id}`).toBe(404)
      }
    }
    expect((await t.get('/v1/company', keyOf(3))).json().data.id).toBe(3)
  })

  it('the company endpoint only ever shows the key’s own company', async () => {
    for (const companyId of [1, 2, 3]) expect((await t.get('/v1/company', keyOf(companyId))).json().data.id).toBe(companyId)
  })
})
