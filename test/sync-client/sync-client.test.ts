import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { sqliteCodec } from '../../adapters/sqlite/index.js'
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../examples/sync-client/client.js'
import { Mirror } from '../../examples/sync-client/mirror.js'
import { LIST_RESOURCES, type ListResourceName } from '../../examples/sync-client/resources.js'
import type { RetryNotice } from '../../examples/sync-client/retry.js'
import { DEFAULT_OVERLAP_MS, syncMirror, type SyncReport } from '../../examples/sync-client/sync.js'
import { createTodo as postTodo, updateTodo, type Todo, type TodoChange } from '../../examples/sync-client/writes.js'
import { generateDataset } from '../../src/seed/generate.js'
import { START_MS } from '../helpers/write-app.js'
import { getCompany, listAll, startApiServer, type ApiServer } from './api-server.js'

/** 120 records of every list resource: two pages of 100 each, so paging is exercised at the real page size. */
const SCALE = 120
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
  /** The client reads the same fake clock as the server (plus `skewMs`): sync starts are deterministic. */
  const clockOf = (s: ApiServer, skewMs = 0) => () => s.t.clock.now() + skewMs
  /** Runs `work` in a write transaction on the server's database: a change the API itself cannot make. */
  const outOfBand = (s: ApiServer, work: Parameters<ApiServer['adapter']['transaction']>[0]) => s.adapter.transaction(work)

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

  it('a full sync, then writes and out-of-band changes, then an incremental sync: the mirror equals the API record for record', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const client = clientOf(s)
    const mirror = openMirror()

    const full = await syncMirror(client, mirror, { now: clockOf(s) })
    for (const report of full.resources) {
      expect(report.mode, report.resource).toBe('full')
      expect(report.fetched, report.resource).toBe(report.resource === 'company' ? 1 : SCALE)
      expect(report.pages, report.resource).toBe(report.resource === 'company' ? 1 : 2)
    }
    expect(full.requests).toBe(1 + LIST_RESOURCES.length * 2)
    await expectMirrorEqualsApi(s, mirror)
    const shiftsAfterFull = mirror.records('shifts')

    // A minute later: two writes through the client's idempotent path…
    s.t.clock.advance(60_000)
    const created = await createTodoThrough(client, 'Inspect the tower crane')
    const patched = await updateTodoThrough(client, seededTodoId, { title: 'Renamed by the sync test', priority: 'urgent' })
    expect(patched.updated_at).toBe(s.t.clock.iso())
    // …and changes the API cannot write, made by the host in its own database.
    const changedAt = sqliteCodec.instant(new Date(s.t.clock.now()))
    const [firstShift, lastShift] = [shiftsAfterFull[0]?.id as number, shiftsAfterFull.at(-1)?.id as number]
    const employeeId = mirror.ids('employees')[3] as number
    const newShiftId = await outOfBand(s, async (trx) => {
      await trx.updateTable('wfa_shifts').set({ status: 'cancelled', break_minutes: 45, updated_at: changedAt }).where('id', '=', firstShift).execute()
      await trx.updateTable('wfa_employees').set({ job_title: 'Crane operator', updated_at: changedAt }).where('id', '=', employeeId).execute()
      const template = await trx.selectFrom('wfa_shifts').selectAll().where('id', '=', lastShift).executeTakeFirstOrThrow()
      const { max } = await trx.selectFrom('wfa_shifts').select((eb) => eb.fn.max('id').as('max')).executeTakeFirstOrThrow()
      const id = Number(max) + 1
      await trx.insertInto('wfa_shifts').values({ ...template, id, status: 'scheduled', created_at: changedAt, updated_at: changedAt }).execute()
      return id
    })
    s.t.clock.advance(1_000)

    const incremental = await syncMirror(client, mirror, { now: clockOf(s) })

    const since = new Date(START_MS - DEFAULT_OVERLAP_MS).toISOString()
    const expected: Record<ListResourceName, number> = { users: 0, employees: 1, roles: SCALE, projects: 0, shifts: 2, absences: 0, expenses: 0, todos: 2 }
    for (const { name, incremental: filtered } of LIST_RESOURCES) {
      const report = recordsOf(incremental, name)
      expect(report?.mode, name).toBe(filtered ? 'incremental' : 'full')
      expect(report?.updatedSince, name).toBe(filtered ? since : null)
      expect(report?.fetched, name).toBe(expected[name])
    }
    // It read the changes, not the data set: the company and 5 changed records, besides the roles (no filter).
    const fetched = (report: SyncReport) => report.resources.filter((r) => r.resource !== 'roles').reduce((sum, r) => sum + r.fetched, 0)
    expect(fetched(incremental)).toBe(1 + 5)
    expect(fetched(full)).toBe(1 + SCALE * (LIST_RESOURCES.length - 1))

    await expectMirrorEqualsApi(s, mirror)
    // Not vacuously: the mirror's shifts moved with the server's.
    expect(mirror.records('shifts')).not.toEqual(shiftsAfterFull)
    expect(mirror.ids('shifts')).toContain(newShiftId)
    expect(mirror.records('todos').find((todo) => todo.id === created.id)).toEqual(created)
  })

  it('the overlap catches a write stamped before the previous sync started and a client clock running ahead; without it both are missed', async () => {
    server = await startApiServer({ dataset })
    const s = server
    // The client's clock runs 3 s ahead of the server's.
    const now = clockOf(s, 3_000)
    const withOverlap = openMirror('overlap.db')
    const withoutOverlap = openMirror('no-overlap.db')
    await syncMirror(clientOf(s), withOverlap, { now })
    await syncMirror(clientOf(s), withoutOverlap, { now, overlapMs: 0 })

    const [projectId, employeeId] = [withOverlap.ids('projects')[0] as number, withOverlap.ids('employees')[0] as number]
    await outOfBand(s, async (trx) => {
      // Stamped 2 s before the sync started, committed after it read the projects.
      await trx.updateTable('wfa_projects').set({ name: 'Late commit', updated_at: sqliteCodec.instant(new Date(START_MS - 2_000)) }).where('id', '=', projectId).execute()
      // Written 1 s after the sync, by the server's clock: before the start the client stored.
      await trx.updateTable('wfa_employees').set({ job_title: 'Skewed', updated_at: sqliteCodec.instant(new Date(START_MS + 1_000)) }).where('id', '=', employeeId).execute()
    })
    s.t.clock.advance(10_000)

    await syncMirror(clientOf(s), withOverlap, { now })
    await syncMirror(clientOf(s), withoutOverlap, { now, overlapMs: 0 })

    const project = (m: Mirror) => m.records('projects').find((r) => r.id === projectId) as unknown as { name: string }
    const employee = (m: Mirror) => m.records('employees').find((r) => r.id === employeeId) as unknown as { job_title: string }
    expect(project(withOverlap).name).toBe('Late commit')
    expect(employee(withOverlap).job_title).toBe('Skewed')
    await expectMirrorEqualsApi(s, withOverlap)
    expect(project(withoutOverlap).name).not.toBe('Late commit')
    expect(employee(withoutOverlap).job_title).not.toBe('Skewed')
  })

  it('an incremental sync cannot see a deletion; a full re-sync drops the row, and keeps a row a shifting page skipped', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const mirror = openMirror()
    await syncMirror(clientOf(s), mirror, { now: clockOf(s) })
    const [deleted, skipped] = [mirror.ids('shifts')[5] as number, mirror.ids('shifts')[9] as number]
    await outOfBand(s, (trx) => trx.deleteFrom('wfa_shifts').where('id', '=', deleted).execute())
    s.t.clock.advance(10_000)

    await syncMirror(clientOf(s), mirror, { now: clockOf(s) })
    expect(mirror.ids('shifts')).toContain(deleted)

    // The listing of this re-sync leaves `skipped` out, as a page that shifted under a
    // concurrent deletion would: the full sync must check it by id rather than drop it.
    const hiding = clientOf(s, { fetch: hideFromLists(skipped) })
    const resync = await syncMirror(hiding, mirror, { now: clockOf(s), full: true, resources: ['shifts'] })
    expect(recordsOf(resync, 'shifts')).toMatchObject({ mode: 'full', removed: 1 })
    expect(mirror.ids('shifts')).not.toContain(deleted)
    expect(mirror.ids('shifts')).toContain(skipped)
    await expectMirrorEqualsApi(s, mirror)
  })

  it('URL-encodes a + offset in updated_since, which the API then reads as the same instant', async () => {
    server = await startApiServer({ dataset })
    const s = server
    const urls: string[] = []
    const client = clientOf(s, { fetch: (request) => (urls.push(request.url), fetch(request)) })
    const todos = LIST_RESOURCES.find((r) => r.name === 'todos')
    if (todos === undefined) throw new Error('no todos resource')
    // The middle of the seed's to-dos by updated_at, so the filter keeps some and drops some.
    const stamps = (await listAll(s, '/v1/todos')).records.map((r) => r.updated_at).sort()
    const instant = new Date(stamps[Math.floor(stamps.length / 2)] as string)
    const offset = `${new Date(instant.getTime() + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`

    const withOffset = await todos.list(client.api, { page: 1, per_page: 100, updated_since: offset })
    const withZ = await todos.list(client.api, { page: 1, per_page: 100, updated_since: instant.toISOString() })

    const query = new URL(urls[0] as string).search
    expect(query).toContain(`updated_since=${offset.slice(0, 19).replaceAll(':', '%3A')}%2B02%3A00`)
    expect(query).not.toContain('+')
    expect(withOffset.pagination.total).toBeGreaterThan(0)
    expect(withOffset.pagination.total).toBeLessThan(stamps.length)
    expect(withOffset.data.map((r) => r.id)).toEqual(withZ.data.map((r) => r.id))
  })

  it('waits out a 429 for the Retry-After the server sent, and completes the sync', async () => {
    server = await startApiServer({ dataset, options: { rateLimit: { max: 3, timeWindow: 1_000 } } })
    const s = server
    const notices: RetryNotice[] = []
    const client = createApiClient({ baseUrl: s.baseUrl, key: s.key, retry: { onRetry: (notice) => notices.push(notice) } })
    const mirror = openMirror()

    // The company and three pages of roles: four requests against a budget of three a second.
    const report = await syncMirror(client, mirror, { now: clockOf(s), perPage: 50, resources: ['roles'] })

    expect(report.requests).toBe(1 + 3 + notices.length)
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

/** A fetch that removes record `id` from every list page it passes on (not from lookups by id). */
function hideFromLists(id: number): (request: Request) => Promise<Response> {
  return async (request) => {
    const response = await fetch(request)
    if (!/\/v1\/[a-z]+$/.test(new URL(request.url).pathname) || response.status !== 200) return response
    const body = (await response.json()) as { data: unknown }
    if (Array.isArray(body.data)) body.data = body.data.filter((record: { id: number }) => record.id !== id)
    return Response.json(body, { status: 200 })
  }
}
