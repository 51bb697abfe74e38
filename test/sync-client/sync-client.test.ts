import { mkdtempSync, rmSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { sqliteCodec } from '../../adapters/sqlite/index.js'
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../examples/sync-client/client.js'
import { Mirror } from '../../examples/sync-client/mirror.js'
import { LIST_RESOURCES } from '../../examples/sync-client/resources.js'
import type { RetryNotice } from '../../examples/sync-client/retry.js'
import { summary } from '../../examples/sync-client/cli.js'
import { CURSOR_EXPIRED_NOTICE, syncMirror, type SyncReport } from '../../examples/sync-client/sync.js'
import { createTodo as postTodo, updateTodo, type Todo, type TodoChange } from '../../examples/sync-client/writes.js'
import type { ShiftRecord } from '../../src/ports/records.js'
import { generateDataset } from '../../src/seed/generate.js'
import { PREFIX } from '../helpers/build.js'
import { getCompany, listAll, startApiServer, type ApiServer } from './api-server.js'

/** 120 records of every list resource: two pages of 100 each, so paging is exercised at the real page size. */
const SCALE = 120
const DAY_MS = 24 * 3_600_000
const dataset = generateDataset({ scale: SCALE })
const listId = dataset.todoLists.find((list) => list.company_id === 1)?.id as number
const memberId = dataset.memberships.find((m) => m.company_id === 1 && m.invitation_status === 'accepted')?.user_id as number
const seededTodoId = dataset.todos.find((todo) => todo.company_id === 1)?.id as number
const recordsOf = (report: SyncReport, resource: string) => report.resources.find((r) => r.resource === resource)

describe('the sync client against the API over SQLite', () => {
  let server: ApiServer | undefined
  let directory: string
  const mirrors: Mirror[] = []

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'sync-client-'))
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    for (const mirror of mirrors.splice(0)) mirror.close()
    await server?.close()
    server = undefined
    rmSync(directory, { recursive: true, force: true })
  })

  const openMirror = (name = 'mirror.db') => {
    const mirror = Mirror.open(join(directory, name))
    mirrors.push(mirror)
    return mirror
  }
  const clientOf = (s: ApiServer, options: Partial<ApiClientOptions> = {}): ApiClient =>
    createApiClient({ baseUrl: s.baseUrl, key: s.key, retry: { sleep: async () => {} }, ...options })

  /** A change the API cannot make, made by the host in its own transaction, its event published in the same one. */
  const host = (s: ApiServer) => ({
    async updateShift(id: number, change: Partial<ShiftRecord>): Promise<void> {
      // Read before the transaction: the adapter holds its own reads back while one is open.
      const record = { ...((await s.adapter.storage.shifts.get(1, id)) as ShiftRecord), ...change, updated_at: new Date(s.t.clock.now()) }
      await s.adapter.transaction(async (trx) => {
        await trx.updateTable('wfa_shifts').set({ status: record.status, break_minutes: record.break_minutes, updated_at: sqliteCodec.instant(record.updated_at) }).where('id', '=', id).execute()
        await s.t.app.workforceApi.events.publish(trx, { type: 'shifts.updated', companyId: 1, record })
      })
    },
    /** A copy of shift `templateId` under a new id. */
    async createShift(templateId: number): Promise<number> {
      const record = (await s.adapter.storage.shifts.get(1, templateId)) as ShiftRecord
      return s.adapter.transaction(async (trx) => {
        const template = await trx.selectFrom('wfa_shifts').selectAll().where('id', '=', templateId).executeTakeFirstOrThrow()
        const { max } = await trx.selectFrom('wfa_shifts').select((eb) => eb.fn.max('id').as('max')).executeTakeFirstOrThrow()
        const id = Number(max) + 1
        const now = sqliteCodec.instant(new Date(s.t.clock.now()))
        await trx.insertInto('wfa_shifts').values({ ...template, id, status: 'scheduled', created_at: now, updated_at: now }).execute()
        const created: ShiftRecord = { ...record, id, status: 'scheduled', created_at: new Date(s.t.clock.now()), updated_at: new Date(s.t.clock.now()) }
        await s.t.app.workforceApi.events.publish(trx, { type: 'shifts.created', companyId: 1, record: created })
        return id
      })
    },
    /** Deletes the row and publishes `shifts.deleted` with the record as it was. */
    async deleteShift(id: number): Promise<void> {
      const record = (await s.adapter.storage.shifts.get(1, id)) as ShiftRecord
      await s.adapter.transaction(async (trx) => {
        await trx.deleteFrom('wfa_shifts').where('id', '=', id).execute()
        await s.t.app.workforceApi.events.publish(trx, { type: 'shifts.deleted', companyId: 1, record })
      })
    },
  })

  /** For every resource, the ids and each record's JSON in the mirror are what a fresh complete listing returns. */
  async function expectMirrorEqualsApi(s: ApiServer, mirror: Mirror): Promise<void> {
    for (const { name } of LIST_RESOURCES) {
      const listing = await listAll(s, `/v1/${name}`)
      expect(listing.records.length, name).toBe(listing.total)
      expect(mirror.ids(name), name).toEqual(listing.records.map((r) => r.id))
      expect(mirror.records(name), name).toEqual(listing.records)
    }
    expect(mirror.records('company')).toEqual([await getCompany(s)])
  }

  it('the first sync takes the cursor before any list, reads every list by keyset, and equals the API', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const urls: URL[] = []
    const client = clientOf(s, { fetch: (request) => (urls.push(new URL(request.url)), fetch(request)) })
    const mirror = openMirror()

    const first = await syncMirror(client, mirror)

    expect(urls[0]?.pathname).toBe('/api/public/v1/events/cursor')
    const lists = urls.filter((url) => LIST_RESOURCES.some(({ name }) => url.pathname.endsWith(`/v1/${name}`)))
    expect(lists).toHaveLength(LIST_RESOURCES.length * 2)
    for (const url of lists) {
      expect(url.searchParams.has('page'), url.href).toBe(false)
      expect(url.searchParams.has('updated_since'), url.href).toBe(false)
      expect(url.searchParams.get('starting_after'), url.href).toMatch(/^\d+$/)
    }
    expect(urls.at(-1)?.pathname).toBe('/api/public/v1/events')
    expect(first.fullSync).toBe('first')
    for (const report of first.resources) {
      expect(report.mode, report.resource).toBe('list')
      expect(report.fetched, report.resource).toBe(report.resource === 'company' ? 1 : SCALE)
      expect(report.pages, report.resource).toBe(report.resource === 'company' ? 1 : 2)
    }
    // The cursor, the company, two pages of each list, one page of the (empty) feed.
    expect(first.requests).toBe(2 + LIST_RESOURCES.length * 2 + 1)
    expect(first.feed).toMatchObject({ pages: 1, events: 0 })
    expect(mirror.feedState()).toEqual({ cursor: first.feed.cursor, resources: ['company', ...LIST_RESOURCES.map((r) => r.name)], listed: true })
    await expectMirrorEqualsApi(s, mirror)
  })

  it('creates, updates and a host-published deletion: the next sync reads only the feed (and the roles) and converges, the deletion applied', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const client = clientOf(s)
    const mirror = openMirror()
    await syncMirror(client, mirror)
    const shiftsAfterFull = mirror.records('shifts')
    const [changedShift, deletedShift, lastShift] = [shiftsAfterFull[0]?.id as number, shiftsAfterFull[5]?.id as number, shiftsAfterFull.at(-1)?.id as number]

    // A minute later: two writes through the client's idempotent path…
    s.t.clock.advance(60_000)
    const created = await createTodoThrough(client, 'Inspect the tower crane')
    const patched = await updateTodoThrough(client, seededTodoId, { title: 'Renamed by the sync test', priority: 'urgent' })
    // …and changes the host makes in its own database, each published with its event.
    await host(s).updateShift(changedShift, { status: 'cancelled', break_minutes: 45 })
    const newShift = await host(s).createShift(lastShift)
    await host(s).deleteShift(deletedShift)
    // Roles have no events: a role the host deletes is seen gone by the next whole read.
    const deletedRole = mirror.ids('roles')[4] as number
    await s.adapter.transaction((trx) => trx.deleteFrom('wfa_roles').where('id', '=', deletedRole).execute())
    s.t.clock.advance(1_000)

    const second = await syncMirror(client, mirror)

    expect(second.fullSync).toBeNull()
    for (const report of second.resources) {
      if (report.resource === 'roles') expect(report, 'roles have no events: read whole').toMatchObject({ mode: 'list', fetched: SCALE - 1, removed: 1 })
      else if (report.resource === 'company') expect(report).toMatchObject({ mode: 'feed', fetched: 1 })
      else expect(report, report.resource).toMatchObject({ mode: 'feed', fetched: 0, pages: 0 })
    }
    expect(recordsOf(second, 'shifts')).toMatchObject({ events: 3, changed: 2, removed: 1 })
    expect(recordsOf(second, 'todos')).toMatchObject({ events: 2, changed: 2, removed: 0 })
    expect(second.feed.events).toBe(5)
    await expectMirrorEqualsApi(s, mirror)
    expect(mirror.ids('shifts')).not.toContain(deletedShift)
    expect(mirror.ids('roles')).not.toContain(deletedRole)
    expect(mirror.ids('shifts')).toContain(newShift)
    expect(mirror.records('todos').find((todo) => todo.id === created.id)).toEqual(created)
    expect(mirror.records('todos').find((todo) => todo.id === patched.id)).toEqual(patched)

    // Nothing new: one feed request, nothing changed.
    const idle = await syncMirror(client, mirror)
    expect(idle.feed).toMatchObject({ pages: 1, events: 0 })
    expect(idle.resources.reduce((sum, r) => sum + r.changed + r.removed, 0)).toBe(0)
  })

  /** Every response the server sends, seen from its side (the HTTP server under the app): what was asked, with which tag, and the status. */
  function serverResponses(s: ApiServer) {
    const seen: Array<{ url: string; status: number; ifNoneMatch: string | null }> = []
    s.t.app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const ifNoneMatch = request.headers['if-none-match'] ?? null
      response.on('finish', () => seen.push({ url: (request.url ?? '').slice(PREFIX.length), status: response.statusCode, ifNoneMatch }))
    })
    return seen
  }

  it('a second sync with nothing changed asks again with If-None-Match: the company, the roles pages and the idle feed are 304s that spend no budget', async () => {
    server = await startApiServer({ dataset })
    const s = server
    // The budget each answer says is left (Fastify writes its headers past ServerResponse.getHeader).
    const budget: number[] = []
    const client = clientOf(s, {
      async fetch(request) {
        const response = await fetch(request)
        budget.push(Number(response.headers.get('x-ratelimit-remaining')))
        return response
      },
    })
    const mirror = openMirror()
    const seen = serverResponses(s)

    const first = await syncMirror(client, mirror)

    expect(first.notModified).toBe(0)
    expect(seen.every((response) => response.status === 200 && response.ifNoneMatch === null)).toBe(true)
    // One kept answer per question asked again: the company, the two roles pages, the idle feed head; no other list's pages.
    const rolesAfter = mirror.ids('roles')[99] as number
    const feedQuestion = seen.at(-1)?.url as string
    expect(feedQuestion).toMatch(/^\/v1\/events\?after=/)
    expect(mirror.keptQuestions()).toEqual([
      '/v1/company',
      feedQuestion,
      '/v1/roles?starting_after=0&per_page=100',
      `/v1/roles?starting_after=${rolesAfter}&per_page=100`,
    ])
    const budgetBefore = budget.at(-1) as number
    expect(budgetBefore).toBe(budget[0] as number - (first.requests - 1))
    seen.length = 0
    budget.length = 0

    const second = await syncMirror(client, mirror)

    // The server answered each of the four 304, to the tag it gave, and took nothing from the budget.
    expect(seen.map(({ url, status }) => ({ url, status }))).toEqual([
      { url: '/v1/company', status: 304 },
      { url: '/v1/roles?starting_after=0&per_page=100', status: 304 },
      { url: `/v1/roles?starting_after=${rolesAfter}&per_page=100`, status: 304 },
      { url: feedQuestion, status: 304 },
    ])
    for (const response of seen) expect(response.ifNoneMatch, response.url).toMatch(/^"[A-Za-z0-9_-]{22}"$/)
    expect(budget).toEqual([budgetBefore, budgetBefore, budgetBefore, budgetBefore])
    expect(second).toMatchObject({ fullSync: null, notModified: 4, requests: 4, retries: 0, feed: { pages: 1, events: 0, cursor: first.feed.cursor } })
    // The kept bodies were the answers: the roles read whole as before, nothing changed.
    expect(recordsOf(second, 'roles')).toMatchObject({ mode: 'list', fetched: SCALE, pages: 2, changed: 0, removed: 0 })
    expect(recordsOf(second, 'company')).toMatchObject({ fetched: 1, changed: 0 })
    expect(summary(second, 'mirror.db')).toMatch(/, 4 requests \(0 retries, 4 not modified\), /)
    // The next request that is not a 304 is the first to spend budget since the first sync.
    const plain = await fetch(`${s.baseUrl}/v1/company`, { headers: { authorization: `Bearer ${s.key}` } })
    expect(Number(plain.headers.get('x-ratelimit-remaining'))).toBe(budgetBefore - 1)
    await expectMirrorEqualsApi(s, mirror)
  })

  it('a role changed or deleted by the host: its roles page is a 200 again and the mirror follows; the kept answers stay one per question', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const client = clientOf(s)
    const mirror = openMirror()
    await syncMirror(client, mirror)
    const [firstRole, secondRole] = mirror.ids('roles') as [number, number]
    const seen = serverResponses(s)

    // Roles have no events: the host changes one with SQL, and only the next read of its page can tell.
    s.t.clock.advance(60_000)
    await s.adapter.db
      .updateTable('wfa_roles')
      .set({ name: 'Renamed by the host', updated_at: sqliteCodec.instant(new Date(s.t.clock.now())) })
      .where('id', '=', firstRole)
      .execute()

    const renamed = await syncMirror(client, mirror)

    const rolesPages = seen.filter((response) => response.url.startsWith('/v1/roles?'))
    expect(rolesPages.map((response) => response.status)).toEqual([200, 304])
    expect(rolesPages[0]?.ifNoneMatch).not.toBeNull()
    expect(renamed.notModified).toBe(3)
    expect(recordsOf(renamed, 'roles')).toMatchObject({ fetched: SCALE, changed: 1, removed: 0 })
    expect(mirror.records('roles')[0]).toMatchObject({ id: firstRole, name: 'Renamed by the host' })
    await expectMirrorEqualsApi(s, mirror)

    // A deletion moves where the first page ends: the second page is another question, its old answer forgotten.
    await s.adapter.transaction((trx) => trx.deleteFrom('wfa_roles').where('id', '=', secondRole).execute())
    seen.length = 0

    const deleted = await syncMirror(client, mirror)

    expect(seen.filter((response) => response.url.startsWith('/v1/roles?')).map((response) => response.status)).toEqual([200, 200])
    expect(deleted.notModified).toBe(2)
    expect(recordsOf(deleted, 'roles')).toMatchObject({ fetched: SCALE - 1, removed: 1 })
    expect(mirror.ids('roles')).not.toContain(secondRole)
    const roleQuestions = mirror.keptQuestions().filter((question) => question.startsWith('/v1/roles?'))
    expect(roleQuestions).toEqual(['/v1/roles?starting_after=0&per_page=100', `/v1/roles?starting_after=${mirror.ids('roles')[99]}&per_page=100`])
    expect(mirror.keptQuestions()).toHaveLength(4)
    await expectMirrorEqualsApi(s, mirror)
  })

  it('the feed is asked again only at its idle head: after events the next poll is a 200 at the new cursor, then 304s', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const client = clientOf(s)
    const mirror = openMirror()
    await syncMirror(client, mirror)
    const seen = serverResponses(s)
    const feedPolls = () => seen.filter((response) => response.url.startsWith('/v1/events?')).map(({ url, status, ifNoneMatch }) => ({ url, status, sent: ifNoneMatch !== null }))
    const idleHead = mirror.keptQuestions().find((question) => question.startsWith('/v1/events?')) as string

    const todo = await createTodoThrough(client, 'Seen through the feed')
    const moved = await syncMirror(client, mirror)
    // The answer that moved the cursor on will not be asked for again: neither it nor the old head is kept.
    expect(mirror.keptQuestions().filter((question) => question.startsWith('/v1/events?'))).toEqual([])
    const next = await syncMirror(client, mirror)
    const still = await syncMirror(client, mirror)

    const newHead = `/v1/events?${new URLSearchParams({ after: moved.feed.cursor, types: new URL(idleHead, 'http://x').searchParams.get('types') as string, limit: '500' })}`
    expect(moved.feed.cursor).not.toBe(new URL(idleHead, 'http://x').searchParams.get('after'))
    // The old head answered with the event (its tag no longer matches); the new head is asked plainly once, then again with its tag.
    expect(feedPolls()).toEqual([
      { url: idleHead, status: 200, sent: true },
      { url: newHead, status: 200, sent: false },
      { url: newHead, status: 304, sent: true },
    ])
    // The company and both roles pages are 304s throughout.
    expect([moved.notModified, next.notModified, still.notModified]).toEqual([3, 3, 4])
    expect(mirror.records('todos').find((record) => record.id === todo.id)).toEqual(todo)
    expect(mirror.keptQuestions().filter((question) => question.startsWith('/v1/events?'))).toEqual([newHead])
    await expectMirrorEqualsApi(s, mirror)
  })

  it('a 410 cursor_expired: the client says it must re-sync from scratch, does so, and converges, a deletion whose event is gone included', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const client = clientOf(s)
    const mirror = openMirror()
    await syncMirror(client, mirror)
    const deletedShift = mirror.ids('shifts')[7] as number
    await host(s).deleteShift(deletedShift)
    await createTodoThrough(client, 'Old news')
    s.t.clock.advance(40 * DAY_MS)
    await createTodoThrough(client, 'Fresh news')
    // The events before 30 days ago are purged: the stored cursor now points into a gap.
    expect(await s.adapter.webhooks.purgeFinished(new Date(s.t.clock.now() - 30 * DAY_MS), 100)).toBe(2)

    const said: string[] = []
    const report = await syncMirror(client, mirror, { log: (line) => said.push(line) })

    expect(said).toEqual([CURSOR_EXPIRED_NOTICE])
    expect(CURSOR_EXPIRED_NOTICE).toMatch(/must be re-synced from scratch/)
    expect(report.fullSync).toBe('expired')
    expect(recordsOf(report, 'shifts')).toMatchObject({ mode: 'list', removed: 1 })
    expect(mirror.ids('shifts')).not.toContain(deletedShift)
    await expectMirrorEqualsApi(s, mirror)
    expect(mirror.feedState()?.cursor).toBe(report.feed.cursor)
    // The fresh cursor is followed from then on.
    expect((await syncMirror(client, mirror)).fullSync).toBeNull()
  })

  it('a crash after applying a feed page but before saving its cursor: the next run reads that page again and converges', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const client = clientOf(s)
    const mirror = openMirror()
    await syncMirror(client, mirror)
    const shifts = mirror.ids('shifts')
    // Five events: pages [One, delete 1], [cancel 2, Two], [delete 3].
    await createTodoThrough(client, 'One')
    await host(s).deleteShift(shifts[1] as number)
    await host(s).updateShift(shifts[2] as number, { status: 'cancelled' })
    const two = await createTodoThrough(client, 'Two')
    await host(s).deleteShift(shifts[3] as number)

    // Pages of two events; the process dies once the second page is applied, before its cursor is stored.
    const save = mirror.saveCursor.bind(mirror)
    let saves = 0
    const crash = vi.spyOn(mirror, 'saveCursor').mockImplementation((cursor) => {
      saves += 1
      if (saves === 2) throw new Error('killed')
      save(cursor)
    })
    await expect(syncMirror(client, mirror, { feedLimit: 2 })).rejects.toThrow('killed')
    // The second page is in the mirror, the stored cursor still before it.
    expect(mirror.ids('todos')).toContain(two.id)
    expect(mirror.ids('shifts')).toContain(shifts[3])
    crash.mockRestore()

    const resumed = await syncMirror(client, mirror, { feedLimit: 2 })

    // The first page's cursor was stored: the run resumed after it, the second page applied again.
    expect(resumed.fullSync).toBeNull()
    expect(resumed.feed).toMatchObject({ events: 3, pages: 2 })
    expect(mirror.ids('shifts')).not.toContain(shifts[1])
    expect(mirror.ids('shifts')).not.toContain(shifts[3])
    await expectMirrorEqualsApi(s, mirror)
  })

  it('a full read that fails half-way resumes at its next page, and then follows the feed from the cursor taken before it', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const mirror = openMirror()
    let broken = true
    const failing = clientOf(s, {
      async fetch(request) {
        const url = new URL(request.url)
        if (broken && url.pathname.endsWith('/v1/shifts') && url.searchParams.get('starting_after') !== '0') {
          return Response.json({ error: { code: 'bad_request', message: 'Injected', status: 400 } }, { status: 400 })
        }
        return fetch(request)
      },
    })
    await expect(syncMirror(failing, mirror)).rejects.toMatchObject({ name: 'ApiError', status: 400 })
    expect(mirror.ids('shifts')).toHaveLength(100)
    expect(mirror.feedState()?.listed).toBe(false)
    // Meanwhile, the first page's records change.
    const first = mirror.ids('shifts')[0] as number
    await host(s).updateShift(first, { break_minutes: 50 })
    broken = false

    const resumed = await syncMirror(failing, mirror)

    expect(resumed.fullSync).toBe('resumed')
    expect(recordsOf(resumed, 'shifts')).toMatchObject({ mode: 'list', pages: 1, fetched: SCALE - 100, events: 1 })
    expect(recordsOf(resumed, 'users')).toMatchObject({ mode: 'feed', fetched: 0 })
    expect(recordsOf(resumed, 'todos')).toMatchObject({ mode: 'list', fetched: SCALE })
    await expectMirrorEqualsApi(s, mirror)
  })

  it('waits out a 429 for the Retry-After the server sent, and completes the sync', async () => {
    server = await startApiServer({ dataset, options: { rateLimit: { max: 3, timeWindow: 1_000 } } })
    const s = server
    const notices: RetryNotice[] = []
    const client = createApiClient({ baseUrl: s.baseUrl, key: s.key, retry: { onRetry: (notice) => notices.push(notice) } })
    const mirror = openMirror()

    // The cursor, the company, three pages of roles and the feed: six requests against a budget of three a second.
    const report = await syncMirror(client, mirror, { perPage: 50, resources: ['roles'] })

    expect(report.requests).toBe(2 + 3 + 1 + notices.length)
    expect(report.retries).toBe(notices.length)
    expect(notices.length).toBeGreaterThanOrEqual(1)
    for (const notice of notices) {
      expect(notice.status).toBe(429)
      expect(notice.retryAfter).toMatch(/^[1-9]\d*$/)
      expect(notice.delayMs).toBe(Number(notice.retryAfter) * 1000)
    }
    expect(report.elapsedMs).toBeGreaterThanOrEqual(notices.reduce((sum, n) => sum + n.delayMs, 0) - 50)
    const verifier = await s.t.keyFor(1, ['roles:read'])
    expect(mirror.ids('roles')).toEqual((await listAll(s, '/v1/roles', verifier)).records.map((r) => r.id))
  })

  it('a POST whose response was lost is retried with the same Idempotency-Key and creates one to-do', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const attempts: Array<{ key: string | null; status: number | 'lost' }> = []
    let lose = true
    const client = clientOf(s, {
      async fetch(request) {
        const key = request.headers.get('idempotency-key')
        const response = await fetch(request)
        if (request.method === 'POST' && lose) {
          lose = false
          await response.arrayBuffer()
          attempts.push({ key, status: 'lost' })
          throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) })
        }
        attempts.push({ key, status: response.status })
        return response
      },
    })
    const before = (await listAll(s, '/v1/todos')).total

    const result = await createTodo(client, 'Lost and found')

    expect(attempts).toEqual([
      { key: result.idempotencyKey, status: 'lost' },
      { key: result.idempotencyKey, status: 201 },
    ])
    expect(result.replayed).toBe(true)
    const after = await listAll(s, '/v1/todos')
    expect(after.total).toBe(before + 1)
    expect(after.records.filter((todo) => (todo as unknown as { title: string }).title === 'Lost and found')).toEqual([result.record])
  })

  it('a retry that finds the first attempt still in flight waits the 409 Retry-After, then gets the first answer', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const held = s.t.writes.holdNext()
    let original: Promise<Response> | undefined
    const statuses: Array<number | 'lost'> = []
    const sleeps: number[] = []
    const client = clientOf(s, {
      async fetch(request) {
        if (original === undefined) {
          // The first attempt reaches the server and hangs there; the client gives up on it.
          original = fetch(request)
          await held.arrived
          statuses.push('lost')
          throw new TypeError('fetch failed')
        }
        const response = await fetch(request)
        statuses.push(response.status)
        return response
      },
      retry: {
        async sleep(ms) {
          sleeps.push(ms)
          if (statuses.at(-1) !== 409) return
          // While the client waits out the 409, the first attempt finishes.
          held.release()
          await (await original)?.arrayBuffer()
        },
      },
    })
    const before = (await listAll(s, '/v1/todos')).total

    const result = await createTodo(client, 'Only once')

    expect(statuses).toEqual(['lost', 409, 201])
    expect(sleeps[1]).toBe(1_000)
    expect(result.replayed).toBe(true)
    expect((await listAll(s, '/v1/todos')).total).toBe(before + 1)
  })

  it('a write that failed with a 5xx is sent again with the same key and applied once', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const attempts: Array<{ key: string | null; status: number }> = []
    const client = clientOf(s, {
      async fetch(request) {
        const response = await fetch(request)
        attempts.push({ key: request.headers.get('idempotency-key'), status: response.status })
        return response
      },
    })
    s.t.writes.failNext()

    const result = await updateTodo(client.api, seededTodoId, { notes: null })

    expect(attempts).toEqual([
      { key: result.idempotencyKey, status: 500 },
      { key: result.idempotencyKey, status: 200 },
    ])
    expect(result.replayed).toBe(false)
    expect(result.record.notes).toBeNull()
    expect((await s.t.events()).filter((e) => e.type === 'todos.updated' && e.resource_id === seededTodoId)).toHaveLength(1)
  })

  it('never retries another 4xx: a refused to-do is one request and an ApiError', async () => {
    server = await startApiServer({ dataset })
    const client = clientOf(server)
    await expect(createTodoThrough(client, 'Nowhere', { list_id: 999_999 })).rejects.toMatchObject({ name: 'ApiError', status: 422, code: 'validation_error' })
    expect(client.stats).toEqual({ requests: 1, retries: 0 })
  })
})

const createTodo = (client: ApiClient, title: string, extra: { list_id?: number } = {}) =>
  postTodo(client.api, { title, list_id: extra.list_id ?? listId, assigned_to: memberId })

const createTodoThrough = async (client: ApiClient, title: string, extra: { list_id?: number } = {}): Promise<Todo> =>
  (await createTodo(client, title, extra)).record

const updateTodoThrough = async (client: ApiClient, id: number, change: TodoChange): Promise<Todo> => (await updateTodo(client.api, id, change)).record
