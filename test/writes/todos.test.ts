import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TODO_STATUSES, type TodoStatus } from '../../src/ports/records.js'
import { buildWriteApp, PREFIX, START_MS, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'
import {
  exclusiveMemberIds,
  expectError,
  expectInvalid,
  listIds,
  memberIds,
  nextTodoId,
  roleIds,
  sharedMemberIds,
  userIdIn,
  todoIdsWithStatus,
  todosOf,
} from '../helpers/seed-facts.js'
import { recordedEvent } from '../helpers/recorded-event.js'

const MINUTE = 60_000
const KIB = 1024

const list1 = () => listIds(1)[0] as number
const member1 = () => exclusiveMemberIds(1)[0] as number
const role1 = () => roleIds(1)[0] as number
const minimalTodo = (overrides: Record<string, unknown> = {}) => ({ title: 'Inspect crane', list_id: list1(), assigned_to: member1(), ...overrides })

/** Finished states only reopen (docs/decisions.md); every other change between different states is allowed. */
const transitionAllowed = (from: TodoStatus, to: TodoStatus) => (from === 'done' || from === 'cancelled' ? to === 'open' : true)

// Spec 2.2, 4.1 (POST /v1/todos, PATCH /v1/todos/{id} and their rules), 6 (todos.created / todos.updated), 7.
describe.each(WRITE_ADAPTERS)('to-do writes ($name)', (factory) => {
  let t: WriteTestApp
  let key: string

  beforeEach(async () => {
    t = await buildWriteApp({ adapter: factory })
    key = await t.keyFor(1, ['todos:read', 'todos:write'])
  })
  afterEach(() => t.close())

  describe('POST /v1/todos', () => {
    it('creates an open to-do with defaults: 201, Location, the to-do, a todos.created event', async () => {
      const id = nextTodoId()
      const res = await t.post('/v1/todos', minimalTodo(), key)
      expect(res.statusCode, res.body).toBe(201)
      expect(res.headers.location).toBe(`${PREFIX}/v1/todos/${id}`)
      const created = {
        id,
        title: 'Inspect crane',
        notes: null,
        status: 'open',
        priority: 'normal',
        important: false,
        due_date: null,
        due_is_all_day: false,
        list_id: list1(),
        assigned_to: member1(),
        assignee_group_id: null,
        claimed_by: null,
        checklist: [],
        tag_ids: [],
        source: null,
        created_at: t.clock.iso(),
        updated_at: t.clock.iso(),
      }
      expect(res.json()).toStrictEqual({ data: created })
      expect((await t.get(`/v1/todos/${id}`, key)).json()).toStrictEqual({ data: created })
      expect(await t.events()).toStrictEqual([recordedEvent('todos.created', 1, id, new Date(START_MS), created)])
    })

    it('writes every field given', async () => {
      const [, list] = listIds(1)
      const res = await t.post(
        '/v1/todos',
        {
          title: 'Order bricks',
          list_id: list,
          assigned_to: member1(),
          assignee_group_id: role1(),
          notes: 'Two pallets',
          priority: 'urgent',
          important: true,
          due_date: '2026-03-20',
          due_is_all_day: true,
        },
        key,
      )
      expect(res.statusCode, res.body).toBe(201)
      expect(res.json().data).toMatchObject({
        title: 'Order bricks',
        list_id: list,
        assigned_to: member1(),
        assignee_group_id: role1(),
        notes: 'Two pallets',
        priority: 'urgent',
        important: true,
        due_date: '2026-03-20',
        due_is_all_day: true,
        status: 'open',
      })
    })

    it('offers a to-do to a role alone (no assignee)', async () => {
      const res = await t.post('/v1/todos', { title: 'Anyone', list_id: list1(), assignee_group_id: role1() }, key)
      expect(res.statusCode, res.body).toBe(201)
      expect(res.json().data).toMatchObject({ assigned_to: null, assignee_group_id: role1() })
    })

    it('needs an assignee or a role (422)', async () => {
      const details = expectError(await t.post('/v1/todos', { title: 'Nobody', list_id: list1() }, key), 422, 'validation_error')
      expect(details.length).toBeGreaterThan(0)
      for (const d of details) expect(['assigned_to', 'assignee_group_id']).toContain(d.field)
      expect(await t.events()).toEqual([])
    })

    it.each([
      ['with an offset', '2026-03-20T00:30:00+01:00', '2026-03-19T23:30:00.000Z'],
      ['in UTC', '2026-03-20T10:15:00Z', '2026-03-20T10:15:00.000Z'],
      ['with fractional seconds', '2026-03-20T10:15:30.5-04:30', '2026-03-20T14:45:30.500Z'],
    ])('renders a timed due date given %s back as a UTC instant with milliseconds and Z', async (_case, given, rendered) => {
      const res = await t.post('/v1/todos', minimalTodo({ due_date: given, due_is_all_day: false }), key)
      expect(res.statusCode, res.body).toBe(201)
      expect(res.json().data).toMatchObject({ due_date: rendered, due_is_all_day: false })
      // due_is_all_day defaults to false: an instant then needs no flag.
      const implicit = await t.post('/v1/todos', minimalTodo({ due_date: given }), key)
      expect(implicit.json().data).toMatchObject({ due_date: rendered, due_is_all_day: false })
    })

    it('keeps an all-day due date as the day entered', async () => {
      const res = await t.post('/v1/todos', minimalTodo({ due_date: '2026-12-31', due_is_all_day: true }), key)
      expect(res.json().data).toMatchObject({ due_date: '2026-12-31', due_is_all_day: true })
    })

    it.each([
      ['an impossible all-day day', '2026-02-30', true],
      ['an instant for an all-day to-do', '2026-03-20T10:00:00Z', true],
      ['a day for a timed to-do', '2026-03-20', false],
      ['an instant without offset', '2026-03-20T10:00:00', false],
      ['an impossible instant', '2026-02-30T10:00:00Z', false],
      ['free text', 'tomorrow', false],
    ])('refuses %s (422 on due_date)', async (_case, dueDate, allDay) => {
      expectInvalid(await t.post('/v1/todos', minimalTodo({ due_date: dueDate, due_is_all_day: allDay }), key), ['due_date'])
      expect(await t.events()).toEqual([])
    })

    it('accepts a title of 1 to 500 characters and notes up to 10,000 (or null)', async () => {
      expect((await t.post('/v1/todos', minimalTodo({ title: 'x' }), key)).statusCode).toBe(201)
      expect((await t.post('/v1/todos', minimalTodo({ title: 'é'.repeat(500) }), key)).statusCode).toBe(201)
      const notes = await t.post('/v1/todos', minimalTodo({ notes: 'n'.repeat(10_000) }), key)
      expect(notes.statusCode).toBe(201)
      expect(notes.json().data.notes).toHaveLength(10_000)
      expect((await t.post('/v1/todos', minimalTodo({ notes: null }), key)).json().data.notes).toBeNull()
    })

    it.each([
      ['a missing title', { list_id: 1, assigned_to: 1 }, ['title']],
      ['an empty title', minimalTodo({ title: '' }), ['title']],
      ['a blank title', minimalTodo({ title: ' \t ' }), ['title']],
      ['a 501-character title', minimalTodo({ title: 't'.repeat(501) }), ['title']],
      ['notes over 10,000 characters', minimalTodo({ notes: 'n'.repeat(10_001) }), ['notes']],
      ['a missing list', { title: 'x', assigned_to: 1 }, ['list_id']],
      ['an unknown priority', minimalTodo({ priority: 'asap' }), ['priority']],
      ['a status (not writable on create)', minimalTodo({ status: 'done' }), ['status']],
      ['unknown fields', minimalTodo({ colour: 'red', tags: [] }), ['colour', 'tags']],
      [
        'wrong types',
        { title: 5, list_id: '1', assigned_to: 1.5, important: 'yes', due_is_all_day: 1, notes: 7 },
        ['title', 'list_id', 'assigned_to', 'important', 'due_is_all_day', 'notes'],
      ],
    ])('answers 422 naming each field for %s', async (_case, body, fields) => {
      expectInvalid(await t.post('/v1/todos', body, key), fields)
      expect(await t.events()).toEqual([])
    })

    it('refuses a list, member or role of another company or unknown, naming each field', async () => {
      const res = await t.post(
        '/v1/todos',
        { title: 'x', list_id: listIds(2)[0], assigned_to: exclusiveMemberIds(2)[0], assignee_group_id: roleIds(2)[0] },
        key,
      )
      expectInvalid(res, ['list_id', 'assigned_to', 'assignee_group_id'])
      expectInvalid(await t.post('/v1/todos', { title: 'x', list_id: 999_999, assigned_to: 999_999 }, key), ['list_id', 'assigned_to'])
      expect(await t.events()).toEqual([])
      expect((await t.get(`/v1/todos/${nextTodoId()}`, key)).statusCode).toBe(404)
    })

    it('assigns a person who belongs to several companies in each of them', async () => {
      // The person's user id in company 2 (user ids are per company, issue 21).
      const shared = userIdIn(2, sharedMemberIds(1, 2)[0] as number) as number
      const key2 = await t.keyFor(2, ['todos:write'])
      const res = await t.post('/v1/todos', { title: 'Shared', list_id: listIds(2)[0], assigned_to: shared }, key2)
      expect(res.statusCode, res.body).toBe(201)
      expect(res.json().data.assigned_to).toBe(shared)
    })

    it('gives new to-dos monotonically increasing ids', async () => {
      const ids: number[] = []
      for (let i = 0; i < 3; i++) {
        t.clock.advance(1)
        ids.push((await t.post('/v1/todos', minimalTodo({ title: `n${i}` }), key)).json().data.id)
      }
      expect(ids).toEqual([nextTodoId(), nextTodoId() + 1, nextTodoId() + 2])
      expect((await t.events()).map((e) => [e.resource_id, e.occurred_at.getTime()])).toEqual([
        [ids[0], START_MS + 1],
        [ids[1], START_MS + 2],
        [ids[2], START_MS + 3],
      ])
    })

    it('needs todos:write and the To-Do module (403)', async () => {
      expectError(await t.post('/v1/todos', minimalTodo(), await t.keyFor(1, ['todos:read'])), 403, 'forbidden')
      expectError(await t.post('/v1/todos', minimalTodo(), await t.keyFor(3, ['all'])), 403, 'forbidden')
      expect((await t.post('/v1/todos', minimalTodo(), await t.keyFor(1, ['todos:write']))).statusCode).toBe(201)
    })
  })

  describe('atomicity', () => {
    it('a POST that fails after inserting leaves neither the to-do nor its event (500)', async () => {
      t.writes.failNextAt('recordEvent')
      expectError(await t.post('/v1/todos', minimalTodo(), key), 500, 'internal_error')
      expect((await t.get('/v1/todos?per_page=1', key)).json().pagination.total).toBe(todosOf(1).length)
      expect(await t.events()).toEqual([])
      // The next to-do gets the next id as if nothing had happened.
      const next = await t.post('/v1/todos', minimalTodo(), key)
      expect(next.json().data.id).toBeGreaterThanOrEqual(nextTodoId())
      expect((await t.events()).map((e) => e.resource_id)).toEqual([next.json().data.id])
    })

    it('a PATCH that fails after updating leaves the to-do as it was (500)', async () => {
      const id = todosOf(1)[0]?.id as number
      const before = (await t.get(`/v1/todos/${id}`, key)).body
      t.clock.advance(MINUTE)
      t.writes.failNextAt('recordEvent')
      expectError(await t.patch(`/v1/todos/${id}`, { title: 'Lost', notes: null, important: true }, key), 500, 'internal_error')
      expect((await t.get(`/v1/todos/${id}`, key)).body).toBe(before)
      expect(await t.events()).toEqual([])
    })
  })

  describe('request bodies', () => {
    const raw = (apiKey: string, method: 'POST' | 'PATCH', url: string, payload: string, contentType: string) =>
      t.app.inject({ method, url: `${PREFIX}${url}`, headers: { 'x-api-key': apiKey, 'content-type': contentType }, payload })

    // Regression: a 64 KiB limit refused valid to-dos whose client escaped every character.
    it('accepts the largest valid to-do even with every character escaped as \\uXXXX', async () => {
      const all = await t.keyFor(1, ['all'])
      const notes = '😀'.repeat(10_000) // the 10,000-character maximum (code points), 20,000 UTF-16 units
      const escaped = JSON.stringify({ title: 'é'.repeat(500), list_id: list1(), assigned_to: member1(), notes }).replace(
        /[\u0080-\uffff]/g,
        (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
      )
      expect(escaped.length).toBeGreaterThan(64 * KIB)
      const res = await raw(all, 'POST', '/v1/todos', escaped, 'application/json')
      expect(res.statusCode, res.body).toBe(201)
      expect(res.json().data.notes).toBe(notes)
    })


    it.each([
      ['POST', '/v1/todos'],
      ['PATCH', '/v1/todos/1'],
      ['POST', '/v1/users'],
    ] as const)('%s %s: malformed JSON 400, non-JSON 415, over 256 KiB 413 — all in the envelope', async (method, url) => {
      const all = await t.keyFor(1, ['all'])
      expectError(await raw(all, method, url, '{"title": "x",', 'application/json'), 400, 'bad_request')
      expectError(await raw(all, method, url, 'title=x', 'text/plain'), 415, 'unsupported_media_type')
      expectError(await raw(all, method, url, 'title=x', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type')
      const big = JSON.stringify({ title: 'x', list_id: list1(), assigned_to: member1(), notes: 'n'.repeat(256 * KIB) })
      expectError(await raw(all, method, url, big, 'application/json'), 413, 'payload_too_large')
      expectError(await raw(all, method, url, '', 'application/json'), 400, 'bad_request')
      expectInvalid(await raw(all, method, url, 'null', 'application/json'), ['body'])
      expect(await t.events()).toEqual([])
    })
  })

  describe('PATCH /v1/todos/:id', () => {
    const seedTodo = (predicate: (todo: ReturnType<typeof todosOf>[number]) => boolean) => {
      const found = todosOf(1).find(predicate)
      if (found === undefined) throw new Error('no such seed to-do')
      return found
    }
    const getData = async (id: number) => (await t.get(`/v1/todos/${id}`, key)).json().data

    it('writes only the fields provided, bumps updated_at and records todos.updated', async () => {
      const id = todosOf(1)[0]?.id as number
      const before = await getData(id)
      t.clock.advance(MINUTE)
      const res = await t.patch(`/v1/todos/${id}`, { title: 'Renamed' }, key)
      expect(res.statusCode, res.body).toBe(200)
      const after = { ...before, title: 'Renamed', updated_at: t.clock.iso() }
      expect(res.json()).toStrictEqual({ data: after })
      expect(await getData(id)).toStrictEqual(after)
      expect(await t.events()).toStrictEqual([
        recordedEvent('todos.updated', 1, id, new Date(START_MS + MINUTE), after, { title: before.title, updated_at: before.updated_at }),
      ])
    })

    it('writes several fields at once', async () => {
      const todo = seedTodo((candidate) => candidate.priority !== 'urgent' && !candidate.important)
      const [, , list] = listIds(1)
      const member = memberIds(1).filter((m) => m !== todo.assigned_to)[0]
      const role = roleIds(1).filter((r) => r !== todo.assignee_group_id)[0]
      const before = await getData(todo.id)
      const patch = { priority: 'urgent', important: true, list_id: list, assigned_to: member, assignee_group_id: role, notes: 'new notes' }
      const res = await t.patch(`/v1/todos/${todo.id}`, patch, key)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().data).toStrictEqual({ ...before, ...patch, updated_at: t.clock.iso() })
    })

    it('clears notes and due_date with an explicit null', async () => {
      const todo = seedTodo((c) => c.notes !== null && c.due_at !== null && !c.due_is_all_day)
      const before = await getData(todo.id)
      t.clock.advance(MINUTE)
      const res = await t.patch(`/v1/todos/${todo.id}`, { notes: null, due_date: null }, key)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().data).toStrictEqual({ ...before, notes: null, due_date: null, updated_at: t.clock.iso() })
    })

    it.each(['title', 'status', 'priority', 'important', 'due_is_all_day', 'list_id', 'assigned_to', 'assignee_group_id'])(
      'refuses null for %s (422 "must not be null")',
      async (field) => {
        const id = todosOf(1)[0]?.id as number
        const before = await getData(id)
        const details = expectInvalid(await t.patch(`/v1/todos/${id}`, { [field]: null }, key), [field])
        expect(details).toContainEqual({ field, message: 'must not be null' })
        expect(await getData(id)).toStrictEqual(before)
      },
    )

    it('refuses an empty patch (422)', async () => {
      const id = todosOf(1)[0]?.id as number
      expectError(await t.patch(`/v1/todos/${id}`, {}, key), 422, 'validation_error')
      expect(await t.events()).toEqual([])
    })

    it('follows the status transitions: finished to-dos only reopen to open', async () => {
      const used = new Map<TodoStatus, number[]>(TODO_STATUSES.map((s) => [s, todoIdsWithStatus(1, s)]))
      let events = 0
      for (const from of TODO_STATUSES) {
        for (const to of TODO_STATUSES) {
          if (from === to) continue
          const id = used.get(from)?.shift()
          if (id === undefined) throw new Error(`seed has too few ${from} to-dos`)
          const before = await getData(id)
          expect(before.status).toBe(from)
          t.clock.advance(1)
          const res = await t.patch(`/v1/todos/${id}`, { status: to }, key)
          if (transitionAllowed(from, to)) {
            expect(res.statusCode, `${from} → ${to}: ${res.body}`).toBe(200)
            expect(res.json().data).toStrictEqual({ ...before, status: to, updated_at: t.clock.iso() })
            events++
          } else {
            expectInvalid(res, ['status'])
            expect(await getData(id), `${from} → ${to}`).toStrictEqual(before)
          }
        }
      }
      expect(await t.events()).toHaveLength(events)
      expect(events).toBe(14)
    })

    it('reopens a done to-do and can finish it again', async () => {
      const id = todoIdsWithStatus(1, 'done')[0] as number
      expect((await t.patch(`/v1/todos/${id}`, { status: 'open' }, key)).json().data.status).toBe('open')
      expect((await t.patch(`/v1/todos/${id}`, { status: 'in_progress' }, key)).json().data.status).toBe('in_progress')
      expect((await t.patch(`/v1/todos/${id}`, { status: 'done' }, key)).json().data.status).toBe('done')
    })

    it('needs a due_date when due_is_all_day changes on a to-do that has one', async () => {
      const timed = seedTodo((c) => !c.due_is_all_day && c.due_at !== null)
      const before = await getData(timed.id)
      expectInvalid(await t.patch(`/v1/todos/${timed.id}`, { due_is_all_day: true }, key), ['due_date'])
      expect(await getData(timed.id)).toStrictEqual(before)

      t.clock.advance(MINUTE)
      const res = await t.patch(`/v1/todos/${timed.id}`, { due_is_all_day: true, due_date: '2026-04-01' }, key)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().data).toStrictEqual({ ...before, due_is_all_day: true, due_date: '2026-04-01', updated_at: t.clock.iso() })

      const back = await t.patch(`/v1/todos/${timed.id}`, { due_is_all_day: false, due_date: '2026-04-01T09:00:00+02:00' }, key)
      expect(back.json().data).toMatchObject({ due_is_all_day: false, due_date: '2026-04-01T07:00:00.000Z' })
    })

    it('flips due_is_all_day alone on a to-do without a due date', async () => {
      const undated = seedTodo((c) => c.due_at === null && c.due_day === null)
      const before = await getData(undated.id)
      t.clock.advance(MINUTE)
      const res = await t.patch(`/v1/todos/${undated.id}`, { due_is_all_day: !undated.due_is_all_day }, key)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().data).toStrictEqual({ ...before, due_is_all_day: !undated.due_is_all_day, updated_at: t.clock.iso() })
    })

    it('checks a new due date against the to-do’s own kind', async () => {
      const allDay = seedTodo((c) => c.due_is_all_day && c.due_day !== null)
      const timed = seedTodo((c) => !c.due_is_all_day && c.due_at !== null)
      expectInvalid(await t.patch(`/v1/todos/${allDay.id}`, { due_date: '2026-02-29' }, key), ['due_date'])
      expectInvalid(await t.patch(`/v1/todos/${allDay.id}`, { due_date: '2026-05-01T10:00:00Z' }, key), ['due_date'])
      expectInvalid(await t.patch(`/v1/todos/${timed.id}`, { due_date: '2026-05-01' }, key), ['due_date'])
      expect((await t.patch(`/v1/todos/${allDay.id}`, { due_date: '2028-02-29' }, key)).json().data.due_date).toBe('2028-02-29')
      expect((await t.patch(`/v1/todos/${timed.id}`, { due_date: '2026-05-01T10:00:00-07:00' }, key)).json().data.due_date).toBe(
        '2026-05-01T17:00:00.000Z',
      )
    })

    it('changes nothing for a patch equal to the current values: 200, same updated_at, no event', async () => {
      const todo = seedTodo((c) => !c.due_is_all_day && c.due_at !== null && c.notes !== null)
      const before = await t.get(`/v1/todos/${todo.id}`, key)
      t.clock.advance(MINUTE)
      // The same instant written with another offset is the same due date.
      const dueElsewhere = new Date((todo.due_at as Date).getTime()).toISOString().replace('Z', '+00:00')
      const same = {
        title: todo.title,
        notes: todo.notes,
        status: todo.status,
        priority: todo.priority,
        important: todo.important,
        due_date: dueElsewhere,
        list_id: todo.list_id,
      }
      const res = await t.patch(`/v1/todos/${todo.id}`, same, key)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json()).toStrictEqual(before.json())
      expect((await t.get(`/v1/todos/${todo.id}`, key)).body).toBe(before.body)
      expect(await t.events()).toEqual([])
    })

    it('refuses unknown fields and wrong types, naming each, and changes nothing', async () => {
      const id = todosOf(1)[0]?.id as number
      const before = await getData(id)
      expectInvalid(
        await t.patch(`/v1/todos/${id}`, { title: 1, status: 'finished', important: 'no', list_id: -1, claimed_by: 3, checklist: [] }, key),
        ['title', 'status', 'important', 'list_id', 'claimed_by', 'checklist'],
      )
      expectInvalid(await t.patch(`/v1/todos/${id}`, { title: '   ' }, key), ['title'])
      expectInvalid(await t.patch(`/v1/todos/${id}`, { notes: 'n'.repeat(10_001) }, key), ['notes'])
      expect(await getData(id)).toStrictEqual(before)
      expect(await t.events()).toEqual([])
    })

    it('refuses another company’s list, member or role, naming each field, and changes nothing', async () => {
      const id = todosOf(1)[0]?.id as number
      const before = await getData(id)
      const res = await t.patch(
        `/v1/todos/${id}`,
        { title: 'would change', list_id: listIds(2)[0], assigned_to: exclusiveMemberIds(2)[0], assignee_group_id: roleIds(2)[0] },
        key,
      )
      expectInvalid(res, ['list_id', 'assigned_to', 'assignee_group_id'])
      expect(await getData(id)).toStrictEqual(before)
      expect(await t.events()).toEqual([])
    })

    it('is a 404 for an unknown, malformed or foreign id', async () => {
      expectError(await t.patch('/v1/todos/999999', { title: 'x' }, key), 404, 'not_found')
      expectError(await t.patch('/v1/todos/abc', { title: 'x' }, key), 404, 'not_found')
      expectError(await t.patch(`/v1/todos/${todosOf(2)[0]?.id}`, { title: 'x' }, key), 404, 'not_found')
      expect(await t.events()).toEqual([])
    })

    it('needs todos:write (403)', async () => {
      const id = todosOf(1)[0]?.id as number
      expectError(await t.patch(`/v1/todos/${id}`, { title: 'x' }, await t.keyFor(1, ['todos:read'])), 403, 'forbidden')
      expect((await getData(id)).title).toBe(todosOf(1)[0]?.title)
    })
  })
})
