import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bearer, buildWriteApp, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'
import { exclusiveMemberIds, expectError, expectInvalid, listIds, nextUserId, nextTodoId, person, roleIds, todosOf } from '../helpers/seed-facts.js'

// Spec 1 and docs/decisions.md (another company's id is a 404 like an unknown one): a key
// writes only its own company's data, and cannot point its data at another company's.
describe.each(WRITE_ADAPTERS)('tenant isolation of writes ($name)', (factory) => {
  let t: WriteTestApp
  let key1: string
  let key2: string
  /** Company 1's users and to-dos as company 1 sees them, every page. */
  let company1Before: string[]

  const company1View = async () =>
    Promise.all(['/v1/users?per_page=100', '/v1/todos?per_page=100'].map(async (path) => (await t.get(path, key1)).body))

  beforeEach(async () => {
    t = await buildWriteApp({ adapter: factory })
    key1 = await t.keyFor(1, ['all'])
    key2 = await t.keyFor(2, ['all'])
    company1Before = await company1View()
    // Every to-do and user of company 1 fits on one page, so the view above is complete.
    expect(todosOf(1).length).toBeLessThanOrEqual(100)
  })
  afterEach(async () => {
    await t.close()
  })

  /** Nothing of company 1 changed and no event was recorded. */
  async function expectCompany1Untouched(): Promise<void> {
    expect(await company1View()).toEqual(company1Before)
    expect(await t.events()).toEqual([])
  }

  it.each(['activate', 'deactivate'])('company 2 cannot %s a user exclusive to company 1 (404, same as an unknown id)', async (action) => {
    const unknown = await t.post(`/v1/users/999999/${action}`, undefined, key2)
    expectError(unknown, 404, 'not_found')
    for (const id of exclusiveMemberIds(1).slice(0, 5)) {
      const res = await t.post(`/v1/users/${id}/${action}`, undefined, key2)
      expect(res.statusCode).toBe(404)
      expect(res.body).toBe(unknown.body)
    }
    await expectCompany1Untouched()
  })

  it('company 2 cannot PATCH company 1’s to-do (404, same as an unknown id)', async () => {
    const unknown = await t.patch('/v1/todos/999999', { title: 'x' }, key2)
    expectError(unknown, 404, 'not_found')
    for (const todo of todosOf(1).slice(0, 5)) {
      const res = await t.patch(`/v1/todos/${todo.id}`, { title: 'taken over', status: 'open' }, key2)
      expect(res.statusCode).toBe(404)
      expect(res.body).toBe(unknown.body)
    }
    await expectCompany1Untouched()
  })

  it('company 2 cannot create a to-do in company 1’s list, for its member or its role', async () => {
    const own = { title: 'x', list_id: listIds(2)[0], assigned_to: exclusiveMemberIds(2)[0] }
    expectInvalid(await t.post('/v1/todos', { ...own, list_id: listIds(1)[0] }, key2), ['list_id'])
    expectInvalid(await t.post('/v1/todos', { ...own, assigned_to: exclusiveMemberIds(1)[0] }, key2), ['assigned_to'])
    expectInvalid(await t.post('/v1/todos', { ...own, assignee_group_id: roleIds(1)[0] }, key2), ['assignee_group_id'])
    expectInvalid(
      await t.post('/v1/todos', { title: 'x', list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0], assignee_group_id: roleIds(1)[0] }, key2),
      ['list_id', 'assigned_to', 'assignee_group_id'],
    )
    await expectCompany1Untouched()
    expect((await t.get(`/v1/todos/${nextTodoId()}`, key2)).statusCode).toBe(404)
  })

  it('company 2 cannot move its own to-do to company 1’s list, member or role', async () => {
    const todo = todosOf(2)[0]
    const before = (await t.get(`/v1/todos/${todo?.id}`, key2)).body
    const res = await t.patch(
      `/v1/todos/${todo?.id}`,
      { list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0], assignee_group_id: roleIds(1)[0] },
      key2,
    )
    expectInvalid(res, ['list_id', 'assigned_to', 'assignee_group_id'])
    expect((await t.get(`/v1/todos/${todo?.id}`, key2)).body).toBe(before)
    await expectCompany1Untouched()
  })

  it('company 2 cannot give a user company 1’s roles', async () => {
    const body = { email: 'new.hire@example.com', first_name: 'New', last_name: 'Hire', role_ids: [roleIds(1)[0]] }
    expectInvalid(await t.post('/v1/users', body, key2), ['role_ids'])
    const existing = person(exclusiveMemberIds(1)[0] as number)
    expectInvalid(await t.post('/v1/users', { ...body, email: existing.email }, key2), ['role_ids'])
    await expectCompany1Untouched()
  })

  it('a to-do company 1 creates is invisible and unwritable to company 2', async () => {
    const created = await t.post('/v1/todos', { title: 'Ours', list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] }, key1)
    expect(created.statusCode).toBe(201)
    const id = created.json().data.id as number
    expectError(await t.get(`/v1/todos/${id}`, key2), 404, 'not_found')
    expectError(await t.patch(`/v1/todos/${id}`, { title: 'Theirs' }, key2), 404, 'not_found')
    expect((await t.get(`/v1/todos/${id}`, key1)).json().data.title).toBe('Ours')
  })

  it('the same Idempotency-Key in two companies names two slots: both execute, each for its own company', async () => {
    const body = { email: 'two.tenants@example.com', first_name: 'Two', last_name: 'Tenants' }
    const first = await t.post('/v1/users', { ...body, role_ids: [roleIds(1)[0]] }, bearer(key1, 'onboarding-1'))
    const second = await t.post('/v1/users', { ...body, role_ids: [roleIds(2)[0]] }, bearer(key2, 'onboarding-1'))
    expect([first.statusCode, second.statusCode]).toEqual([201, 201])
    expect(second.headers['idempotent-replay']).toBeUndefined()
    // Two users, one per company, each with an id of its own (issue 21: user ids are per company).
    expect(first.json().data).toMatchObject({ id: nextUserId(), role_ids: [roleIds(1)[0]], invitation_status: 'pending' })
    expect(second.json().data).toMatchObject({ id: nextUserId() + 1, role_ids: [roleIds(2)[0]], invitation_status: 'pending' })
    expect((await t.events()).map((e) => [e.company_id, e.type])).toEqual([
      [1, 'users.created'],
      [2, 'users.created'],
    ])
    // A company-2 replay never leaks company 1's response.
    const replay = await t.post('/v1/users', { ...body, role_ids: [roleIds(2)[0]] }, bearer(key2, 'onboarding-1'))
    expect(replay.body).toBe(second.body)
  })
})
