import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import type { SqliteAdapter } from '../../adapters/sqlite/index.js'
import { EventInputError } from '../../src/api/catalogue.js'
import { CONTRACT } from '../../src/api/index.js'
import { changedFields, sameRendered } from '../../src/events/previous-attributes.js'
import type { TodoRecord } from '../../src/ports/records.js'
import { EventPublishError } from '../../src/webhooks/event-publisher.js'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { schemaValidators } from '../helpers/openapi-responses.js'
import { exclusiveMemberIds, todosOf } from '../helpers/seed-facts.js'
import { buildWriteApp, FakeClock, WRITE_ADAPTERS, type WriteAdapterFactory, type WriteTestApp } from '../helpers/write-app.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'

const SECRET_KEY = randomBytes(32).toString('base64')
// Small clock steps: a minute would outlast the claim of a delivery still in flight, and it would be sent again.
const SECOND = 1_000
const AT = new Date('2026-10-01T09:30:00.000Z')

/** A to-do as the Storage port returns it, for rendering without an app. */
function todoRecord(overrides: Partial<TodoRecord> = {}): TodoRecord {
  return {
    id: 7,
    title: 'Inspect crane',
    notes: null,
    status: 'open',
    priority: 'normal',
    important: false,
    due_day: null,
    due_at: null,
    due_is_all_day: false,
    list_id: 1,
    assigned_to: 2,
    assignee_group_id: null,
    claimed_by: null,
    checklist: [{ id: 1, title: 'Brakes', done: false }],
    tag_ids: [3],
    source: null,
    created_at: new Date('2026-09-01T08:00:00.000Z'),
    updated_at: new Date('2026-09-01T08:00:00.000Z'),
    ...overrides,
  } as TodoRecord
}

const payloadOf = (input: Parameters<typeof CONTRACT.renderEvent>[0]) => CONTRACT.renderEvent(input, AT).payload

/** The webhook payload schema of `type` in the committed document. */
const documentCheck = (() => {
  const validatorAt = schemaValidators(JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')))
  return (type: string, payload: unknown): string[] => {
    const validate = validatorAt(`/webhooks/${type}/post/requestBody/content/application~1json/schema`)
    return validate(payload) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`)
  }
})()

describe('changedFields', () => {
  it('lists the fields whose value differs, with the value before, in the order of the fields given', () => {
    const before = { id: 1, title: 'Old', notes: null, tag_ids: [1, 2], updated_at: 'T0' }
    const after = { id: 1, title: 'New', notes: 'Now noted', tag_ids: [1, 2], updated_at: 'T1' }
    expect(changedFields(['id', 'title', 'notes', 'tag_ids', 'updated_at'], before, after)).toStrictEqual({ title: 'Old', notes: null, updated_at: 'T0' })
    expect(Object.keys(changedFields(['updated_at', 'title'], before, after))).toEqual(['updated_at', 'title'])
  })

  it('is empty when nothing rendered differs, and ignores fields not listed', () => {
    expect(changedFields(['id', 'title'], { id: 1, title: 'Same', secret: 'a' }, { id: 1, title: 'Same', secret: 'b' })).toStrictEqual({})
  })
})

describe('sameRendered', () => {
  it.each([
    ['equal primitives', 'a', 'a', true],
    ['null and a value', null, 0, false],
    ['null and undefined (JSON shows null, or nothing)', null, undefined, false],
    ['equal arrays', [1, [2, 3]], [1, [2, 3]], true],
    ['arrays in another order', [1, 2], [2, 1], false],
    ['arrays of another length', [1], [1, 1], false],
    ['an array and an object', [], {}, false],
    ['objects with keys in another order', { a: 1, b: { c: [true] } }, { b: { c: [true] }, a: 1 }, true],
    ['a nested difference', { a: { b: 1 } }, { a: { b: 2 } }, false],
    ['a member set to undefined and one left out', { a: 1, b: undefined }, { a: 1 }, true],
    ['a member left out and one present', { a: 1 }, { a: 1, b: null }, false],
    ['an inherited name is not a member', { a: 1 }, { a: 1, constructor: 1 }, false],
    ['dates of the same instant', new Date(5), new Date(5), true],
    ['dates of other instants', new Date(5), new Date(6), false],
    ['a date and its ISO string (a renderer would not mix them)', new Date(5), new Date(5).toISOString(), false],
  ])('%s', (_case, a, b, same) => {
    expect(sameRendered(a, b)).toBe(same)
    expect(sameRendered(b, a)).toBe(same)
  })
})

describe('renderEvent with the record before the change', () => {
  it('adds previous_attributes after data, and leaves every byte before it as without', () => {
    const before = todoRecord()
    const after = todoRecord({ title: 'Inspect the crane', due_at: new Date('2026-10-02T12:00:00.000Z'), updated_at: AT })
    const plain = payloadOf({ type: 'todos.updated', companyId: 1, record: after })
    const withPrevious = payloadOf({ type: 'todos.updated', companyId: 1, record: after, previous: before })
    const tail = ',"previous_attributes":{"title":"Inspect crane","due_date":null,"updated_at":"2026-09-01T08:00:00.000Z"}}'
    expect(withPrevious.endsWith(tail)).toBe(true)
    // Only the event id differs between the two renderings.
    const withoutId = (payload: string) => payload.replace(/"evt_[a-z2-7]{24}"/, '"evt_"')
    expect(withoutId(withPrevious)).toBe(`${withoutId(plain).slice(0, -1)}${tail}`)
    expect(documentCheck('todos.updated', JSON.parse(withPrevious))).toEqual([])
  })

  it('renders a changed nested value whole, as GET showed it', () => {
    const before = todoRecord()
    const after = todoRecord({ checklist: [{ id: 1, title: 'Brakes', done: true }], source: { type: 'shift', id: 4 } })
    const payload = JSON.parse(payloadOf({ type: 'todos.updated', companyId: 1, record: after, previous: before }))
    expect(payload.previous_attributes).toStrictEqual({ checklist: [{ id: 1, title: 'Brakes', done: false }], source: null })
  })

  it('is {} when no rendered field changed, and absent without a previous record (or with null)', () => {
    const record = todoRecord()
    expect(JSON.parse(payloadOf({ type: 'todos.updated', companyId: 1, record, previous: todoRecord() })).previous_attributes).toStrictEqual({})
    expect(payloadOf({ type: 'todos.updated', companyId: 1, record })).not.toContain('previous_attributes')
    expect(payloadOf({ type: 'todos.updated', companyId: 1, record, previous: null })).not.toContain('previous_attributes')
  })

  it('refuses a previous record for a creation or a deletion, and one of another id', () => {
    const record = todoRecord()
    expect(() => payloadOf({ type: 'todos.created', companyId: 1, record, previous: record })).toThrow(EventInputError)
    expect(() => payloadOf({ type: 'todos.deleted', companyId: 1, record, previous: record })).toThrow(/previous is for \*\.updated events only/)
    expect(() => payloadOf({ type: 'todos.updated', companyId: 1, record, previous: todoRecord({ id: 8 }) })).toThrow(/must be the same to-do \(id 7\)/)
  })

  it("the document's previous_attributes refuses a field the resource does not have", () => {
    const payload = JSON.parse(payloadOf({ type: 'todos.updated', companyId: 1, record: todoRecord({ title: 'New' }), previous: todoRecord() }))
    expect(documentCheck('todos.updated', payload)).toEqual([])
    expect(documentCheck('todos.updated', { ...payload, previous_attributes: { colour: 'red' } })).not.toEqual([])
    expect(documentCheck('todos.updated', { ...payload, previous_attributes: { title: 7 } })).not.toEqual([])
  })
})

interface Harness {
  t: WriteTestApp
  /** The app's clock (the harness's own, not `t.clock`): starts at the real now. */
  clock: FakeClock
  receiver: Receiver
  secret: string
  key: string
}

// Issue 24: what an update changed, on the wire, for API writes and for a host's publishes.
describe.each(WRITE_ADAPTERS)('previous_attributes in delivered events ($name)', (adapter: WriteAdapterFactory) => {
  let h: Harness | undefined
  afterEach(async () => {
    await h?.t.close()
    await h?.receiver.close()
    h = undefined
  })

  async function setup(): Promise<Harness> {
    const receiver = await startReceiver()
    // Real time: the receiver's signature check refuses a timestamp far from its clock.
    const clock = new FakeClock(Date.now())
    const t = await buildWriteApp({ adapter, options: { clock, webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, pollIntervalMs: 20 } } })
    const { secret } = await t.app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['*'] })
    h = { t, clock, receiver, secret, key: await t.keyFor(1) }
    return h
  }

  /**
   * The delivered event of `type` that `where` accepts, verified, with its raw body:
   * deliveries come in no particular order (docs/webhooks.md §4).
   */
  async function delivered(count: number, type: string, where: (payload: Record<string, unknown>) => boolean = () => true): Promise<{ payload: Record<string, unknown>; body: string }> {
    const { receiver, secret } = h as Harness
    const received = await receiver.waitFor(count)
    const events = received.map(({ body, headers }) => ({ payload: verifyWebhook(secret, headers as Record<string, string>, body) as Record<string, unknown>, body }))
    const found = events.find(({ payload }) => payload.type === type && where(payload))
    if (found === undefined) throw new Error(`no ${type} among ${received.length} deliveries`)
    return found
  }

  /** Runs `work` in a transaction `events.publish` accepts on this adapter. */
  function inTransaction(t: WriteTestApp, work: (trx: unknown) => Promise<unknown>): Promise<unknown> {
    const sqlite = t.adapter as Partial<SqliteAdapter>
    return sqlite.transaction === undefined ? t.adapter.writes.transaction((tx) => work(tx)) : sqlite.transaction((trx) => work(trx))
  }

  it('PATCH /v1/todos/:id: data is GET after the change, previous_attributes the changed fields as GET showed them before', async () => {
    const { t, clock, key } = await setup()
    const todo = todosOf(1).find((candidate) => candidate.status === 'open' && candidate.priority !== 'urgent') as TodoRecord
    const before = (await t.get(`/v1/todos/${todo.id}`, key)).json().data
    clock.advance(SECOND)
    const patched = await t.patch(`/v1/todos/${todo.id}`, { title: 'Renamed', priority: 'urgent', status: 'in_progress', notes: before.notes }, key)
    expect(patched.statusCode, patched.body).toBe(200)
    const after = (await t.get(`/v1/todos/${todo.id}`, key)).json().data

    const { payload, body } = await delivered(1, 'todos.updated')
    expect(payload.type).toBe('todos.updated')
    expect(payload.data).toStrictEqual(after)
    // `notes` was sent unchanged: not a change, so not listed.
    const expected = { title: before.title, status: 'open', priority: before.priority, updated_at: before.updated_at }
    expect(payload.previous_attributes).toStrictEqual(expected)
    // Byte for byte: data exactly as GET, then what changed, in the schema's field order.
    expect(body.endsWith(`"data":${JSON.stringify(after)},"previous_attributes":${JSON.stringify(expected)}}`)).toBe(true)
    expect(documentCheck('todos.updated', payload)).toEqual([])
  })

  it('a to-do PATCH that changes only the due date lists due_date with its rendering before (null)', async () => {
    const { t, clock, key } = await setup()
    const todo = todosOf(1).find((candidate) => candidate.due_day === null && candidate.due_at === null && !candidate.due_is_all_day) as TodoRecord
    const before = (await t.get(`/v1/todos/${todo.id}`, key)).json().data
    clock.advance(SECOND)
    expect((await t.patch(`/v1/todos/${todo.id}`, { due_date: '2026-12-01T10:00:00Z' }, key)).statusCode).toBe(200)
    const { payload } = await delivered(1, 'todos.updated')
    expect(payload.previous_attributes).toStrictEqual({ due_date: null, updated_at: before.updated_at })
    expect((payload.data as { due_date: string }).due_date).toBe('2026-12-01T10:00:00.000Z')
  })

  it('deactivate and activate: users.updated with the login flag before', async () => {
    const { t, clock, key } = await setup()
    const id = exclusiveMemberIds(1)[0] as number
    const before = (await t.get(`/v1/users/${id}`, key)).json().data
    clock.advance(SECOND)
    const off = before.active === true ? 'deactivate' : 'activate'
    const on = off === 'deactivate' ? 'activate' : 'deactivate'
    expect((await t.post(`/v1/users/${id}/${off}`, undefined, key)).statusCode).toBe(200)
    const first = await delivered(1, 'users.updated')
    expect(first.payload.previous_attributes).toStrictEqual({ active: before.active, updated_at: before.updated_at })
    const middle = (await t.get(`/v1/users/${id}`, key)).json().data
    clock.advance(SECOND)
    expect((await t.post(`/v1/users/${id}/${on}`, undefined, key)).statusCode).toBe(200)
    const second = await delivered(2, 'users.updated', (payload) => (payload.data as { active: boolean }).active !== middle.active)
    expect(second.payload.previous_attributes).toStrictEqual({ active: middle.active, updated_at: middle.updated_at })
    expect(documentCheck('users.updated', second.payload)).toEqual([])
  })

  it('an accepted invitation: users.updated with invitation_status "pending" before', async () => {
    const { t, clock, key } = await setup()
    const created = await t.post('/v1/users', { email: 'previous.person@example.com', first_name: 'Pre', last_name: 'Vious' }, key)
    expect(created.statusCode).toBe(201)
    const before = created.json().data
    clock.advance(SECOND)
    await t.app.workforceApi.invitations.accept({ companyId: 1, userId: before.id })
    const { payload } = await delivered(2, 'users.updated')
    expect(payload.previous_attributes).toMatchObject({ invitation_status: 'pending', updated_at: before.updated_at })
    const after = (await t.get(`/v1/users/${before.id}`, key)).json().data
    // Exactly the fields whose rendering moved.
    const moved = Object.keys(after).filter((field) => JSON.stringify(after[field]) !== JSON.stringify(before[field]))
    expect(Object.keys(payload.previous_attributes as object)).toEqual(moved)
  })

  it("a host's publish with previous carries previous_attributes; without it, none; previous on a creation is refused", async () => {
    const { t, clock } = await setup()
    const stored = (await t.adapter.storage.todos.get(1, todosOf(1)[0]?.id as number)) as TodoRecord
    const changed = { ...stored, title: 'Changed in the host', updated_at: new Date(clock.now() + SECOND) }
    await inTransaction(t, (trx) => t.app.workforceApi.events.publish(trx, { type: 'todos.updated', companyId: 1, record: changed, previous: stored }))
    const first = await delivered(1, 'todos.updated')
    expect(first.payload.previous_attributes).toStrictEqual({ title: stored.title, updated_at: stored.updated_at.toISOString() })

    await inTransaction(t, (trx) => t.app.workforceApi.events.publish(trx, { type: 'todos.updated', companyId: 1, record: changed }))
    const second = await delivered(2, 'todos.updated', (payload) => payload.previous_attributes === undefined)
    expect(second.body).not.toContain('previous_attributes')
    expect(Object.keys(second.payload)).toEqual(['id', 'type', 'created_at', 'company_id', 'data'])

    const recorded = (await t.events()).length
    const refused = inTransaction(t, (trx) => t.app.workforceApi.events.publish(trx, { type: 'todos.created', companyId: 1, record: changed, previous: stored }))
    await expect(refused).rejects.toThrow(EventPublishError)
    await expect(refused).rejects.toMatchObject({ reason: 'invalid_input' })
    expect(await t.events()).toHaveLength(recorded)
  })
})
