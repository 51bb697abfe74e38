import { afterEach, describe, expect, it } from 'vitest'
import type { CompanyRecord } from '../../src/ports/records.js'
import { decodeCursor, encodeCursor } from '../../src/api/events-feed.js'
import { buildWriteApp, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'

// GET /v1/events and GET /v1/events/cursor through the public surface (app.inject), on the
// memory and SQLite adapters. Commit order under concurrent Postgres transactions is
// event-feed.postgres.test.ts; the port itself is the conformance group "events feed".

const TODO = { title: 'Check the ladder', list_id: 1, assigned_to: 1 }
const COMPANY: CompanyRecord = { id: 1, name: 'Acme', timezone: 'Europe/Berlin', country: 'DE', created_at: new Date(0), updated_at: new Date(0) }

/** Publishes as a host does: in its own transaction (a Kysely one on SQL adapters, the write port's on memory). */
async function publishCompany(t: WriteTestApp, name: string): Promise<void> {
  const input = { type: 'company.updated' as const, companyId: 1, record: { ...COMPANY, name } }
  const db = (t.adapter as { db?: { transaction(): { execute(work: (trx: unknown) => Promise<void>): Promise<void> } } }).db
  if (db !== undefined) await db.transaction().execute(async (trx) => void (await t.app.workforceApi.events.publish(trx, input)))
  else await t.adapter.writes.transaction(async (tx) => void (await t.app.workforceApi.events.publish(tx, input)))
}

interface FeedAnswer {
  data: Array<{ id: string; type: string; company_id: number; data: { id: number } & Record<string, unknown> }>
  next_cursor: string
  has_more: boolean
}

describe.each(WRITE_ADAPTERS)('the events feed on $name', (adapter) => {
  let t: WriteTestApp
  afterEach(() => t?.close())

  const feed = async (key: string, query = ''): Promise<FeedAnswer> => {
    const response = await t.get(`/v1/events${query}`, key)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    return response.json() as FeedAnswer
  }
  const cursorNow = async (key: string): Promise<string> => {
    const response = await t.get('/v1/events/cursor', key)
    expect(response.statusCode, response.body).toBe(200)
    return (response.json() as { data: { cursor: string } }).data.cursor
  }

  it('lists API writes and host publishes in commit order, with the webhook body, and resumes after a cursor', async () => {
    t = await buildWriteApp({ adapter })
    const key = await t.keyFor(1)
    const created = (await t.post('/v1/todos', TODO, key)).json().data as { id: number }
    expect((await t.patch(`/v1/todos/${created.id}`, { status: 'done' }, key)).statusCode).toBe(200)
    await publishCompany(t, 'Acme 2')

    const first = await feed(key)
    expect(first.data.map((event) => event.type)).toEqual(['todos.created', 'todos.updated', 'company.updated'])
    expect(first.data.every((event) => event.company_id === 1)).toBe(true)
    expect(first.data[1]?.data).toMatchObject({ id: created.id, status: 'done' })
    expect(first.has_more).toBe(false)
    // Byte for byte what the outbox recorded: the body a webhook delivery carries.
    const recorded = await t.events()
    const body = (await t.get('/v1/events', key)).body
    expect(body).toBe(`{"data":[${recorded.map((event) => event.payload).join(',')}],"next_cursor":${JSON.stringify(first.next_cursor)},"has_more":false}`)

    // Nothing new: the same cursor comes back, and a later write follows it.
    const idle = await feed(key, `?after=${first.next_cursor}`)
    expect(idle).toEqual({ data: [], next_cursor: first.next_cursor, has_more: false })
    await t.patch(`/v1/todos/${created.id}`, { title: 'Check both ladders' }, key)
    const later = await feed(key, `?after=${first.next_cursor}`)
    expect(later.data.map((event) => [event.type, event.data.title])).toEqual([['todos.updated', 'Check both ladders']])
  })

  it('pages with limit and has_more, never skipping or repeating an event', async () => {
    t = await buildWriteApp({ adapter })
    const key = await t.keyFor(1)
    for (let index = 0; index < 7; index += 1) await t.post('/v1/todos', { ...TODO, title: `To-do ${index}` }, key)
    const seen: string[] = []
    let cursor: string | undefined
    let calls = 0
    for (;;) {
      const page = await feed(key, `?limit=3${cursor === undefined ? '' : `&after=${cursor}`}`)
      seen.push(...page.data.map((event) => String(event.data.title)))
      cursor = page.next_cursor
      calls += 1
      if (!page.has_more) break
    }
    expect(seen).toEqual(Array.from({ length: 7 }, (_, index) => `To-do ${index}`))
    expect(calls).toBe(3)
  })

  it('a cursor taken before a full read, then the feed from it, holds every change since', async () => {
    t = await buildWriteApp({ adapter })
    const key = await t.keyFor(1)
    await t.post('/v1/todos', TODO, key)
    const cursor = await cursorNow(key)
    // Written after the cursor: whatever the full read shows of it, the feed replays it.
    const after = (await t.post('/v1/todos', { ...TODO, title: 'After the cursor' }, key)).json().data as { id: number }
    const page = await feed(key, `?after=${cursor}`)
    expect(page.data.map((event) => [event.type, event.data.id])).toEqual([['todos.created', after.id]])
  })

  it('shows each key only the event types its scopes read, for active modules; types narrows them', async () => {
    t = await buildWriteApp({ adapter, options: { moduleCacheTtlMs: 0 } })
    const writer = await t.keyFor(1)
    await t.post('/v1/todos', TODO, writer)
    await publishCompany(t, 'Acme')
    const companyOnly = await t.keyFor(1, ['company:read'])
    expect((await feed(companyOnly)).data.map((event) => event.type)).toEqual(['company.updated'])
    const writeOnly = await t.keyFor(1, ['todos:write'])
    const nothing = await feed(writeOnly)
    expect(nothing.data).toEqual([])
    expect(nothing.has_more).toBe(false)
    // Its cursor is at the head: nothing it could read is before it.
    expect(decodeCursor(nothing.next_cursor, 1)).toBeGreaterThanOrEqual(2)

    expect((await feed(writer, '?types=todos.created')).data.map((event) => event.type)).toEqual(['todos.created'])
    const unknown = await t.get('/v1/events?types=todos.created,todos.exploded', writer)
    expect(unknown.statusCode).toBe(422)
    expect(unknown.json().error.details).toEqual([{ field: 'types', message: 'unknown event type: todos.exploded' }])
    const refused = await t.get('/v1/events?types=todos.created', companyOnly)
    expect(refused.statusCode).toBe(403)
    expect(refused.json().error.code).toBe('forbidden')

    await t.adapter.modules.setActive(1, 'todo', false)
    expect((await feed(writer)).data.map((event) => event.type)).toEqual(['company.updated'])
  })

  it("never shows another company's events, and answers another company's cursor as it answers garbage", async () => {
    t = await buildWriteApp({ adapter })
    const one = await t.keyFor(1)
    const two = await t.keyFor(2)
    await t.post('/v1/todos', TODO, one)
    await t.post('/v1/todos', TODO, one)
    expect((await feed(two)).data).toEqual([])
    const theirs = (await feed(one)).next_cursor
    const answers = await Promise.all(
      [theirs, encodeCursor(2, 999), 'ec1_bm90LWEtY3Vyc29y', 'garbage'].map(async (cursor) => {
        const response = await t.get(`/v1/events?after=${cursor}`, two)
        return [response.statusCode, response.body]
      }),
    )
    for (const answer of answers) expect(answer).toEqual(answers[0])
    expect(answers[0]?.[0]).toBe(422)
    expect(JSON.parse(String(answers[0]?.[1])).error.details).toEqual([{ field: 'after', message: 'is not a cursor of this feed' }])
  })

  it('answers 410 cursor_expired for a cursor below purged history, and starts after it without one', async () => {
    t = await buildWriteApp({ adapter })
    const key = await t.keyFor(1)
    const start = (await feed(key)).next_cursor
    await t.post('/v1/todos', { ...TODO, title: 'Old' }, key)
    t.clock.advance(40 * 24 * 3_600_000)
    await t.post('/v1/todos', { ...TODO, title: 'New' }, key)
    const webhooks = t.adapter.webhooks
    expect(await webhooks.purgeFinished(new Date(t.clock.now() - 30 * 24 * 3_600_000), 100)).toBe(1)

    const expired = await t.get(`/v1/events?after=${start}`, key)
    expect(expired.statusCode).toBe(410)
    expect(expired.json().error).toMatchObject({ code: 'cursor_expired', status: 410 })
    const fresh = await feed(key)
    expect(fresh.data.map((event) => event.data.title)).toEqual(['New'])
  })

  it('refuses a bad limit and unknown parameters in the envelope', async () => {
    t = await buildWriteApp({ adapter })
    const key = await t.keyFor(1)
    for (const query of ['?limit=0', '?limit=1001', '?limit=x', '?page=2']) {
      const response = await t.get(`/v1/events${query}`, key)
      expect(response.statusCode, query).toBe(422)
      expect(response.json().error.code).toBe('validation_error')
    }
    expect((await t.get('/v1/events', 'owk_nope')).statusCode).toBe(401)
  })
})

describe('the feed cursor', () => {
  it('round-trips any company and position up to the largest safe integers, and only for its company', () => {
    for (const [company, position] of [
      [1, 0],
      [2, 1],
      [123_456, 9_876_543_210],
      [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ] as const) {
      const cursor = encodeCursor(company, position)
      expect(decodeCursor(cursor, company)).toBe(position)
      expect(decodeCursor(cursor, company === 1 ? 2 : 1)).toBeNull()
    }
    for (const garbage of ['', 'ec1_', 'ec1_!!', 'ec2_MS4x', `ec1_${Buffer.from('1.-1').toString('base64url')}`, `ec1_${Buffer.from('1.1.1').toString('base64url')}`]) {
      expect(decodeCursor(garbage, 1), garbage).toBeNull()
    }
  })
})
