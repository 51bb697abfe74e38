import { afterEach, expect, it } from 'vitest'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { postgresCodec } from '../../adapters/postgres/postgres-codec.js'
import { bearer, buildWriteApp, WRITE_ADAPTERS, type WriteAdapterFactory, type WriteTestApp } from '../helpers/write-app.js'
import { describePostgres, readChangeEvents, useTestDatabase, type TestDatabase } from '../helpers/postgres.js'
import { exclusiveMemberIds, listIds, nextTodoId, nextUserId, person, roleIds, todosOf } from '../helpers/seed-facts.js'
import type { ChangeEvent } from '../../src/ports/write-storage.js'

/** A fresh schema per app in the file's database: each test starts from an empty store. */
function postgresWrites(database: { readonly current: TestDatabase }): WriteAdapterFactory {
  let next = 0
  return {
    name: 'postgres',
    async open() {
      const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema: `writes_${++next}` })
      const c = postgresCodec
      return {
        adapter,
        events: () => readChangeEvents(adapter),
        async idempotencyRecords() {
          const rows = await adapter.db.selectFrom('wfa_idempotency').selectAll().orderBy('created_at').execute()
          return rows.map((row) => ({
            slot: row.slot as string,
            state: row.state as string,
            company_id: c.readInt(row.company_id),
            created_at: c.readInstant(row.created_at),
          }))
        },
      }
    },
  }
}

const sqlite = WRITE_ADAPTERS.find((factory) => factory.name === 'sqlite') as WriteAdapterFactory

describePostgres('writes on Postgres', () => {
  const database = useTestDatabase()
  const postgres = postgresWrites(database)
  const apps: WriteTestApp[] = []
  const build = async (adapter: WriteAdapterFactory) => {
    const t = await buildWriteApp({ adapter })
    apps.push(t)
    return t
  }
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close()
  })

  it('answers a script of writes byte-for-byte as the SQLite adapter does', async () => {
    const [pg, lite] = await Promise.all([build(postgres), build(sqlite)])
    const list = listIds(1)[0]
    const member = exclusiveMemberIds(1)[0]
    const activeMember = exclusiveMemberIds(1).find((id) => person(id).active) as number
    const role = roleIds(1)[0]
    type Step = [status: number, method: 'post' | 'patch' | 'get', path: string, body?: unknown, idempotencyKey?: string]
    const script: Step[] = [
      [201, 'post', '/v1/todos', { title: 'Inspect crane', list_id: list, assigned_to: member }],
      [
        201,
        'post',
        '/v1/todos',
        { title: 'Order bricks', list_id: list, assignee_group_id: role, notes: 'Two pallets', priority: 'urgent', important: true, due_date: '2026-03-29', due_is_all_day: true },
      ],
      [201, 'post', '/v1/todos', { title: 'Call site', list_id: list, assigned_to: member, due_date: '2026-03-29T00:30:00+02:00' }, 'retry-1'],
      [201, 'post', '/v1/todos', { title: 'Call site', list_id: list, assigned_to: member, due_date: '2026-03-29T00:30:00+02:00' }, 'retry-1'],
      [200, 'patch', `/v1/todos/${nextTodoId()}`, { title: 'Inspect the crane', notes: 'North gate', status: 'in_progress' }],
      [200, 'patch', `/v1/todos/${nextTodoId() + 1}`, { notes: null, due_date: null }],
      [200, 'get', `/v1/todos?updated_since=2026-01-01T00:00:00Z&due_from=2026-03-29&due_to=2026-03-29`],
      [201, 'post', '/v1/users', { email: 'giulia.neri@example.com', first_name: 'Giulia', last_name: 'Neri', role_ids: [role] }],
      [409, 'post', '/v1/users', { email: 'GIULIA.NERI@example.com', first_name: 'Giulia', last_name: 'Neri' }],
      [200, 'get', `/v1/users/${nextUserId()}`],
      [409, 'post', `/v1/users/${nextUserId()}/deactivate`, {}],
      [200, 'post', `/v1/users/${activeMember}/deactivate`, {}],
      [200, 'get', `/v1/users/${activeMember}`],
      [200, 'post', `/v1/users/${activeMember}/activate`, {}, 'retry-2'],
      [200, 'post', `/v1/users/${activeMember}/activate`, {}, 'retry-2'],
      [200, 'get', '/v1/users?active=true&per_page=100'],
    ]
    const [pgKey, liteKey] = await Promise.all([pg.keyFor(1), lite.keyFor(1)])
    for (const [status, method, path, body, idempotencyKey] of script) {
      const send = (t: WriteTestApp, key: string) => {
        const auth = bearer(key, idempotencyKey)
        return method === 'get' ? t.get(path, auth) : t[method](path, body, auth)
      }
      const [a, b] = [await send(pg, pgKey), await send(lite, liteKey)]
      const label = `${method.toUpperCase()} ${path} ${JSON.stringify(body ?? '')}`
      expect(a.statusCode, `${label}: ${a.body}`).toBe(status)
      expect(b.statusCode, `${label}: ${b.body}`).toBe(status)
      expect(a.body, label).toBe(b.body)
      expect(a.headers.location, label).toBe(b.headers.location)
      expect(a.headers['idempotent-replay'], label).toBe(b.headers['idempotent-replay'])
    }
    expect(withoutEventIds(await pg.events())).toEqual(withoutEventIds(await lite.events()))
  })

  it('answers pending memberships, their acceptance and their decline byte-for-byte as the SQLite adapter does', async () => {
    const [pg, lite] = await Promise.all([build(postgres), build(sqlite)])
    const [employee, other] = exclusiveMemberIds(2).filter((id) => person(id).active)
    if (employee === undefined || other === undefined) throw new Error('the seed needs two active people of company 2 alone')
    const sent = (id: number) => ({ email: person(id).email.toUpperCase(), first_name: 'Sent', last_name: 'By One', role_ids: [roleIds(1)[0]] })
    // Company 1's own ids for them (issue 21: user ids are per company).
    const [ofA, otherOfA] = [nextUserId(), nextUserId() + 1]
    type Step = [status: number, company: 1 | 2, method: 'post' | 'get', path: string, body?: unknown]
    const steps: Step[] = [
      [201, 1, 'post', '/v1/users', sent(employee)],
      [201, 1, 'post', '/v1/users', sent(other)],
      [409, 1, 'post', '/v1/users', sent(employee)],
      [200, 1, 'get', `/v1/users/${ofA}`],
      [404, 1, 'get', `/v1/users/${employee}`],
      [200, 1, 'get', `/v1/users?email=${encodeURIComponent(person(employee).email)}&active=false`],
      [200, 1, 'get', '/v1/users?active=true&per_page=100'],
      [409, 1, 'post', `/v1/users/${ofA}/deactivate`, {}],
      [200, 2, 'post', `/v1/users/${employee}/deactivate`, {}],
      [200, 2, 'get', `/v1/users/${employee}`],
      [200, 1, 'get', `/v1/users/${ofA}`],
    ]
    const keys = await Promise.all([pg.keyFor(1), lite.keyFor(1), pg.keyFor(2), lite.keyFor(2)])
    const keyOf = (t: WriteTestApp, company: 1 | 2) => keys[(company - 1) * 2 + (t === pg ? 0 : 1)] as string
    const run = async (list: Step[]) => {
      for (const [status, company, method, path, body] of list) {
        const send = (t: WriteTestApp) => (method === 'get' ? t.get(path, keyOf(t, company)) : t.post(path, body, keyOf(t, company)))
        const [a, b] = [await send(pg), await send(lite)]
        const label = `company ${company}: ${method.toUpperCase()} ${path} ${JSON.stringify(body ?? '')}`
        expect(a.statusCode, `${label}: ${a.body}`).toBe(status)
        expect(a.body, label).toBe(b.body)
      }
    }
    await run(steps)
    for (const t of [pg, lite]) {
      t.clock.advance(60_000)
      await t.app.workforceApi.invitations.accept({ companyId: 1, userId: ofA })
      await t.app.workforceApi.invitations.decline({ companyId: 1, userId: otherOfA })
    }
    await run([
      [200, 1, 'get', `/v1/users/${ofA}`],
      [404, 1, 'get', `/v1/users/${otherOfA}`],
      [409, 2, 'post', `/v1/users/${employee}/activate`, {}],
      [200, 2, 'post', `/v1/users/${other}/deactivate`, {}],
    ])
    expect((await pg.get(`/v1/users/${ofA}`, keyOf(pg, 1))).json().data).toMatchObject({ invitation_status: 'accepted', email: person(employee).email })
    expect(withoutEventIds(await pg.events())).toEqual(withoutEventIds(await lite.events()))
    expect((await pg.events()).filter((event) => event.company_id === 1).map((event) => event.type)).toEqual([
      'users.created',
      'users.created',
      'users.updated',
      'users.deleted',
    ])
  })

  it('of many concurrent adds of one existing email, on many connections, exactly one gets 201 pending; the others 409', async () => {
    const t = await build(postgres)
    const key = await t.keyFor(1)
    const employee = exclusiveMemberIds(2)[0] as number
    const body = { email: person(employee).email, first_name: 'Race', last_name: 'Pending' }
    const responses = await Promise.all(Array.from({ length: 10 }, () => t.post('/v1/users', body, key)))
    const statuses = responses.map((res) => res.statusCode)
    expect(statuses.filter((status) => status === 201), statuses.join(', ')).toHaveLength(1)
    expect(statuses.filter((status) => status !== 201 && status !== 409), statuses.join(', ')).toEqual([])
    expect((await t.events()).filter((event) => event.company_id === 1)).toHaveLength(1)
    const created = responses.find((res) => res.statusCode === 201)?.json().data.id as number
    expect((await t.get(`/v1/users/${created}`, key)).json().data).toMatchObject({ invitation_status: 'pending', last_name: 'Pending' })
  })

  it('runs one of many identical concurrent requests, however many connections race', async () => {
    const t = await build(postgres)
    const key = await t.keyFor(1)
    const before = todosOf(1).length
    const body = { title: 'Only once', list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] }
    const responses = await Promise.all(Array.from({ length: 12 }, () => t.post('/v1/todos', body, bearer(key, 'same-key'))))

    const executed = responses.filter((res) => res.statusCode === 201 && res.headers['idempotent-replay'] === undefined)
    expect(executed).toHaveLength(1)
    for (const res of responses) {
      expect([201, 409], res.body).toContain(res.statusCode)
      if (res.statusCode === 201) expect(res.body).toBe(executed[0]?.body)
    }
    expect((await t.get('/v1/todos?per_page=1', key)).json().pagination.total).toBe(before + 1)
    expect((await t.events()).filter((event) => event.type === 'todos.created')).toHaveLength(1)
    expect(await t.idempotencyRecords()).toMatchObject([{ state: 'completed', company_id: 1 }])
  })

  it('gives concurrent creates distinct ids after the loaded ones, each with its event', async () => {
    const t = await build(postgres)
    const key = await t.keyFor(1)
    const list = listIds(1)[0]
    const member = exclusiveMemberIds(1)[0]
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) => t.post('/v1/todos', { title: `Task ${i}`, list_id: list, assigned_to: member }, key)),
    )
    const ids = responses.map((res) => {
      expect(res.statusCode, res.body).toBe(201)
      return res.json().data.id as number
    })
    expect(new Set(ids).size).toBe(16)
    expect(Math.min(...ids)).toBe(nextTodoId())
    expect(Math.max(...ids)).toBe(nextTodoId() + 15)
    expect((await t.events()).map((event) => event.resource_id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b))
  })

  it('serialises concurrent updates of one to-do: every change lands, none is lost', async () => {
    const t = await build(postgres)
    const key = await t.keyFor(1)
    const id = todosOf(1)[0]?.id as number
    const titles = Array.from({ length: 10 }, (_, i) => `Title ${i}`)
    const responses = await Promise.all(titles.map((title) => t.patch(`/v1/todos/${id}`, { title }, key)))
    for (const res of responses) expect(res.statusCode, res.body).toBe(200)
    expect(titles).toContain((await t.get(`/v1/todos/${id}`, key)).json().data.title)
    expect((await t.events()).filter((event) => event.type === 'todos.updated' && event.resource_id === id)).toHaveLength(10)
  })
})

/** Events with their random `evt_` ids masked (in the payload too): everything else must match across backends. */
function withoutEventIds(events: ChangeEvent[]) {
  return events.map(({ id, payload, ...rest }) => ({ ...rest, payload: payload.replace(id, 'evt_…') }))
}
