import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, postgresCodec, type PostgresAdapterOptions } from '../../adapters/postgres/index.js'
import { loadPostgresDatasetStream } from '../../adapters/postgres/postgres-bulk-load.js'
import type { Dataset } from '../../src/ports/dataset.js'
import { streamDataset } from '../../src/seed/generate.js'
import { mulberry32 } from '../../src/seed/prng.js'
import { build, type TestApp } from '../helpers/build.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'

// Issue 22: any page of a large company's list, asked cold (nothing remembered in the process),
// answers 200 with the right rows at a cost that does not grow with its depth; and a company
// asking deep pages four at a time changes nothing for another company on the same instance.
// Every request goes to a FRESH app (new adapter, new pool, new plugin and so a new ListPages).
// The bounds are tight: a page found by skipping its offset through the list query (COUNT +
// OFFSET, or a seek with no boundary remembered) does not fit in them at this scale deep down;
// a page found on an index does. The expected rows come from plain SQL over the tables.

/**
 * Company 1's users and to-dos. Large enough that a deep OFFSET costs more than the bounds, small
 * enough that the whole file runs in ~40 s (loading these tables takes 10–16 s of it).
 */
const SCALE = Number(process.env.WORKFORCE_DEEP_PAGES_SCALE ?? 200_000)
/**
 * The server cancels a statement past this (`statement_timeout`). Before issue 22 a cold page at
 * this scale cost ~50 ms near the start and 100–150 ms (to-dos) to ~300 ms (users, the due range)
 * deep down: with this bound most deep pages of users and of the due range missed it (15 and 17
 * of 20 in one run), and the pressure test saw 1,989 of 2,000 answers 503. A page found on an
 * index costs a few ms, a filtered COUNT at this scale tens: the margin for a loaded CI machine.
 */
const STATEMENT_TIMEOUT_MS = 150
/** The client gives up on an answer past this; must stay above the statement bound. */
const QUERY_TIMEOUT_MS = 300
/**
 * On a slower machine the bounds grow with it: the statement bound is at least this many times
 * what the slowest list's exact total costs as a plain COUNT here and now (the oracle, warm).
 * Every page must count its list, so that cost is the floor of any page, and a deep OFFSET,
 * which reads and joins the rows the count only counts, costs several times more on the same
 * machine. CI on a day when the machine ran 2–3 × slower saw a page at 222 ms against 150.
 */
const COUNT_MULTIPLE = 4
/**
 * The isolation test sets only the client-side bound, as an operator would, and leaves the
 * statement bound to the adapter's default: before issue 22 that was 5 s, so the client gave up
 * first and took a slow page for an outage of the database (fail-fast for every tenant).
 */
const PRESSURE_QUERY_TIMEOUT_MS = 500
const PER_PAGE = 100
/** Cold random pages asked of each list. */
const PAGES_PER_LIST = 20
/** How long company 1 asks deep pages in the isolation test, and how many at most. */
const PRESSURE_MS = 5_000
const PRESSURE_WORKERS = 4
const PRESSURE_MAX_REQUESTS = 2_000
/** Company 2's cheap request comes this often during the pressure. */
const PROBE_EVERY_MS = 20

/** Only what users and to-dos need: the seed makes each table's rows the same whichever others are made. */
const LOADED: readonly (keyof Dataset)[] = ['companies', 'people', 'memberships', 'todoLists', 'todos', 'modules']
/** A range that keeps about half of the to-dos (their due days spread over 2026; a third have none). */
const DUE_FROM = '2026-02-01'
const DUE_TO = '2026-11-30'

interface ListCase {
  name: string
  path: string
  /** The oracle: ids of company 1's rows in the list, in id order, as plain SQL over the tables. */
  ids: string
}

const LISTS: readonly ListCase[] = [
  { name: 'users', path: '/v1/users', ids: 'select user_id as id from wfa_memberships where company_id = 1' },
  { name: 'todos', path: '/v1/todos', ids: 'select id from wfa_todos where company_id = 1' },
  { name: 'open todos', path: '/v1/todos?status=open', ids: `select id from wfa_todos where company_id = 1 and status = 'open'` },
  {
    name: `todos due ${DUE_FROM}…${DUE_TO}`,
    path: `/v1/todos?due_from=${DUE_FROM}&due_to=${DUE_TO}`,
    // Written from the spec (whole days in the company's time zone, inclusive), not from the query.
    ids: `select t.id from wfa_todos t join wfa_companies c on c.id = t.company_id where t.company_id = 1
      and (t.due_day between '${DUE_FROM}' and '${DUE_TO}' or (t.due_at at time zone c.timezone)::date between '${DUE_FROM}' and '${DUE_TO}')`,
  },
]


/** `count` pages over the whole range 1…`pages`: one at random in each of `count` equal strata, the last page included. */
function spreadPages(pages: number, count: number, next: () => number): number[] {
  const chosen = new Set<number>([pages])
  for (let i = 0; chosen.size < Math.min(count, pages); i = (i + 1) % count) {
    const from = Math.floor((i * pages) / count)
    const to = Math.floor(((i + 1) * pages) / count)
    chosen.add(1 + from + Math.floor(next() * Math.max(1, to - from)))
  }
  return [...chosen]
}

describePostgres('deep pages, cold, on Postgres (issue 22)', () => {
  const database = useTestDatabase()
  let oracle: pg.Client
  const keys = { large: '', small: '' }
  const totals = new Map<string, number>()
  const timings: string[] = []

  /** A new adapter and a new plugin over the loaded database: nothing remembered. */
  const bounds = { statementTimeoutMs: STATEMENT_TIMEOUT_MS, queryTimeoutMs: QUERY_TIMEOUT_MS }
  function coldApp(options: PostgresAdapterOptions = bounds): Promise<TestApp> {
    return build({
      adapter: {
        name: 'postgres',
        open: () => openPostgresAdapter({ connectionString: database.current.url }, { migrate: false, ...options }),
      },
      dataset: null,
      // Rate limits are not what is tested here, and the document is checked from docs/openapi.json.
      options: { rateLimit: false, openapi: false },
    })
  }

  async function expectedIds(list: ListCase, page: number): Promise<number[]> {
    const { rows } = await oracle.query<{ id: number }>(`${list.ids} order by id offset $1 limit $2`, [(page - 1) * PER_PAGE, PER_PAGE])
    return rows.map((row) => Number(row.id))
  }

  beforeAll(async () => {
    let started = performance.now()
    const loader = await openPostgresAdapter({ connectionString: database.current.url })
    try {
      const client = await loader.pool.connect()
      try {
        await loadPostgresDatasetStream(client, postgresCodec, streamDataset({ scale: SCALE, tables: LOADED }))
      } finally {
        client.release()
      }
    } finally {
      await loader.close()
    }
    timings.push(`load ${(performance.now() - started).toFixed(0)} ms`)
    started = performance.now()
    oracle = new pg.Client({ connectionString: database.current.url })
    await oracle.connect()
    // Visibility map and statistics. The loader now runs VACUUM (ANALYZE) itself after its commit;
    // this one keeps the test independent of that (a loader that stopped vacuuming would otherwise
    // show up here as slow index-only scans, not as the loader's own failure). Cheap after it.
    await oracle.query('set statement_timeout = 0')
    await oracle.query('vacuum (analyze) wfa_users, wfa_memberships, wfa_todos, wfa_todo_lists, wfa_companies')
    timings.push(`vacuum (analyze) ${(performance.now() - started).toFixed(0)} ms`)
    let slowestCount = 0
    for (const list of LISTS) {
      let fastest = Infinity
      for (let run = 0; run < 3; run += 1) {
        const counted = performance.now()
        const { rows } = await oracle.query<{ n: string }>(`select count(*) as n from (${list.ids}) as l`)
        fastest = Math.min(fastest, performance.now() - counted)
        totals.set(list.name, Number(rows[0]?.n))
      }
      slowestCount = Math.max(slowestCount, fastest)
    }
    bounds.statementTimeoutMs = Math.max(STATEMENT_TIMEOUT_MS, Math.ceil(COUNT_MULTIPLE * slowestCount))
    bounds.queryTimeoutMs = Math.max(QUERY_TIMEOUT_MS, 2 * bounds.statementTimeoutMs)
    timings.push(`slowest count ${slowestCount.toFixed(0)} ms, so bounds ${bounds.statementTimeoutMs}/${bounds.queryTimeoutMs} ms`)
    const setup = await coldApp()
    try {
      keys.large = await setup.keyFor(1)
      keys.small = await setup.keyFor(2)
    } finally {
      await setup.close()
    }
  }, 120_000)

  afterAll(async () => {
    await oracle?.end()
    console.info(`[deep pages] scale ${SCALE}: ${timings.join(', ')}`)
  })

  it('seeds a list deep enough that skipping to its middle does not fit in the bounds', () => {
    expect(totals.get('users')).toBeGreaterThanOrEqual(SCALE)
    expect(totals.get('todos')).toBe(SCALE)
    for (const list of LISTS) expect(totals.get(list.name), list.name).toBeGreaterThanOrEqual(SCALE / 5)
  })

  for (const [index, list] of LISTS.entries()) {
    it(`answers cold random pages of ${list.name} with the right rows and the exact total`, async () => {
      const total = totals.get(list.name) as number
      const totalPages = Math.ceil(total / PER_PAGE)
      const pages = spreadPages(totalPages, PAGES_PER_LIST, mulberry32(22_000 + index))
      const separator = list.path.includes('?') ? '&' : '?'
      const seen: Array<{ page: number; status: number; ms: number }> = []
      const failures: string[] = []
      for (const page of pages) {
        const t = await coldApp()
        try {
          const started = performance.now()
          const res = await t.get(`${list.path}${separator}per_page=${PER_PAGE}&page=${page}`, keys.large)
          const ms = performance.now() - started
          seen.push({ page, status: res.statusCode, ms })
          if (res.statusCode !== 200) {
            failures.push(`page ${page}: ${res.statusCode} after ${ms.toFixed(0)} ms ${res.body.slice(0, 160)}`)
            continue
          }
          const body = res.json() as { data: Array<{ id: number }>; pagination: { page: number; per_page: number; total: number; total_pages: number } }
          expect(body.pagination, `page ${page}`).toEqual({ page, per_page: PER_PAGE, total, total_pages: totalPages })
          expect(body.data.map((row) => row.id), `page ${page}`).toEqual(await expectedIds(list, page))
        } finally {
          await t.close()
        }
      }
      const slowest = Math.max(...seen.map((s) => s.ms))
      timings.push(`${list.name}: ${seen.length} cold pages, slowest ${slowest.toFixed(0)} ms`)
      expect(failures, `cold pages of ${list.path} that did not answer 200`).toEqual([])
    }, 60_000)
  }

  it("keeps answering another company's cheap requests while one company asks deep pages from four workers", async () => {
    const t = await coldApp({ queryTimeoutMs: PRESSURE_QUERY_TIMEOUT_MS })
    try {
      const large: number[] = []
      const small: Array<{ status: number; ms: number; body: string }> = []
      const next = mulberry32(2_222)
      const began = performance.now()
      const deadline = began + PRESSURE_MS
      let asked = 0
      let running = true
      const workers = Array.from({ length: PRESSURE_WORKERS }, async () => {
        while (performance.now() < deadline && asked < PRESSURE_MAX_REQUESTS) {
          asked += 1
          const list = LISTS[Math.floor(next() * LISTS.length)] as ListCase
          const totalPages = Math.ceil((totals.get(list.name) as number) / PER_PAGE)
          // The deeper half: where skipping rows costs the most.
          const page = Math.ceil(totalPages / 2) + Math.floor(next() * Math.floor(totalPages / 2))
          const separator = list.path.includes('?') ? '&' : '?'
          const res = await t.get(`${list.path}${separator}per_page=${PER_PAGE}&page=${page}`, keys.large)
          large.push(res.statusCode)
        }
      })
      const probe = (async () => {
        // GET /v1/company, and a small list that surely reads the database, in turn.
        for (let n = 0; running; n += 1) {
          const started = performance.now()
          const res = await t.get(n % 2 === 0 ? '/v1/company' : '/v1/todos?per_page=10', keys.small)
          const ms = performance.now() - started
          small.push({ status: res.statusCode, ms, body: res.statusCode === 200 ? '' : res.body.slice(0, 160) })
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, PROBE_EVERY_MS - ms)))
        }
      })()
      await Promise.all(workers)
      const elapsed = performance.now() - began
      running = false
      await probe

      const count = (statuses: number[]) => {
        const by = new Map<number, number>()
        for (const status of statuses) by.set(status, (by.get(status) ?? 0) + 1)
        return [...by].map(([status, n]) => `${status}×${n}`).join(' ')
      }
      timings.push(`pressure ${elapsed.toFixed(0)} ms: company 1 ${large.length} deep pages (${count(large)}), company 2 ${small.length} probes (${count(small.map((s) => s.status))})`)
      const refused = small.filter((s) => s.status !== 200)
      expect(refused, "company 2's answers that were not 200").toEqual([])
      // A stalled instance answers few probes. A healthy one, on two shared cores, about half
      // of one every 20 ms (issue 22 measured 405 in 15 s with one deep-page worker).
      expect(small.length).toBeGreaterThanOrEqual(Math.floor(elapsed / PROBE_EVERY_MS / 4))
      // A deep page is a slow query at worst (504), never an outage (503) nor an error.
      expect(large.filter((status) => status !== 200 && status !== 504), "company 1's answers other than 200 and 504").toEqual([])

      // Not in any fail-fast mode afterwards: both companies' lists answer.
      expect((await t.get(`/v1/users?per_page=${PER_PAGE}`, keys.small)).statusCode).toBe(200)
      expect((await t.get(`/v1/todos?per_page=${PER_PAGE}`, keys.large)).statusCode).toBe(200)
    } finally {
      await t.close()
    }
  }, 60_000)
})
