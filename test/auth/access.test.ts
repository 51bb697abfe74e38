import { afterEach, describe, expect, it, vi } from 'vitest'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { expectedList, LIST_RESOURCES, SCOPE_OF, type ListResource } from '../helpers/expected-reads.js'
import { SPEC_SCOPES } from '../helpers/spec-scopes.js'


/** The platform module of each read resource (spec 5 table). */
const MODULE_OF: Record<ListResource | 'company', 'core' | 'projects' | 'todo'> = {
  users: 'core',
  employees: 'core',
  roles: 'core',
  company: 'core',
  projects: 'projects',
  shifts: 'projects',
  absences: 'projects',
  expenses: 'projects',
  todos: 'todo',
}

const RESOURCES: (ListResource | 'company')[] = [...LIST_RESOURCES, 'company']

/** The GET paths of a resource for company 1 (list and by id, or the company endpoint). */
function pathsOf(resource: ListResource | 'company', companyId = 1): string[] {
  if (resource === 'company') return ['/v1/company']
  const first = expectedList(resource, companyId)[0]
  return first === undefined ? [`/v1/${resource}`] : [`/v1/${resource}`, `/v1/${resource}/${first.id as number}`]
}

function expectForbidden(res: { statusCode: number; json(): any; body: string }, label: string): void {
  expect(res.statusCode, `${label}: ${res.body.slice(0, 120)}`).toBe(403)
  const body = res.json()
  expect(Object.keys(body)).toEqual(['error'])
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'status'])
  expect(body.error.code).toBe('forbidden')
  expect(body.error.status).toBe(403)
}

// Spec 4 and 5.5: a missing scope, or an inactive module for the company, is 403.
describe.each(READ_ADAPTERS)('scopes and modules ($name)', (adapter) => {
  let t: TestApp
  afterEach(() => t.close())

  it.each(RESOURCES)('%s needs exactly its scope: every other scope gives 403, its own gives 200', async (resource) => {
    t = await build({ adapter })
    const scope = SCOPE_OF[resource]
    const without = await t.keyFor(1, SPEC_SCOPES.filter((s) => s !== scope))
    const only = await t.keyFor(1, [scope])
    for (const path of pathsOf(resource)) {
      expectForbidden(await t.get(path, without), path)
      expect((await t.get(path, only)).statusCode, path).toBe(200)
    }
  })

  it('a key with only write scopes cannot read', async () => {
    t = await build({ adapter })
    const key = await t.keyFor(1, ['users:write', 'todos:write'])
    expectForbidden(await t.get('/v1/users', key), 'users')
    expectForbidden(await t.get('/v1/todos', key), 'todos')
  })

  it('company 3 has only core: its module-gated endpoints are 403 even with every scope', async () => {
    t = await build({ adapter })
    const key = await t.keyFor(3, ['all'])
    for (const resource of RESOURCES) {
      const path = resource === 'company' ? '/v1/company' : `/v1/${resource}`
      const res = await t.get(path, key)
      if (MODULE_OF[resource] === 'core') expect(res.statusCode, path).toBe(200)
      else expectForbidden(res, path)
    }
    // By id too, even for an id that exists in another company.
    expectForbidden(await t.get(`/v1/todos/${expectedList('todos', 1)[0]?.id as number}`, key), 'todo by id')
  })

  it('switching a module off is 403 at once with moduleCacheTtlMs 0, and on again is 200', async () => {
    t = await build({ adapter, options: { moduleCacheTtlMs: 0 } })
    const key = await t.keyFor(1, ['all'])
    expect((await t.get('/v1/todos', key)).statusCode).toBe(200)
    await t.adapter.modules.setActive(1, 'todo', false)
    expectForbidden(await t.get('/v1/todos', key), 'todo off')
    expect((await t.get('/v1/projects', key)).statusCode).toBe(200) // other modules unaffected
    expect((await t.get('/v1/todos', await t.keyFor(2, ['all']))).statusCode).toBe(200) // other companies unaffected
    await t.adapter.modules.setActive(1, 'todo', true)
    expect((await t.get('/v1/todos', key)).statusCode).toBe(200)

    await t.adapter.modules.setActive(1, 'projects', false)
    for (const resource of ['projects', 'shifts', 'absences', 'expenses'] as const) {
      for (const path of pathsOf(resource)) expectForbidden(await t.get(path, key), path)
    }
    expect((await t.get('/v1/users', key)).statusCode).toBe(200)
  })

  it('switching on a module of company 3 opens its endpoints', async () => {
    t = await build({ adapter, options: { moduleCacheTtlMs: 0 } })
    const key = await t.keyFor(3, ['all'])
    await t.adapter.modules.setActive(3, 'projects', true)
    const res = await t.get('/v1/projects', key)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toStrictEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } })
    expectForbidden(await t.get('/v1/todos', key), 'todo still off')
  })

  it('a module change is seen once moduleCacheTtlMs has passed on the injected clock', async () => {
    let now = Date.parse('2026-06-01T12:00:00.000Z')
    t = await build({ adapter, options: { moduleCacheTtlMs: 1_000, clock: { now: () => now } } })
    const key = await t.keyFor(1, ['all'])
    // Only the injected clock may decide cache ages: freeze real timers meanwhile.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      expect((await t.get('/v1/todos', key)).statusCode).toBe(200)
      await t.adapter.modules.setActive(1, 'todo', false)
      now += 999
      expect((await t.get('/v1/todos', key)).statusCode).toBe(200) // still cached: the TTL has not passed
      now += 2
      expectForbidden(await t.get('/v1/todos', key), 'after the module cache TTL')
    } finally {
      vi.useRealTimers()
    }
  })

  it('401 comes before 403: a bad key on a gated endpoint is the generic 401', async () => {
    t = await build({ adapter })
    const res = await t.get('/v1/todos', { 'x-api-key': `owk_${'f'.repeat(16)}_${'f'.repeat(64)}` })
    expect(res.statusCode).toBe(401)
    expect(res.body).toBe('{"error":{"code":"unauthorized","message":"Invalid or missing API key","status":401}}')
  })

  it('403 comes before 422: a key without the scope and a bad query is 403', async () => {
    t = await build({ adapter })
    expectForbidden(await t.get('/v1/todos?per_page=0', await t.keyFor(1, ['users:read'])), 'scope before query')
  })
})
