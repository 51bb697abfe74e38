import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LightMyRequestResponse as Response } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { entityTag, noneMatchHits } from '../../src/api/conditional.js'
import { buildWriteApp, PREFIX, WRITE_ADAPTERS, type WriteAdapterFactory, type WriteTestApp } from '../helpers/write-app.js'

/**
 * Issue 25: every GET answers a strong `ETag` that changes exactly when its answer does, and
 * `If-None-Match` with the current tag answers 304 without a body and without spending the
 * key's rate budget (docs/decisions.md, "Conditional requests").
 */
const apps: WriteTestApp[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

async function open(options: Parameters<typeof buildWriteApp>[0]): Promise<WriteTestApp> {
  const app = await buildWriteApp(options)
  apps.push(app)
  return app
}

const tagOf = (response: Response) => response.headers.etag as string
const remaining = (response: Response) => Number(response.headers['x-ratelimit-remaining'])

function conditionalGet(t: WriteTestApp, path: string, key: string, tag: string): Promise<Response> {
  return t.app.inject({ method: 'GET', url: `${PREFIX}${path}`, headers: { 'x-api-key': key, 'if-none-match': tag } })
}

/** Every GET route of the app, with a real id of company 1 in place of `:id`. */
async function everyGetPath(t: WriteTestApp, key: string): Promise<string[]> {
  const paths: string[] = []
  for (const route of t.app.workforceApi.routes.filter((entry) => entry.method === 'GET')) {
    const path = route.url.slice(PREFIX.length)
    if (!path.endsWith('/:id')) {
      paths.push(path)
      continue
    }
    const list = await t.get(path.slice(0, -'/:id'.length), key)
    const first = (list.json() as { data: Array<{ id: number }> }).data[0]
    expect(first, `${path}: company 1 has a record to read`).toBeDefined()
    paths.push(path.replace(':id', String(first?.id)))
  }
  return paths
}

describe.each(WRITE_ADAPTERS)('conditional reads ($name)', (adapter) => {
  it('every GET route answers a strong ETag, and 304 without a body to its own tag', async () => {
    const t = await open({ adapter })
    const key = await t.keyFor(1)
    const paths = await everyGetPath(t, key)
    // The lists and by-ids of the nine resources, the company, the events feed and its cursor.
    expect(paths.length).toBe(t.app.workforceApi.routes.filter((entry) => entry.method === 'GET').length)
    expect(paths).toEqual(expect.arrayContaining(['/v1/company', '/v1/users', '/v1/events', '/v1/events/cursor']))
    for (const path of paths) {
      const first = await t.get(path, key)
      expect(first.statusCode, path).toBe(200)
      expect(tagOf(first), path).toMatch(/^"[A-Za-z0-9_-]{22}"$/)
      // The tag is the answer's: the same bytes give the same tag on any instance.
      expect(tagOf(first), path).toBe(entityTag(first.body))
      const again = await conditionalGet(t, path, key, tagOf(first))
      expect(again.statusCode, path).toBe(304)
      expect(again.body, path).toBe('')
      expect(again.headers.etag, path).toBe(tagOf(first))
    }
  })

  it('a stale or foreign tag gets the full answer; weak, listed and * tags match', async () => {
    const t = await open({ adapter })
    const key = await t.keyFor(1)
    const first = await t.get('/v1/todos', key)
    const tag = tagOf(first)
    const stale = await conditionalGet(t, '/v1/todos', key, '"AAAAAAAAAAAAAAAAAAAAAA"')
    expect(stale.statusCode).toBe(200)
    expect(stale.body).toBe(first.body)
    for (const header of [`W/${tag}`, `"x", ${tag}`, '*']) {
      expect((await conditionalGet(t, '/v1/todos', key, header)).statusCode, header).toBe(304)
    }
    // Another page, filter or page size is another answer with its own tag.
    const other = await t.get('/v1/todos?per_page=2', key)
    expect(tagOf(other)).not.toBe(tag)
    expect((await conditionalGet(t, '/v1/todos?per_page=2', key, tag)).statusCode).toBe(200)
  })

  it('a 304 carries the rate limit headers and does not spend the budget; a 200 to a stale tag does', async () => {
    const t = await open({ adapter, options: { rateLimit: { max: 5 } } })
    const key = await t.keyFor(1)
    const first = await t.get('/v1/users', key)
    expect(remaining(first)).toBe(4)
    for (let i = 0; i < 8; i += 1) {
      const notModified = await conditionalGet(t, '/v1/users', key, tagOf(first))
      expect(notModified.statusCode).toBe(304)
      expect(notModified.headers['x-ratelimit-limit']).toBe('5')
      expect(remaining(notModified)).toBe(4)
      expect(Number(notModified.headers['x-ratelimit-reset'])).toBeGreaterThan(0)
    }
    const stale = await conditionalGet(t, '/v1/users', key, '"stale"')
    expect(stale.statusCode).toBe(200)
    expect(remaining(stale)).toBe(3)
    // An error to a conditional request is counted as any request.
    const invalid = await conditionalGet(t, '/v1/users?page=0', key, tagOf(first))
    expect(invalid.statusCode).toBe(422)
    expect(remaining(invalid)).toBe(2)
    await t.get('/v1/users', key)
    await t.get('/v1/users', key)
    // Spent: a tag buys nothing beyond the budget.
    const refused = await conditionalGet(t, '/v1/users', key, tagOf(first))
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBeDefined()
    // Worded as every refusal of the API is: whole seconds.
    expect((refused.json() as { error: { message: string } }).error.message).toBe(
      `Rate limit of 5 requests per 60 s exceeded for this API key; retry after ${refused.headers['retry-after']} s`,
    )
    expect(remaining(refused)).toBe(0)
  })

  it('a write changes the tags of the answers it changes, and only those', async () => {
    const t = await open({ adapter })
    const key = await t.keyFor(1)
    const paths = ['/v1/todos', '/v1/todos?status=open', '/v1/users', '/v1/projects', '/v1/company', '/v1/todos?per_page=1']
    const todos = (await t.get('/v1/todos', key)).json() as { data: Array<{ id: number; title: string }> }
    const [changed, untouched] = todos.data.slice(-2) as unknown as [{ id: number }, { id: number }]
    const byId = [`/v1/todos/${changed.id}`, `/v1/todos/${untouched.id}`]
    const before = new Map<string, string>()
    for (const path of [...paths, ...byId]) before.set(path, tagOf(await t.get(path, key)))

    const patched = await t.patch(`/v1/todos/${changed.id}`, { title: 'A changed title' }, { 'x-api-key': key, 'idempotency-key': 'conditional-1' })
    expect(patched.statusCode).toBe(200)

    const after = async (path: string) => {
      const response = await conditionalGet(t, path, key, before.get(path) as string)
      return response.statusCode
    }
    expect(await after('/v1/todos')).toBe(200)
    expect(await after(`/v1/todos/${changed.id}`)).toBe(200)
    // The first to-do's page of one, another to-do, and other resources did not change.
    expect(await after('/v1/todos?per_page=1')).toBe(304)
    expect(await after(`/v1/todos/${untouched.id}`)).toBe(304)
    expect(await after('/v1/users')).toBe(304)
    expect(await after('/v1/projects')).toBe(304)
    expect(await after('/v1/company')).toBe(304)
  })

  it('a cached answer is never given to another company, nor to a key lacking the scope', async () => {
    const t = await open({ adapter })
    const one = await t.keyFor(1)
    const two = await t.keyFor(2)
    const first = await t.get('/v1/users', one)
    const theirs = await conditionalGet(t, '/v1/users', two, tagOf(first))
    expect(theirs.statusCode).toBe(200)
    expect(theirs.body).not.toBe(first.body)
    expect(theirs.body).toBe((await t.get('/v1/users', two)).body)
    const unscoped = await t.keyFor(1, ['todos:read'])
    const refused = await conditionalGet(t, '/v1/users', unscoped, tagOf(first))
    expect(refused.statusCode).toBe(403)
    const user = (first.json() as { data: Array<{ id: number }> }).data[0]?.id
    const otherCompany = await conditionalGet(t, `/v1/users/${user}`, two, tagOf(await t.get(`/v1/users/${user}`, one)))
    expect(otherCompany.statusCode).not.toBe(304)
  })
})

describe('conditional reads over SQL written outside the API', () => {
  let directory: string | undefined
  afterEach(() => {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
    directory = undefined
  })

  /** A write adapter over one SQLite file: two of them are two instances sharing a database. */
  function sqliteFile(filename: string): WriteAdapterFactory {
    return {
      name: 'sqlite-file',
      async open() {
        const adapter = await openSqliteAdapter({ filename })
        return { adapter, events: async () => [], idempotencyRecords: async () => [] }
      },
    }
  }

  it('a direct SQL change to the people a user list joins, or to a to-do, changes the affected tags only', async () => {
    const sqlite = WRITE_ADAPTERS.find((candidate) => candidate.name === 'sqlite') as WriteAdapterFactory
    const t = await open({ adapter: sqlite })
    const key = await t.keyFor(1)
    const db = (t.adapter as unknown as { db: import('kysely').Kysely<any> }).db
    const users = (await t.get('/v1/users', key)).json() as { data: Array<{ id: number; email: string; invitation_status: string }> }
    const accepted = users.data.find((user) => user.invitation_status === 'accepted') as { id: number; email: string }
    const tags = async () => ({
      users: tagOf(await t.get('/v1/users', key)),
      user: tagOf(await t.get(`/v1/users/${accepted.id}`, key)),
      todos: tagOf(await t.get('/v1/todos', key)),
      roles: tagOf(await t.get('/v1/roles', key)),
    })
    const before = await tags()
    // The person behind the user (a table the user list joins), not the membership.
    await db.updateTable('wfa_users').set({ first_name: 'Renamed' }).where('email', '=', accepted.email).execute()
    const renamed = await tags()
    expect(renamed.users).not.toBe(before.users)
    expect(renamed.user).not.toBe(before.user)
    expect(renamed.todos).toBe(before.todos)
    expect(renamed.roles).toBe(before.roles)
    expect((await t.get(`/v1/users/${accepted.id}`, key)).json()).toMatchObject({ data: { first_name: 'Renamed' } })
    // A change no answer shows (the person's password) leaves every tag as it was.
    await db.updateTable('wfa_users').set({ password_hash: 'changed' }).where('email', '=', accepted.email).execute()
    expect(await tags()).toEqual(renamed)
    await db.updateTable('wfa_todos').set({ title: 'Changed in SQL' }).where('company_id', '=', 1).where('id', '=', db.selectFrom('wfa_todos').select((eb) => eb.fn.min('id').as('id')).where('company_id', '=', 1)).execute()
    const retitled = await tags()
    expect(retitled.todos).not.toBe(renamed.todos)
    expect(retitled.users).toBe(renamed.users)
  })

  it("a host's change published in its own transaction changes the tags of what it changed, and the feed's, only", async () => {
    const sqlite = WRITE_ADAPTERS.find((candidate) => candidate.name === 'sqlite') as WriteAdapterFactory
    const t = await open({ adapter: sqlite })
    const key = await t.keyFor(1)
    const db = (t.adapter as unknown as { db: import('kysely').Kysely<any> }).db
    const shifts = (await t.get('/v1/shifts?per_page=3', key)).json() as { data: Array<{ id: number }> }
    const shift = shifts.data[0] as { id: number }
    const feed = await t.get('/v1/events/cursor', key)
    const cursor = (feed.json() as { data: { cursor: string } }).data.cursor
    const paths = ['/v1/shifts?per_page=3', `/v1/shifts/${shift.id}`, '/v1/todos', '/v1/users', `/v1/events?after=${cursor}`]
    const before = new Map<string, string>()
    for (const path of paths) before.set(path, tagOf(await t.get(path, key)))
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('wfa_shifts').set({ break_minutes: 42 }).where('company_id', '=', 1).where('id', '=', shift.id).execute()
      const record = await t.adapter.storage.shifts.get(1, shift.id)
      await t.app.workforceApi.events.publish(trx, { type: 'shifts.updated', companyId: 1, record: record as NonNullable<typeof record> })
    })
    const status = async (path: string) => (await conditionalGet(t, path, key, before.get(path) as string)).statusCode
    expect(await status('/v1/shifts?per_page=3')).toBe(200)
    expect(await status(`/v1/shifts/${shift.id}`)).toBe(200)
    expect(await status(`/v1/events?after=${cursor}`)).toBe(200)
    expect(await status('/v1/todos')).toBe(304)
    expect(await status('/v1/users')).toBe(304)
  })

  it("another instance's write changes this instance's tags at once", async () => {
    directory = mkdtempSync(join(tmpdir(), 'wfa-conditional-'))
    const filename = join(directory, 'shared.db')
    const a = await open({ adapter: sqliteFile(filename) })
    const b = await open({ adapter: sqliteFile(filename), dataset: null })
    const key = await a.keyFor(1)
    const first = await a.get('/v1/todos', key)
    expect((await conditionalGet(a, '/v1/todos', key, tagOf(first))).statusCode).toBe(304)
    const todo = (first.json() as { data: Array<{ id: number }> }).data[0] as { id: number }
    const written = await b.patch(`/v1/todos/${todo.id}`, { title: 'Written by the other instance' }, { 'x-api-key': key, 'idempotency-key': 'conditional-b' })
    expect(written.statusCode).toBe(200)
    const seen = await conditionalGet(a, '/v1/todos', key, tagOf(first))
    expect(seen.statusCode).toBe(200)
    expect(seen.body).toContain('Written by the other instance')
    // And the other instance answers the same bytes with the same tag.
    expect(tagOf(await b.get('/v1/todos', key))).toBe(tagOf(seen))
  })
})

describe('an unchanged answer is kept', () => {
  it('a 304, and a repeated 200, run neither the page query nor the by-id read while the version is unchanged (sqlite)', async () => {
    const sqlite = WRITE_ADAPTERS.find((candidate) => candidate.name === 'sqlite') as WriteAdapterFactory
    const t = await open({ adapter: sqlite })
    const key = await t.keyFor(1)
    const reader = t.adapter.storage.todos
    const seek = reader.seek as NonNullable<typeof reader.seek>
    const list = await t.get('/v1/todos?status=open', key)
    const id = (list.json() as { data: Array<{ id: number }> }).data[0]?.id as number
    const one = await t.get(`/v1/todos/${id}`, key)
    const reads: string[] = []
    const original = { page: seek.page, count: seek.count, get: reader.get, list: reader.list }
    seek.page = async (...args) => (reads.push('page'), original.page.apply(seek, args))
    seek.count = async (...args) => (reads.push('count'), original.count.apply(seek, args))
    reader.get = async (...args) => (reads.push('get'), original.get.apply(reader, args))
    reader.list = async (...args) => (reads.push('list'), original.list.apply(reader, args))
    try {
      expect((await conditionalGet(t, '/v1/todos?status=open', key, tagOf(list))).statusCode).toBe(304)
      expect((await conditionalGet(t, `/v1/todos/${id}`, key, tagOf(one))).statusCode).toBe(304)
      const again = await t.get('/v1/todos?status=open', key)
      expect(again.body).toBe(list.body)
      expect(tagOf(again)).toBe(tagOf(list))
      expect((await t.get(`/v1/todos/${id}`, key)).body).toBe(one.body)
      expect(reads).toEqual([])
      // A change anywhere in the company's to-dos: read again (and the tag stays, as the bytes do).
      await t.patch(`/v1/todos/${id}`, { notes: 'touched' }, { 'x-api-key': key, 'idempotency-key': 'conditional-kept' })
      const unchangedList = await conditionalGet(t, '/v1/todos?status=open&per_page=1', key, '"x"')
      expect(unchangedList.statusCode).toBe(200)
      expect(reads.length).toBeGreaterThan(0)
    } finally {
      Object.assign(seek, { page: original.page, count: original.count })
      Object.assign(reader, { get: original.get, list: original.list })
    }
  })
})

describe('answerCacheBytes', () => {
  it('0 keeps no answer: every read runs its query, and tags and 304s work the same', async () => {
    const sqlite = WRITE_ADAPTERS.find((candidate) => candidate.name === 'sqlite') as WriteAdapterFactory
    const t = await open({ adapter: sqlite, options: { answerCacheBytes: 0 } })
    const key = await t.keyFor(1)
    const seek = t.adapter.storage.todos.seek as NonNullable<typeof t.adapter.storage.todos.seek>
    const first = await t.get('/v1/todos', key)
    let pages = 0
    const page = seek.page
    seek.page = async (...args) => ((pages += 1), page.apply(seek, args))
    try {
      expect((await conditionalGet(t, '/v1/todos', key, tagOf(first))).statusCode).toBe(304)
      expect((await t.get('/v1/todos', key)).body).toBe(first.body)
      expect(pages).toBe(2)
    } finally {
      seek.page = page
    }
  })

  it('is refused at registration when it is not a whole number of bytes', async () => {
    for (const answerCacheBytes of [-1, 1.5, '32MB']) {
      await expect(buildWriteApp({ options: { answerCacheBytes: answerCacheBytes as number } })).rejects.toThrow(/answerCacheBytes/)
    }
  })
})

describe('If-None-Match', () => {
  it('compares weakly, as RFC 9110 says for If-None-Match', () => {
    expect(noneMatchHits(undefined, '"a"')).toBe(false)
    expect(noneMatchHits('"a"', '"a"')).toBe(true)
    expect(noneMatchHits('W/"a"', '"a"')).toBe(true)
    expect(noneMatchHits('"b" , "a"', '"a"')).toBe(true)
    expect(noneMatchHits(['"b"', '"a"'], '"a"')).toBe(true)
    expect(noneMatchHits(' * ', '"a"')).toBe(true)
    expect(noneMatchHits('"ab"', '"a"')).toBe(false)
    expect(noneMatchHits('a', '"a"')).toBe(false)
  })
})
