import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory/index.js'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { TeamReader } from '../../examples/host-app/team-reader.js'
import { teamsResource } from '../../examples/host-app/teams.js'
import { KEYSET_PAGE } from '../../src/api/pagination.js'
import type { Dataset } from '../../src/ports/dataset.js'
import { generateDataset } from '../../src/seed/generate.js'
import type { ReadAdapter, ReadAdapterFactory } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { LIST_RESOURCES } from '../helpers/expected-reads.js'
import { listAll, listIds } from '../helpers/list-http.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { withoutSeek } from '../helpers/without-seek.js'

/**
 * `starting_after` (docs/api.md section 4, docs/decisions.md "Keyset pages"): the rows with ids
 * above an id, with the list's filters, `per_page` and exact total, on every backend. The page
 * walk over the same app is the oracle: pages are proven elsewhere (pagination.test.ts,
 * list-pages.test.ts), so a keyset walk must return exactly what they return.
 */

/** Company 1 has this many rows of every list: more than one `per_page=100` page. */
const SCALE = 130
const COMPANIES = [1, 2] as const

interface Body {
  data: Array<Record<string, unknown> & { id: number }>
  pagination: { page: number; per_page: number; total: number; total_pages: number; has_more?: boolean; next_starting_after?: number }
}

/** A backend: an adapter with the dataset, and how a host deletes one of its rows behind the API. */
interface Backend {
  name: string
  open(dataset: Dataset): Promise<{ adapter: ReadAdapter; remove(table: 'shifts' | 'todos', id: number): Promise<void> }>
}

const memoryBackend: Backend = {
  name: 'memory',
  async open(dataset) {
    const adapter: MemoryAdapter = createMemoryAdapter()
    await adapter.loadDataset(dataset)
    return {
      adapter,
      async remove(table, id) {
        const rows = adapter.storage.data[table] as Array<{ id: number }>
        rows.splice(
          rows.findIndex((row) => row.id === id),
          1,
        )
      },
    }
  },
}

function sqlRemover(db: Kysely<any>) {
  return async (table: 'shifts' | 'todos', id: number) => {
    await sql`delete from ${sql.raw(`wfa_${table}`)} where id = ${id}`.execute(db)
  }
}

const sqliteBackend: Backend = {
  name: 'sqlite',
  async open(dataset) {
    const adapter = await openSqliteAdapter({ filename: ':memory:' })
    await adapter.loadDataset(dataset)
    return { adapter, remove: sqlRemover(adapter.db) }
  },
}

/** Every row of a list through `starting_after`, asserting each answer's envelope on the way. */
async function keysetWalk(t: TestApp, key: string, path: string, query: string, perPage: number): Promise<{ rows: Body['data']; answers: Body[] }> {
  const rows: Body['data'] = []
  const answers: Body[] = []
  let cursor = 0
  for (;;) {
    const url = `${path}?starting_after=${cursor}&per_page=${perPage}${query === '' ? '' : `&${query}`}`
    const response = await t.get(url, key)
    expect(response.statusCode, `${url}: ${response.body}`).toBe(200)
    const body = response.json() as Body
    answers.push(body)
    const { total } = body.pagination
    expect(body.pagination, url).toStrictEqual({
      page: KEYSET_PAGE,
      per_page: perPage,
      total,
      total_pages: Math.ceil(total / perPage),
      has_more: body.pagination.has_more,
      next_starting_after: body.data.at(-1)?.id ?? cursor,
    })
    expect(body.data.length, url).toBeLessThanOrEqual(perPage)
    for (const row of body.data) expect(row.id, url).toBeGreaterThan(rows.at(-1)?.id ?? cursor)
    rows.push(...body.data)
    if (body.pagination.has_more !== true) break
    expect(body.data, `${url}: has_more with a full page`).toHaveLength(perPage)
    cursor = body.pagination.next_starting_after as number
    expect(answers.length, 'the walk ends').toBeLessThan(1_000)
  }
  return { rows, answers }
}

/** Filters per list: one equality filter and one time filter where the list has them. */
const FILTERS: Record<string, string[]> = {
  users: ['active=true', 'updated_since=2026-01-01T00:00:00.000Z'],
  employees: ['updated_since=2026-01-01T00:00:00.000Z'],
  roles: [],
  projects: ['status=active', 'kind=customer'],
  shifts: ['status=scheduled', 'date_from=2026-03-01&date_to=2026-06-30'],
  absences: ['status=approved', 'date_from=2026-02-01'],
  expenses: ['category=equipment', 'date_to=2026-06-30'],
  todos: ['status=open', 'due_from=2026-03-01&due_to=2026-12-31'],
}

function defineKeysetSuite(backend: () => Backend): void {
  const dataset = generateDataset({ scale: SCALE })
  let t: TestApp
  let remove: (table: 'shifts' | 'todos', id: number) => Promise<void>
  const keys = new Map<number, string>()

  beforeAll(async () => {
    const opened = await backend().open(dataset)
    remove = opened.remove
    const factory: ReadAdapterFactory = { name: backend().name, open: async () => opened.adapter }
    t = await build({ adapter: factory, dataset: null, options: { rateLimit: false } })
    for (const companyId of [1, 2, 3]) keys.set(companyId, await t.keyFor(companyId))
  })
  afterAll(async () => {
    await t?.close()
  })
  const keyOf = (companyId: number) => keys.get(companyId) as string

  it('a walk from starting_after=0 returns every row of every list once, in id order, with the exact total, as the pages do', async () => {
    for (const resource of LIST_RESOURCES) {
      for (const companyId of COMPANIES) {
        const paged = await listAll(t, keyOf(companyId), `/v1/${resource}`)
        for (const perPage of [7, 100]) {
          const { rows, answers } = await keysetWalk(t, keyOf(companyId), `/v1/${resource}`, '', perPage)
          expect(rows, `${resource} of company ${companyId}, per_page ${perPage}`).toStrictEqual(paged)
          for (const answer of answers) expect(answer.pagination.total).toBe(paged.length)
          expect(answers.at(-1)?.pagination.has_more).toBe(false)
        }
      }
    }
  })

  it('filters apply as on pages', async () => {
    for (const resource of LIST_RESOURCES) {
      for (const query of FILTERS[resource] ?? []) {
        const paged = await listAll(t, keyOf(1), `/v1/${resource}`, query)
        expect(paged.length, `${resource}?${query} selects some rows`).toBeGreaterThan(0)
        const { rows, answers } = await keysetWalk(t, keyOf(1), `/v1/${resource}`, query, 9)
        expect(rows, `${resource}?${query}`).toStrictEqual(paged)
        for (const answer of answers) expect(answer.pagination.total, `${resource}?${query}`).toBe(paged.length)
      }
    }
  })

  it('an id that is no row of the list works: a gap, another company’s row, the last row, past the end', async () => {
    const ids = await listIds(t, keyOf(1), '/v1/expenses')
    const others = await listIds(t, keyOf(2), '/v1/expenses')
    const middle = ids[Math.floor(ids.length / 2)] as number
    const last = ids.at(-1) as number
    const gap = ids.find((id, index) => index > 0 && id - (ids[index - 1] as number) > 1)
    const cases = [middle - 1, middle, others[0] as number, gap === undefined ? middle : gap - 1, last, last + 1, Number.MAX_SAFE_INTEGER]
    for (const after of cases) {
      const response = await t.get(`/v1/expenses?starting_after=${after}&per_page=5`, keyOf(1))
      expect(response.statusCode, response.body).toBe(200)
      const body = response.json() as Body
      const expected = ids.filter((id) => id > after)
      expect({ after, ids: body.data.map((row) => row.id) }).toEqual({ after, ids: expected.slice(0, 5) })
      expect(body.pagination).toStrictEqual({
        page: KEYSET_PAGE,
        per_page: 5,
        total: ids.length,
        total_pages: Math.ceil(ids.length / 5),
        has_more: expected.length > 5,
        next_starting_after: expected.slice(0, 5).at(-1) ?? after,
      })
    }
  })

  it('a company without rows: empty data, has_more false, the cursor echoed', async () => {
    const response = await t.get('/v1/users?starting_after=0', keyOf(3))
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toStrictEqual({
      data: [],
      pagination: { page: KEYSET_PAGE, per_page: 25, total: 0, total_pages: 0, has_more: false, next_starting_after: 0 },
    })
  })

  it('deletions during a walk: page skips the rows that move back, starting_after misses none', async () => {
    const perPage = 5
    // One list per walk, so that each starts from rows nobody deleted yet.
    for (const [table, walk] of [
      ['shifts', 'page'],
      ['todos', 'starting_after'],
    ] as const) {
      const before = await listIds(t, keyOf(1), `/v1/${table}`)
      const seen: number[] = []
      const first = (await t.get(`/v1/${table}?${walk === 'page' ? 'page=1' : 'starting_after=0'}&per_page=${perPage}`, keyOf(1))).json() as Body
      seen.push(...first.data.map((row) => row.id))
      expect(seen).toEqual(before.slice(0, perPage))
      // The host deletes two rows the client already has, the last of them the cursor's own row.
      const deleted = [before[1], before[perPage - 1]] as number[]
      for (const id of deleted) await remove(table, id)
      let cursor = first.pagination.next_starting_after
      for (let page = 2; ; page++) {
        const query = walk === 'page' ? `page=${page}` : `starting_after=${String(cursor)}`
        const body = (await t.get(`/v1/${table}?${query}&per_page=${perPage}`, keyOf(1))).json() as Body
        expect(body.pagination.total, 'the total counts the deletions at once').toBe(before.length - deleted.length)
        seen.push(...body.data.map((row) => row.id))
        cursor = body.pagination.next_starting_after
        if (walk === 'page' ? page >= body.pagination.total_pages : body.pagination.has_more !== true) break
      }
      const missed = before.filter((id) => !seen.includes(id) && !deleted.includes(id))
      if (walk === 'page') {
        // The proof the walk needs the keyset: the two rows after the first page moved onto it.
        expect(missed, 'a page walk skips a row per deletion before it').toEqual([before[perPage], before[perPage + 1]])
      } else {
        expect(missed, 'a keyset walk skips nothing').toEqual([])
        expect(seen).toEqual(before)
      }
    }
  })
}

describe('starting_after on the memory adapter (no seek: list() searched by the plugin)', () => {
  defineKeysetSuite(() => memoryBackend)
})

describe('starting_after on SQLite (seek)', () => {
  defineKeysetSuite(() => sqliteBackend)
})

describePostgres('starting_after on Postgres (seek)', () => {
  const database = useTestDatabase()
  defineKeysetSuite(() => ({
    name: 'postgres',
    async open(dataset) {
      const adapter = await openPostgresAdapter({ connectionString: database.current.url })
      await adapter.loadDataset(dataset)
      return { adapter, remove: sqlRemover(adapter.db) }
    },
  }))
})

describe('starting_after: refusals in the error envelope', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await build({ options: { rateLimit: false } })
    key = await t.keyFor(1)
  })
  afterAll(() => t.close())

  it('with page: 422 validation_error naming starting_after, even page=1', async () => {
    for (const query of ['page=1&starting_after=0', 'page=2&starting_after=10', 'starting_after=10&page=3&per_page=5']) {
      const response = await t.get(`/v1/todos?${query}`, key)
      expect(response.statusCode, query).toBe(422)
      expect(response.json()).toEqual({
        error: { code: 'validation_error', message: expect.any(String), status: 422, details: [{ field: 'starting_after', message: 'cannot be combined with page' }] },
      })
    }
  })

  it.each(['-1', 'abc', '1.5', '1e2', '0x10', '', '9007199254740992', '10&starting_after=11'])('starting_after=%s: 422 validation_error naming it', async (value) => {
    const response = await t.get(`/v1/shifts?starting_after=${value}`, key)
    expect(response.statusCode, response.body).toBe(422)
    const { error } = response.json() as { error: { code: string; status: number; details: Array<{ field: string }> } }
    expect(error.code).toBe('validation_error')
    expect(error.status).toBe(422)
    expect(error.details.map((detail) => detail.field)).toContain('starting_after')
  })

  it('a by-id read takes no starting_after', async () => {
    const response = await t.get('/v1/todos/1?starting_after=0', key)
    expect(response.statusCode).toBe(422)
  })
})

describe('starting_after without seek answers as with it (SQLite, a host reader that has list() only)', () => {
  it('byte for byte, over every list and a few cursors', async () => {
    const dataset = generateDataset({ scale: SCALE })
    const fast = await build({ adapter: { name: 'sqlite', open: () => openSqliteAdapter({ filename: ':memory:' }) }, dataset, options: { rateLimit: false } })
    const plain = await build({
      adapter: { name: 'sqlite', open: () => openSqliteAdapter({ filename: ':memory:' }) },
      dataset,
      options: (adapter) => ({ rateLimit: false, storage: withoutSeek(adapter.storage) }),
    })
    try {
      const [fastKey, plainKey] = [await fast.keyFor(1), await plain.keyFor(1)]
      for (const resource of LIST_RESOURCES) {
        const ids = await listIds(fast, fastKey, `/v1/${resource}`)
        for (const after of [0, (ids[3] as number) + 0, (ids[60] as number) - 1, ids.at(-1) as number]) {
          for (const perPage of [1, 25, 100]) {
            const url = `/v1/${resource}?starting_after=${after}&per_page=${perPage}`
            const [a, b] = [await fast.get(url, fastKey), await plain.get(url, plainKey)]
            expect(a.statusCode, url).toBe(200)
            expect(b.body, url).toBe(a.body)
          }
        }
      }
    } finally {
      await fast.close()
      await plain.close()
    }
  })
})

describe("starting_after on a host's own resource (examples/host-app's TeamReader: list() only), SQLite", () => {
  it("walks a company's teams, and a deleted cursor row still works", async () => {
    const adapter = await openSqliteAdapter({ filename: ':memory:' })
    await adapter.db.schema
      .createTable('teams')
      .addColumn('id', 'integer', (column) => column.primaryKey())
      .addColumn('org_id', 'integer', (column) => column.notNull())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('lead_employee_id', 'integer')
      .addColumn('created_at', 'text', (column) => column.notNull())
      .addColumn('updated_at', 'text', (column) => column.notNull())
      .execute()
    const at = '2026-01-05T08:00:00.000Z'
    // Company 1's teams interleaved with company 2's, with gaps.
    const teams = Array.from({ length: 30 }, (_, index) => ({ id: 3 * index + 1, org_id: index % 3 === 0 ? 2 : 1, name: `Team ${index}`, lead_employee_id: null, created_at: at, updated_at: at }))
    await adapter.db.insertInto('teams').values(teams).execute()
    await adapter.modules.setActive(1, 'teams', true)
    const t = await build({
      adapter: { name: 'sqlite', open: async () => adapter },
      options: { rateLimit: false, moduleCacheTtlMs: 0, resources: [teamsResource(new TeamReader(adapter.db))] },
    })
    try {
      const key = await t.keyFor(1)
      const ids = teams.filter((team) => team.org_id === 1).map((team) => team.id)
      const { rows } = await keysetWalk(t, key, '/v1/teams', '', 3)
      expect(rows.map((row) => row.id)).toEqual(ids)
      await adapter.db.deleteFrom('teams').where('id', '=', ids[5] as number).execute()
      const body = (await t.get(`/v1/teams?starting_after=${ids[5]}&per_page=2`, key)).json() as Body
      expect(body.data.map((row) => row.id)).toEqual(ids.slice(6, 8))
      expect(body.pagination).toMatchObject({ total: ids.length - 1, has_more: true, next_starting_after: ids[7] })
    } finally {
      await t.close()
    }
  })
})
