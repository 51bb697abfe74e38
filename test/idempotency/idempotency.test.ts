import type { LightMyRequestResponse as Response } from 'fastify'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { purge } from '../../src/corridor/idempotency.js'
import type { IdempotencyStore } from '../../src/ports/idempotency-store.js'
import { bearer, buildWriteApp, START_MS, WRITE_ADAPTERS, type BuildWriteOptions, type WriteTestApp } from '../helpers/write-app.js'
import {
  exclusiveMemberIds,
  expectError,
  expectInvalid,
  listIds,
  nextUserId,
  nextTodoId,
  person,
  todosOf,
} from '../helpers/seed-facts.js'
import { recordedEvent } from '../helpers/recorded-event.js'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
/** Spec 4.4: stored responses are kept 24 hours. */
const RETENTION_MS = DAY
/** The default lease of an in-flight marker (src/options.ts). */
/** The default lease (docs/decisions.md): short, because the corridor renews it while a request runs. */
const LEASE_MS = 10 * SECOND

const todoBody = (title = 'Call the supplier') => ({ title, list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] })
const userBody = { email: 'replay.me@example.com', first_name: 'Replay', last_name: 'Me' }

/** A replay is the stored response verbatim, plus the replay headers (spec 4.4). */
function expectReplayOf(replay: Response, original: Response): void {
  expect(replay.statusCode).toBe(original.statusCode)
  expect(replay.body).toBe(original.body)
  expect(replay.headers['content-type']).toBe(original.headers['content-type'])
  expect(replay.headers.location).toBe(original.headers.location)
  expect(replay.headers['idempotent-replay']).toBe('true')
  expect(replay.headers['idempotent-replayed']).toBe('true')
}

function expectExecuted(res: Response, status: number): void {
  expect(res.statusCode, res.body).toBe(status)
  expect(res.headers['idempotent-replay']).toBeUndefined()
  expect(res.headers['idempotent-replayed']).toBeUndefined()
}

// Spec 4.4 (idempotent retries) and 7 (409 while in flight).
describe.each(WRITE_ADAPTERS)('idempotent retries ($name)', (factory) => {
  let t: WriteTestApp
  let key: string

  const open = async (options: BuildWriteOptions['options'] = {}) => {
    t = await buildWriteApp({ adapter: factory, options })
    key = await t.keyFor(1, ['all'])
  }
  beforeEach(() => open())
  afterEach(() => t.close())

  const todoCount = async () => (await t.get('/v1/todos?per_page=1', key)).json().pagination.total as number
  const seedTodoCount = todosOf(1).length

  describe('replaying a completed request', () => {
    const inactive = () => exclusiveMemberIds(1).find((id) => !person(id).active) as number
    const active = () => exclusiveMemberIds(1).find((id) => person(id).active) as number
    const routes: Array<[string, (app: WriteTestApp, headers: Record<string, string>) => Promise<Response>, number]> = [
      ['POST /v1/users', (app, h) => app.post('/v1/users', userBody, h), 201],
      ['POST /v1/users/:id/deactivate', (app, h) => app.post(`/v1/users/${active()}/deactivate`, undefined, h), 200],
      ['POST /v1/users/:id/activate', (app, h) => app.post(`/v1/users/${inactive()}/activate`, undefined, h), 200],
      ['POST /v1/todos', (app, h) => app.post('/v1/todos', todoBody(), h), 201],
      ['PATCH /v1/todos/:id', (app, h) => app.patch(`/v1/todos/${todosOf(1)[0]?.id}`, { title: 'Patched once' }, h), 200],
    ]

    it.each(routes)('%s: the first executes; a retry gets the stored response verbatim and runs nothing', async (_route, send, status) => {
      const first = await send(t, bearer(key, 'retry-1'))
      expectExecuted(first, status)
      t.clock.advance(MINUTE)
      const replay = await send(t, bearer(key, 'retry-1'))
      expectReplayOf(replay, first)
      const again = await send(t, bearer(key, 'retry-1'))
      expectReplayOf(again, first)
      expect(await t.events()).toHaveLength(1)
    })

    it('POST /v1/todos retried without a key creates a second to-do; with the key it does not', async () => {
      expectExecuted(await t.post('/v1/todos', todoBody(), bearer(key, 'once')), 201)
      await t.post('/v1/todos', todoBody(), bearer(key, 'once'))
      expect(await todoCount()).toBe(seedTodoCount + 1)
      await t.post('/v1/todos', todoBody(), bearer(key))
      expect(await todoCount()).toBe(seedTodoCount + 2)
    })

    it('a replayed PATCH does not run again after a later change', async () => {
      const id = todosOf(1)[0]?.id as number
      const first = await t.patch(`/v1/todos/${id}`, { title: 'A' }, bearer(key, 'patch-a'))
      expectExecuted(first, 200)
      expect(first.json().data.title).toBe('A')
      t.clock.advance(MINUTE)
      expect((await t.patch(`/v1/todos/${id}`, { title: 'B' }, bearer(key))).statusCode).toBe(200)
      t.clock.advance(MINUTE)

      const retry = await t.patch(`/v1/todos/${id}`, { title: 'A' }, bearer(key, 'patch-a'))
      expectReplayOf(retry, first)
      expect(retry.json().data.title).toBe('A')
      const now = (await t.get(`/v1/todos/${id}`, key)).json().data
      expect(now.title).toBe('B')
      expect(now.updated_at).toBe(new Date(START_MS + MINUTE).toISOString())
      expect((await t.events()).map((e) => e.type)).toEqual(['todos.updated', 'todos.updated'])
    })

    it('a replayed deactivate does not undo a later activate', async () => {
      const id = active()
      expectExecuted(await t.post(`/v1/users/${id}/deactivate`, undefined, bearer(key, 'off')), 200)
      expect((await t.post(`/v1/users/${id}/activate`, undefined, key)).json().data.active).toBe(true)
      const retry = await t.post(`/v1/users/${id}/deactivate`, undefined, bearer(key, 'off'))
      expect(retry.headers['idempotent-replay']).toBe('true')
      expect(retry.json().data.active).toBe(false)
      expect((await t.get(`/v1/users/${id}`, key)).json().data.active).toBe(true)
    })

    it('replays the very same bytes, non-ASCII text included', async () => {
      const body = todoBody('Café ☕ 🚧 Übergabe')
      const first = await t.post('/v1/todos', body, bearer(key, 'bytes'))
      expectExecuted(first, 201)
      const replay = await t.post('/v1/todos', body, bearer(key, 'bytes'))
      expect(replay.rawPayload.equals(first.rawPayload)).toBe(true)
      expect(replay.headers['content-length']).toBe(first.headers['content-length'])
      expect(replay.json().data.title).toBe('Café ☕ 🚧 Übergabe')
    })

    it('treats the same body with its fields in another order as the same request', async () => {
      const first = await t.post('/v1/users', { email: userBody.email, first_name: 'Replay', last_name: 'Me' }, bearer(key, 'order'))
      const retry = await t.post('/v1/users', { last_name: 'Me', first_name: 'Replay', email: userBody.email }, bearer(key, 'order'))
      expectReplayOf(retry, first)
    })

    it('accepts the Bearer scheme in any letter case', async () => {
      const headers = { authorization: `bearer ${key}`, 'idempotency-key': 'lower' }
      const first = await t.post('/v1/todos', todoBody(), headers)
      expectReplayOf(await t.post('/v1/todos', todoBody(), headers), first)
      expect(await todoCount()).toBe(seedTodoCount + 1)
    })
  })

  describe('which requests take part', () => {
    it('ignores Idempotency-Key sent with X-Api-Key: every request executes', async () => {
      const headers = { 'x-api-key': key, 'idempotency-key': 'ignored' }
      const first = await t.post('/v1/todos', todoBody(), headers)
      const second = await t.post('/v1/todos', todoBody(), headers)
      expectExecuted(first, 201)
      expectExecuted(second, 201)
      expect(second.json().data.id).toBe(first.json().data.id + 1)
      // Not even checked: a malformed key is ignored too.
      expectExecuted(await t.post('/v1/todos', todoBody(), { 'x-api-key': key, 'idempotency-key': 'x'.repeat(300) }), 201)
      expect(await todoCount()).toBe(seedTodoCount + 3)
      expect(await t.idempotencyRecords()).toEqual([])
    })

    it('ignores Idempotency-Key on GET', async () => {
      const id = todosOf(1)[0]?.id as number
      for (const idempotencyKey of ['get-key', 'x'.repeat(300)]) {
        const res = await t.get(`/v1/todos/${id}`, bearer(key, idempotencyKey))
        expect(res.statusCode, res.body).toBe(200)
        expect(res.headers['idempotent-replay']).toBeUndefined()
      }
      expect(await t.idempotencyRecords()).toEqual([])
    })

    it('scopes the slot by the Authorization header: another key with the same Idempotency-Key executes', async () => {
      const other = await t.keyFor(1, ['todos:write'])
      const first = await t.post('/v1/todos', todoBody(), bearer(key, 'shared-name'))
      const second = await t.post('/v1/todos', todoBody(), bearer(other, 'shared-name'))
      expectExecuted(first, 201)
      expectExecuted(second, 201)
      expect(second.json().data.id).toBe(first.json().data.id + 1)
      expect(await t.idempotencyRecords()).toHaveLength(2)
    })

    it('never stores the Authorization header or the key itself', async () => {
      await t.post('/v1/todos', todoBody(), bearer(key, 'secret-check'))
      const records = await t.idempotencyRecords()
      expect(records).toHaveLength(1)
      expect(records[0]?.slot).toMatch(/^[0-9a-f]{64}$/)
      expect(JSON.stringify(records)).not.toContain(key)
      expect(JSON.stringify(records)).not.toContain('secret-check')
    })

    it.each([
      ['empty', ''],
      ['256 characters long', 'k'.repeat(256)],
      ['holding a tab', 'tab\tinside'],
      ['holding a non-ASCII character', 'clé'],
    ])('refuses a key that is %s (422 on Idempotency-Key) and runs nothing', async (_case, idempotencyKey) => {
      expectInvalid(await t.post('/v1/todos', todoBody(), bearer(key, idempotencyKey)), ['Idempotency-Key'])
      expect(await todoCount()).toBe(seedTodoCount)
      expect(await t.events()).toEqual([])
      expect(await t.idempotencyRecords()).toEqual([])
    })

    it.each([
      ['255 characters long', 'k'.repeat(255)],
      ['one character', 'k'],
      ['printable ASCII with spaces and symbols', 'a b~!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}'],
    ])('accepts a key that is %s', async (_case, idempotencyKey) => {
      const first = await t.post('/v1/todos', todoBody(), bearer(key, idempotencyKey))
      expectExecuted(first, 201)
      expectReplayOf(await t.post('/v1/todos', todoBody(), bearer(key, idempotencyKey)), first)
    })
  })

  describe('a key reused for a different request', () => {
    it('answers 422 on Idempotency-Key for another body, path or method, runs nothing and keeps the slot', async () => {
      const first = await t.post('/v1/todos', todoBody('original'), bearer(key, 'reused'))
      expectExecuted(first, 201)
      const patched = todosOf(1)[0]?.id as number
      const patchedBefore = (await t.get(`/v1/todos/${patched}`, key)).body

      expectInvalid(await t.post('/v1/todos', todoBody('changed'), bearer(key, 'reused')), ['Idempotency-Key'])
      expectInvalid(await t.patch(`/v1/todos/${patched}`, { title: 'changed' }, bearer(key, 'reused')), ['Idempotency-Key'])
      expectInvalid(await t.post('/v1/users', userBody, bearer(key, 'reused')), ['Idempotency-Key'])

      expect(await todoCount()).toBe(seedTodoCount + 1)
      expect((await t.get(`/v1/todos/${patched}`, key)).body).toBe(patchedBefore)
      expect((await t.get(`/v1/users?email=${encodeURIComponent(userBody.email)}`, key)).json().data).toEqual([])
      expect(await t.events()).toHaveLength(1)
      // The slot still holds the first request.
      expectReplayOf(await t.post('/v1/todos', todoBody('original'), bearer(key, 'reused')), first)
    })
  })

  describe('what is recorded', () => {
    it('records a 422 for a bad body: the retry replays it even once the body would pass', async () => {
      const outsider = exclusiveMemberIds(2)[0] as number
      const body = { title: 'For the newcomer', list_id: listIds(1)[0], assigned_to: outsider }
      const first = await t.post('/v1/todos', body, bearer(key, 'bad-body'))
      expectInvalid(first, ['assigned_to'])
      // The person joins company 1: the same body would now succeed …
      const { email, first_name, last_name } = person(outsider)
      expect((await t.post('/v1/users', { email, first_name, last_name }, key)).statusCode).toBe(201)
      // … but the retry gets the recorded 422 and creates nothing.
      expectReplayOf(await t.post('/v1/todos', body, bearer(key, 'bad-body')), first)
      expect(await todoCount()).toBe(seedTodoCount)
      // A schema failure is recorded too.
      const unknownField = await t.post('/v1/todos', { ...todoBody(), colour: 'red' }, bearer(key, 'schema'))
      expectInvalid(unknownField, ['colour'])
      expectReplayOf(await t.post('/v1/todos', { ...todoBody(), colour: 'red' }, bearer(key, 'schema')), unknownField)
    })

    it('records a 409 for a duplicate user', async () => {
      const member = person(exclusiveMemberIds(1)[0] as number)
      const body = { email: member.email, first_name: 'A', last_name: 'B' }
      const first = await t.post('/v1/users', body, bearer(key, 'dup'))
      expectError(first, 409, 'conflict')
      expectReplayOf(await t.post('/v1/users', body, bearer(key, 'dup')), first)
    })

    it('records a 404', async () => {
      const first = await t.patch('/v1/todos/999999', { title: 'x' }, bearer(key, 'missing'))
      expectError(first, 404, 'not_found')
      expectReplayOf(await t.patch('/v1/todos/999999', { title: 'x' }, bearer(key, 'missing')), first)
    })

    it('does not record a 5xx: the retry executes', async () => {
      t.writes.failNext()
      const failed = await t.post('/v1/todos', todoBody(), bearer(key, 'outage'))
      expectError(failed, 500, 'internal_error')
      expect(failed.json().error.message).toMatch(/^Internal server error \(request .+\)$/)
      expect(await t.idempotencyRecords()).toEqual([])
      expect(await t.events()).toEqual([])

      const retry = await t.post('/v1/todos', todoBody(), bearer(key, 'outage'))
      expectExecuted(retry, 201)
      expect(retry.json().data.id).toBe(nextTodoId())
      expectReplayOf(await t.post('/v1/todos', todoBody(), bearer(key, 'outage')), retry)
      expect(await t.events()).toHaveLength(1)
    })

    it('a failure while storing the response rolls the write back and frees the slot', async () => {
      t.writes.failNextAt('completeIdempotency')
      expectError(await t.post('/v1/todos', todoBody(), bearer(key, 'store-fails')), 500, 'internal_error')
      expect(await todoCount()).toBe(seedTodoCount)
      expect(await t.events()).toEqual([])
      expect(await t.idempotencyRecords()).toEqual([])
      expectExecuted(await t.post('/v1/todos', todoBody(), bearer(key, 'store-fails')), 201)
      expect(await todoCount()).toBe(seedTodoCount + 1)
    })

    it('does not record a 401: once the key is re-enabled, the retry executes', async () => {
      const keyId = t.keyIdOf(key)
      await t.app.workforceApi.keys.disable(keyId)
      expectError(await t.post('/v1/todos', todoBody(), bearer(key, 'disabled')), 401, 'unauthorized')
      await t.app.workforceApi.keys.enable(keyId)
      expectExecuted(await t.post('/v1/todos', todoBody(), bearer(key, 'disabled')), 201)
      expect(await todoCount()).toBe(seedTodoCount + 1)
    })

    it('does not record a 403: once the module is active again, the retry executes', async () => {
      await t.close()
      await open({ moduleCacheTtlMs: 0 })
      await t.adapter.modules.setActive(1, 'todo', false)
      expectError(await t.post('/v1/todos', todoBody(), bearer(key, 'module')), 403, 'forbidden')
      expect(await t.idempotencyRecords()).toEqual([])
      await t.adapter.modules.setActive(1, 'todo', true)
      const retry = await t.post('/v1/todos', todoBody(), bearer(key, 'module'))
      expectExecuted(retry, 201)
      expect(retry.json().data.id).toBe(nextTodoId())
    })

    it('does not record a 403 for a missing scope', async () => {
      const readOnly = await t.keyFor(1, ['todos:read'])
      expectError(await t.post('/v1/todos', todoBody(), bearer(readOnly, 'scope')), 403, 'forbidden')
      expectError(await t.post('/v1/todos', todoBody(), bearer(readOnly, 'scope')), 403, 'forbidden')
      expect(await t.idempotencyRecords()).toEqual([])
    })
  })

  describe('a retry while the first request is in flight', () => {
    it('answers 409 with Retry-After: 1; once the first finishes, the retry replays it', async () => {
      const held = t.writes.holdNext()
      const pending = t.post('/v1/todos', todoBody(), bearer(key, 'slow'))
      await held.arrived

      const during = await t.post('/v1/todos', todoBody(), bearer(key, 'slow'))
      expectError(during, 409, 'conflict')
      expect(during.headers['retry-after']).toBe('1')
      expect(await t.events()).toEqual([])

      // A different request under the same key is refused as such even now, and leaves the slot alone.
      expectInvalid(await t.post('/v1/todos', todoBody('other'), bearer(key, 'slow')), ['Idempotency-Key'])

      held.release()
      const first = await pending
      expectExecuted(first, 201)
      expectReplayOf(await t.post('/v1/todos', todoBody(), bearer(key, 'slow')), first)
      expect(await todoCount()).toBe(seedTodoCount + 1)
      expect(await t.events()).toHaveLength(1)
    })

    it('after the lease runs out, a retry executes and the late first request is rolled back (409)', async () => {
      const held = t.writes.holdNext()
      const pending = t.post('/v1/todos', todoBody(), bearer(key, 'stuck'))
      await held.arrived

      t.clock.advance(LEASE_MS - 1)
      expectError(await t.post('/v1/todos', todoBody(), bearer(key, 'stuck')), 409, 'conflict')
      t.clock.advance(2)
      const takeover = await t.post('/v1/todos', todoBody(), bearer(key, 'stuck'))
      expectExecuted(takeover, 201)
      expect(takeover.json().data.id).toBe(nextTodoId())

      held.release()
      expectError(await pending, 409, 'conflict')

      // Exactly one side effect: the late request's to-do and event were rolled back.
      expect(await todoCount()).toBe(seedTodoCount + 1)
      expect((await t.get(`/v1/todos/${nextTodoId() + 1}`, key)).statusCode).toBe(404)
      expect(await t.events()).toStrictEqual([
        recordedEvent('todos.created', 1, nextTodoId(), new Date(START_MS + LEASE_MS + 1)),
      ])
      expectReplayOf(await t.post('/v1/todos', todoBody(), bearer(key, 'stuck')), takeover)
    })

    it('a request that outlived its lease still completes when no retry took over, and is replayed', async () => {
      const held = t.writes.holdNext()
      const pending = t.post('/v1/todos', todoBody(), bearer(key, 'late'))
      await held.arrived
      t.clock.advance(LEASE_MS + 1)
      held.release()
      const late = await pending
      expectExecuted(late, 201)
      expectReplayOf(await t.post('/v1/todos', todoBody(), bearer(key, 'late')), late)
      expect(await t.events()).toHaveLength(1)
    })

    it('renews the lease while the request runs: a slow request keeps its slot past the first lease', async () => {
      // A lease of 600 ms renewed every 200 ms (real time); the fake clock says how late it is.
      await t.close()
      await open({ idempotencyOptions: { leaseMs: 600 } })
      const held = t.writes.holdNext()
      const pending = t.post('/v1/todos', todoBody(), bearer(key, 'slow-but-alive'))
      await held.arrived
      t.clock.advance(500)
      // Real time for at least two heartbeats, each renewing to (fake) now + 600 ms.
      await new Promise((resolve) => setTimeout(resolve, 500))
      t.clock.advance(500) // 1,000 ms after the start: the first lease (600 ms) is long gone
      expectError(await t.post('/v1/todos', todoBody(), bearer(key, 'slow-but-alive')), 409, 'conflict')
      held.release()
      const first = await pending
      expectExecuted(first, 201)
      expectReplayOf(await t.post('/v1/todos', todoBody(), bearer(key, 'slow-but-alive')), first)
      expect(await todoCount()).toBe(seedTodoCount + 1)
    })

    it('honours idempotencyOptions.leaseMs', async () => {
      await t.close()
      await open({ idempotencyOptions: { leaseMs: 5 * SECOND } })
      const held = t.writes.holdNext()
      const pending = t.post('/v1/users', userBody, bearer(key, 'short-lease'))
      await held.arrived
      t.clock.advance(5 * SECOND + 1)
      const takeover = await t.post('/v1/users', userBody, bearer(key, 'short-lease'))
      expectExecuted(takeover, 201)
      held.release()
      expectError(await pending, 409, 'conflict')
      expect((await t.events()).map((e) => [e.type, e.resource_id])).toEqual([['users.created', nextUserId()]])
    })
  })

  describe('retention', () => {
    it('replays for 24 hours; after that the same key executes as a new request', async () => {
      const first = await t.post('/v1/todos', todoBody(), bearer(key, 'daily'))
      expectExecuted(first, 201)
      t.clock.advance(RETENTION_MS - 1)
      expectReplayOf(await t.post('/v1/todos', todoBody(), bearer(key, 'daily')), first)

      t.clock.advance(2)
      const fresh = await t.post('/v1/todos', todoBody(), bearer(key, 'daily'))
      expectExecuted(fresh, 201)
      expect(fresh.json().data.id).toBe(first.json().data.id + 1)
      expect(await todoCount()).toBe(seedTodoCount + 2)
      expectReplayOf(await t.post('/v1/todos', todoBody(), bearer(key, 'daily')), fresh)
    })

    it('honours idempotencyOptions.retentionMs', async () => {
      await t.close()
      await open({ idempotencyOptions: { retentionMs: 10 * SECOND } })
      const first = await t.post('/v1/todos', todoBody(), bearer(key, 'short'))
      t.clock.advance(10 * SECOND + 1)
      expectExecuted(await t.post('/v1/todos', todoBody(), bearer(key, 'short')), 201)
      expect(first.statusCode).toBe(201)
      expect(await todoCount()).toBe(seedTodoCount + 2)
    })

    it('purge deletes expired records in batches and keeps live ones', async () => {
      for (let i = 0; i < 5; i++) expectExecuted(await t.post('/v1/todos', todoBody(`old ${i}`), bearer(key, `old-${i}`)), 201)
      t.clock.advance(HOUR)
      const live = await t.post('/v1/todos', todoBody('live'), bearer(key, 'live'))
      t.clock.advance(RETENTION_MS - HOUR + 1)
      expect(await t.idempotencyRecords()).toHaveLength(6)

      const limits: number[] = []
      const deleted: number[] = []
      const store = t.adapter.idempotency
      const spy: IdempotencyStore = {
        begin: (request) => store.begin(request),
        complete: (slot, token, response, now) => store.complete(slot, token, response, now),
        renew: (slot, token, leaseUntil) => store.renew(slot, token, leaseUntil),
        release: (slot, token) => store.release(slot, token),
        async purgeExpired(before, limit) {
          expect(before.getTime()).toBe(t.clock.now() - RETENTION_MS)
          limits.push(limit)
          const count = await store.purgeExpired(before, limit)
          deleted.push(count)
          return count
        },
      }
      expect(await purge(t.app, t.idempotencySettings({ store: spy, purgeBatch: 2 }))).toBe(5)
      expect(limits).toEqual([2, 2, 2])
      expect(deleted).toEqual([2, 2, 1])

      const left = await t.idempotencyRecords()
      expect(left.map((r) => [r.state, r.created_at.getTime()])).toEqual([['completed', START_MS + HOUR]])
      expectReplayOf(await t.post('/v1/todos', todoBody('live'), bearer(key, 'live')), live)
      // A purged key is free again.
      expectExecuted(await t.post('/v1/todos', todoBody('old 0'), bearer(key, 'old-0')), 201)

      // Nothing left to purge: one short batch.
      limits.length = 0
      expect(await purge(t.app, t.idempotencySettings({ store: spy, purgeBatch: 2 }))).toBe(0)
      expect(limits).toEqual([2])
    })

    it('purges on its own every idempotencyOptions.purgeIntervalMs', async () => {
      await t.close()
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
      try {
        // The plugin gets a store that reports each purge it starts (synchronously, on the timer).
        const purges: Array<Promise<number>> = []
        let store: IdempotencyStore | undefined
        const reporting: IdempotencyStore = {
          begin: (request) => (store as IdempotencyStore).begin(request),
          complete: (slot, token, response, now) => (store as IdempotencyStore).complete(slot, token, response, now),
          renew: (slot, token, leaseUntil) => (store as IdempotencyStore).renew(slot, token, leaseUntil),
          release: (slot, token) => (store as IdempotencyStore).release(slot, token),
          purgeExpired(before, limit) {
            const result = (store as IdempotencyStore).purgeExpired(before, limit)
            purges.push(result)
            return result
          },
        }
        t = await buildWriteApp({
          adapter: factory,
          options: { idempotency: reporting, idempotencyOptions: { purgeIntervalMs: 5 * MINUTE, retentionMs: HOUR } },
        })
        store = t.adapter.idempotency
        key = await t.keyFor(1, ['all'])
        expectExecuted(await t.post('/v1/todos', todoBody(), bearer(key, 'timer')), 201)
        t.clock.advance(HOUR + 1)

        vi.advanceTimersByTime(5 * MINUTE - 1)
        expect(purges).toHaveLength(0)
        vi.advanceTimersByTime(1)
        expect(purges).toHaveLength(1)
        expect(await purges[0]).toBe(1)
        expect(await t.idempotencyRecords()).toEqual([])
        vi.advanceTimersByTime(5 * MINUTE)
        expect(purges).toHaveLength(2)
        expect(await purges[1]).toBe(0)
      } finally {
        vi.useRealTimers()
      }
    })

    it('purge stops after an exact multiple of the batch with one empty batch', async () => {
      for (let i = 0; i < 4; i++) await t.post('/v1/todos', todoBody(`old ${i}`), bearer(key, `even-${i}`))
      t.clock.advance(RETENTION_MS + 1)
      expect(await purge(t.app, t.idempotencySettings({ purgeBatch: 2 }))).toBe(4)
      expect(await t.idempotencyRecords()).toEqual([])
    })
  })
})
