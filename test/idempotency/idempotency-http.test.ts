import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { buildWriteApp, PREFIX, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'
import { exclusiveMemberIds, listIds, nextTodoId, nextUserId, todosOf } from '../helpers/seed-facts.js'

interface WireResponse {
  status: number
  headers: Headers
  body: string
}

const todoBody = { title: 'Race me', list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] }
const userBody = { email: 'racing.person@example.com', first_name: 'Racing', last_name: 'Person' }

/**
 * Idempotency and concurrency over real sockets (spec 4.4): the requests below truly overlap
 * in the server, which `app.inject` alone does not guarantee.
 */
describe.each(WRITE_ADAPTERS)('writes over HTTP ($name)', (factory) => {
  let t: WriteTestApp
  let key: string
  let base: string

  beforeEach(async () => {
    t = await buildWriteApp({ adapter: factory })
    key = await t.keyFor(1, ['all'])
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `${address}${PREFIX}`
  })
  afterEach(() => t.close())

  async function send(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown): Promise<WireResponse> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, headers: res.headers, body: await res.text() }
  }
  const withKey = (idempotencyKey?: string) => ({
    authorization: `Bearer ${key}`,
    ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
  })
  const todoTotal = async () => JSON.parse((await send('GET', '/v1/todos?per_page=1', withKey())).body).pagination.total as number

  /**
   * Makes `count` requests sent together truly overlap in the server: opens `count` kept-alive
   * connections first (so none waits to connect), and gives every write one event-loop turn of
   * latency (the reference adapters otherwise finish a request before the next socket is read).
   */
  async function overlapWrites(count: number): Promise<void> {
    const responses = await Promise.all(Array.from({ length: count }, () => send('GET', '/v1/company', withKey())))
    for (const res of responses) expect(res.status).toBe(200)
    t.writes.setLatency(() => new Promise((resolve) => setImmediate(resolve)))
  }

  function expectConflict(res: WireResponse): void {
    expect(res.status, res.body).toBe(409)
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'conflict', status: 409 } })
    expect(res.headers.get('idempotent-replay')).toBeNull()
  }

  it('20 identical POST /v1/todos with one Idempotency-Key at once create exactly one to-do', async () => {
    await overlapWrites(20)
    const responses = await Promise.all(Array.from({ length: 20 }, () => send('POST', '/v1/todos', withKey('race-20'), todoBody)))

    const created = responses.filter((r) => r.status === 201)
    const inFlight = responses.filter((r) => r.status !== 201)
    for (const res of inFlight) {
      expectConflict(res)
      expect(res.headers.get('retry-after')).toBe('1')
    }
    const originals = created.filter((r) => r.headers.get('idempotent-replay') === null)
    expect(originals).toHaveLength(1)
    const original = originals[0] as WireResponse
    for (const res of created) {
      expect(res.body).toBe(original.body)
      expect(res.headers.get('location')).toBe(`${PREFIX}/v1/todos/${nextTodoId()}`)
    }
    for (const res of created) if (res !== original) expect(res.headers.get('idempotent-replay')).toBe('true')

    expect(JSON.parse(original.body).data.id).toBe(nextTodoId())
    expect(await todoTotal()).toBe(todosOf(1).length + 1)
    expect((await t.events()).filter((e) => e.type === 'todos.created')).toHaveLength(1)

    const retry = await send('POST', '/v1/todos', withKey('race-20'), todoBody)
    expect(retry.status).toBe(201)
    expect(retry.body).toBe(original.body)
    expect(retry.headers.get('idempotent-replay')).toBe('true')
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.headers.get('location')).toBe(original.headers.get('location'))
  })

  it('while the first of 20 is held, the other 19 get 409 in flight; then retries replay the one to-do', async () => {
    const held = t.writes.holdNext()
    const answered: WireResponse[] = []
    let allButOne!: () => void
    const nineteenAnswered = new Promise<void>((resolve) => (allButOne = resolve))
    const all = Array.from({ length: 20 }, () =>
      send('POST', '/v1/todos', withKey('held-20'), todoBody).then((res) => {
        answered.push(res)
        if (answered.length === 19) allButOne()
        return res
      }),
    )
    await held.arrived
    // Every request but the held one answers while its write is held.
    await nineteenAnswered
    for (const res of answered) {
      expectConflict(res)
      expect(res.headers.get('retry-after')).toBe('1')
    }
    expect(await t.events()).toEqual([])

    held.release()
    const results = await Promise.all(all)
    const winners = results.filter((r) => r.status === 201)
    expect(winners).toHaveLength(1)
    expect(winners[0]?.headers.get('idempotent-replay')).toBeNull()
    const retry = await send('POST', '/v1/todos', withKey('held-20'), todoBody)
    expect(retry.status).toBe(201)
    expect(retry.body).toBe(winners[0]?.body)
    expect(retry.headers.get('idempotent-replay')).toBe('true')
    expect(await todoTotal()).toBe(todosOf(1).length + 1)
    expect(await t.events()).toHaveLength(1)
  })

  it('a retry of a held request gets 409 with Retry-After: 1 on the wire, and the replay after it completes', async () => {
    const held = t.writes.holdNext()
    const pending = send('POST', '/v1/users', withKey('slow-user'), userBody)
    await held.arrived
    const during = await send('POST', '/v1/users', withKey('slow-user'), userBody)
    expectConflict(during)
    expect(during.headers.get('retry-after')).toBe('1')

    held.release()
    const first = await pending
    expect(first.status, first.body).toBe(201)
    expect(first.headers.get('idempotent-replay')).toBeNull()
    const replay = await send('POST', '/v1/users', withKey('slow-user'), userBody)
    expect(replay.status).toBe(201)
    expect(replay.body).toBe(first.body)
    expect(replay.headers.get('location')).toBe(`${PREFIX}/v1/users/${nextUserId()}`)
    expect(replay.headers.get('idempotent-replay')).toBe('true')
  })

  it('10 POST /v1/users with the same new email at once, without a key: one 201, nine 409, one event', async () => {
    await overlapWrites(10)
    const responses = await Promise.all(Array.from({ length: 10 }, () => send('POST', '/v1/users', withKey(), userBody)))
    const created = responses.filter((r) => r.status === 201)
    expect(created).toHaveLength(1)
    expect(JSON.parse(created[0]?.body as string).data).toMatchObject({ id: nextUserId(), email: userBody.email })
    const refused = responses.filter((r) => r.status !== 201)
    expect(refused).toHaveLength(9)
    for (const res of refused) expectConflict(res)

    expect(await t.events()).toStrictEqual([
      expect.objectContaining({ company_id: 1, type: 'users.created', resource_id: nextUserId() }),
    ])
    const listed = await send('GET', `/v1/users?email=${encodeURIComponent(userBody.email)}`, withKey())
    expect(JSON.parse(listed.body).data).toHaveLength(1)
  })

  it('10 POST /v1/users with one new email from two companies at once: one pending user each, with an id of its own', async () => {
    const key2 = await t.keyFor(2, ['all'])
    await overlapWrites(10)
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        send('POST', '/v1/users', { authorization: `Bearer ${i % 2 === 0 ? key : key2}` }, userBody),
      ),
    )
    expect(responses.filter((r) => r.status === 201)).toHaveLength(2)
    for (const res of responses.filter((r) => r.status !== 201)) expectConflict(res)
    const ids = responses.filter((r) => r.status === 201).map((r) => JSON.parse(r.body).data.id)
    // Ids are per company (issue 21): the same email gets a fresh id in each, never a shared one.
    expect([...ids].sort((a, b) => a - b)).toEqual([nextUserId(), nextUserId() + 1])
    const events = (await t.events()).map((e) => [e.company_id, e.type, e.resource_id])
    expect(events.map(([company, type]) => [company, type]).sort()).toEqual([
      [1, 'users.created'],
      [2, 'users.created'],
    ])
    expect(events.map(([, , id]) => id).sort()).toEqual([...ids].sort((a, b) => a - b))
  })
})
