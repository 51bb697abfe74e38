/**
 * Lists at scale (issue 13): each goal as a ratio measured in one run, on SQLite and Postgres,
 * without and with a background writer (one write per second to the large company).
 *
 *   npm run build && npx tsx bench/scale.ts                    # both backends, 1,000,000 rows
 *   npx tsx bench/scale.ts --backend sqlite --scale 100000      # quicker
 *
 * Company 1 holds `--scale` rows of every list resource and company 2 exactly 1,000, in the same
 * database (seeded once by `workforce-api seed`, then cached: `--cache-dir`, default
 * $TMPDIR/fastify-workforce-api-bench; Postgres in the database `wfa_bench_scale_<scale>` on
 * WORKFORCE_TEST_PG_URL). Requests go through the whole plugin with `app.inject`, rate limiting
 * off. "before" rows run the same requests with the adapter's fast-list capability hidden: the
 * COUNT and OFFSET of every request, as before issue 13. Figures are reported, never asserted.
 *
 * Issue 22 adds two cases, each on a FRESH app (a new adapter, pool and plugin, so no page
 * boundary or total is remembered in the process) with the adapter's default bounds:
 *   cold      page 1 cold (median of 5 fresh apps, each primed by one GET /v1/company) and warm, then `--cold-pages` random pages of
 *             each list, each on its own fresh app: p50 and max of the deep pages as a ratio to
 *             that list's cold page 1 (goal p50 ≤ 3 ×, max ≤ 10 ×), and cold vs warm page 1
 *             (goal ≤ 3 ×). Non-200 answers are counted (their time is the time to the error).
 *   parallel  every page of `--parallel-list` (per_page=100) read twice on fresh apps: in order by
 *             one client, then in random order by `--parallel-workers` (8) clients; the wall time,
 *             pages/s, non-200 answers (goal 0) and the work done (this process's CPU, on
 *             Postgres the shared buffers touched) of the parallel read as a
 *             ratio to the sequential one (linear work: wall ≈ 1/parallelism … ≤ 1 ×, work ≈ 1 ×).
 * `--only classic,cold,parallel` picks cases (default all; "classic" is issue 13's). Each read is
 * cut off after `--max-seconds` and then reported as partial.
 *
 *   npx tsx bench/scale.ts --only cold,parallel --scale 1000000
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { openPostgresAdapter } from '../adapters/postgres/index.js'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { workforceApi } from '../src/plugin.js'
import { withoutSeek } from '../test/helpers/without-seek.js'
import type { KeyStore } from '../src/ports/key-store.js'
import type { ModuleRegistry } from '../src/ports/module-registry.js'
import type { Storage } from '../src/ports/storage.js'
import { mulberry32 } from '../src/seed/prng.js'

const PREFIX = '/api/public'
const LARGE = 1
const SMALL = 2
const SMALL_ROWS = 1_000
const ADMIN_URL = process.env.WORKFORCE_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres'
/** Tables of the list resources, with the column rows are ordered by (cloned to grow company 2). */
const TABLES: ReadonlyArray<readonly [string, string]> = [
  ['wfa_memberships', 'user_id'],
  ['wfa_employees', 'id'],
  ['wfa_roles', 'id'],
  ['wfa_projects', 'id'],
  ['wfa_shifts', 'id'],
  ['wfa_absences', 'id'],
  ['wfa_expenses', 'id'],
  ['wfa_todos', 'id'],
]

const CASES = ['classic', 'cold', 'parallel'] as const
type Case = (typeof CASES)[number]

interface Options {
  backends: Array<'sqlite' | 'postgres'>
  scale: number
  cacheDir: string
  seconds: number
  samples: number
  only: ReadonlySet<Case>
  coldPages: number
  parallelWorkers: number
  parallelList: string
  maxSeconds: number
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      backend: { type: 'string', default: 'both' },
      scale: { type: 'string', default: '1000000' },
      'cache-dir': { type: 'string', default: join(tmpdir(), 'fastify-workforce-api-bench') },
      seconds: { type: 'string', default: '3' },
      samples: { type: 'string', default: '200' },
      only: { type: 'string', default: CASES.join(',') },
      'cold-pages': { type: 'string', default: '20' },
      'parallel-workers': { type: 'string', default: '8' },
      'parallel-list': { type: 'string', default: 'users' },
      'max-seconds': { type: 'string', default: '900' },
    },
  })
  const backend = values.backend as string
  const only = (values.only as string).split(',').map((name) => name.trim())
  const unknown = only.filter((name) => !(CASES as readonly string[]).includes(name))
  if (unknown.length > 0) throw new Error(`--only: unknown case ${unknown.join(', ')} (cases: ${CASES.join(', ')})`)
  if (!['both', 'sqlite', 'postgres'].includes(backend)) throw new Error(`--backend: sqlite, postgres or both, not ${backend}`)
  return {
    only: new Set(only as Case[]),
    coldPages: positive(values['cold-pages'] as string, '--cold-pages'),
    parallelWorkers: positive(values['parallel-workers'] as string, '--parallel-workers'),
    parallelList: values['parallel-list'] as string,
    maxSeconds: positive(values['max-seconds'] as string, '--max-seconds'),
    backends: backend === 'both' ? ['sqlite', 'postgres'] : [backend as 'sqlite' | 'postgres'],
    scale: Number(values.scale),
    cacheDir: values['cache-dir'] as string,
    seconds: Number(values.seconds),
    samples: Number(values.samples),
  }
}

function positive(text: string, name: string): number {
  const value = Number(text)
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name}: a positive integer, not ${text}`)
  return value
}

const log = (line: string) => console.error(line)

function seed(target: string, scale: number): void {
  const started = performance.now()
  execFileSync(process.execPath, ['dist/cli.js', 'seed', '--db', target, '--scale', String(scale), '--json'], { stdio: ['ignore', 'ignore', 'inherit'] })
  log(`  seeded scale ${scale} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

/** Grows company 2 from the seed's 45 rows per resource to 1,000, cloning rows of company 1. */
async function growSmallCompany(db: Kysely<any>): Promise<void> {
  for (const [table, id] of TABLES) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where company_id = ${SMALL}`.execute(db)
    const missing = SMALL_ROWS - Number(rows[0]?.n ?? 0)
    if (missing <= 0) continue
    const names = await columnNames(db, table)
    const copied = names.filter((name) => name !== 'company_id' && (id === 'id' ? name !== 'id' : true))
    const list = sql.raw(copied.join(', '))
    // A person is a member of a company once (wfa_memberships_company_person).
    const notYet =
      id === 'user_id'
        ? sql`and user_id not in (select user_id from wfa_memberships where company_id = ${SMALL})
              and (person_id is null or person_id not in (select person_id from wfa_memberships where company_id = ${SMALL} and person_id is not null))`
        : sql``
    await sql`insert into ${sql.table(table)} (company_id, ${list})
      select ${SMALL}, ${list} from ${sql.table(table)} where company_id = ${LARGE} ${notYet} order by ${sql.ref(id)} limit ${missing}`.execute(db)
  }
}

async function columnNames(db: Kysely<any>, table: string): Promise<string[]> {
  const tables = await db.introspection.getTables()
  const found = tables.find((candidate) => candidate.name === table)
  if (found === undefined) throw new Error(`no table ${table}`)
  return found.columns.map((column) => column.name)
}

/**
 * What an operator runs after a bulk load: statistics for the planner, and the visibility map
 * without which an index-only scan still reads the table. Unbounded, on a connection of its own.
 */
async function vacuumAnalyze(url: string): Promise<void> {
  const started = performance.now()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('set statement_timeout = 0')
    await client.query('vacuum (analyze)')
  } finally {
    await client.end()
  }
  log(`  vacuum (analyze) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

interface Backend {
  storage: Storage
  db: Kysely<any>
  app(hideSeek: boolean): Promise<FastifyInstance>
  /** A new adapter over the same database (default bounds, no migrations) and a new plugin: nothing remembered. */
  fresh(): Promise<FreshApp>
  /** Shared buffers touched so far in this database (Postgres), for the work a read did; undefined on SQLite. */
  buffersTouched(): Promise<number | undefined>
  close(): Promise<void>
}

interface FreshApp {
  app: FastifyInstance
  close(): Promise<void>
}

type Ports = { storage: Storage; db: Kysely<any>; keyStore: KeyStore; modules: ModuleRegistry }

async function pluginApp(adapter: Ports, storage: Storage): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(workforceApi, { prefix: PREFIX, storage, keyStore: adapter.keyStore, modules: adapter.modules, rateLimit: false, openapi: false })
  await app.ready()
  return app
}

async function freshOver(open: () => Promise<Ports & { close(): Promise<void> }>): Promise<FreshApp> {
  const adapter = await open()
  try {
    const app = await pluginApp(adapter, adapter.storage)
    return {
      app,
      async close() {
        await app.close()
        await adapter.close()
      },
    }
  } catch (error) {
    await adapter.close()
    throw error
  }
}

async function openBackend(kind: 'sqlite' | 'postgres', settings: Options): Promise<Backend> {
  if (kind === 'sqlite') {
    mkdirSync(settings.cacheDir, { recursive: true })
    const file = join(settings.cacheDir, `scale-${settings.scale}-v1.db`)
    if (!existsSync(file)) {
      const building = `${file}.building`
      rmSync(building, { force: true })
      seed(building, settings.scale)
      const adapter = await openSqliteAdapter({ filename: building })
      await growSmallCompany(adapter.db)
      await adapter.close()
      renameSync(building, file)
    }
    const adapter = await openSqliteAdapter({ filename: file })
    return withApp(adapter, () => adapter.close(), {
      fresh: () => freshOver(() => openSqliteAdapter({ filename: file, migrate: false })),
      buffersTouched: async () => undefined,
    })
  }
  const name = `wfa_bench_scale_${settings.scale}`
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  const exists = (await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1
  if (!exists) {
    await admin.query(`create database ${pg.escapeIdentifier(name)}`)
    try {
      seed(url.toString(), settings.scale)
    } catch (error) {
      await admin.query(`drop database ${pg.escapeIdentifier(name)}`)
      throw error
    }
  }
  const adapter = await openPostgresAdapter({ connectionString: url.toString() }, { statementTimeoutMs: 60_000, queryTimeoutMs: 61_000 })
  if (!exists) {
    // Half-made databases are dropped: the next run would take one for ready and measure it.
    try {
      await growSmallCompany(adapter.db)
      await vacuumAnalyze(url.toString())
    } catch (error) {
      await adapter.close()
      await admin.query(`drop database ${pg.escapeIdentifier(name)}`)
      await admin.end()
      throw error
    }
  }
  await admin.end()
  return withApp(adapter, () => adapter.close(), {
    fresh: () => freshOver(() => openPostgresAdapter({ connectionString: url.toString() }, { migrate: false })),
    async buffersTouched() {
      // Backends report their counters when they end (a fresh app's pool is closed first, but
      // its backends exit a little after the client hangs up) or at most once a second; a new
      // snapshot is read each time.
      await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS))
      await sql`select pg_stat_clear_snapshot()`.execute(adapter.db)
      const { rows } = await sql<{ n: string }>`select blks_hit + blks_read as n from pg_stat_database where datname = current_database()`.execute(adapter.db)
      return Number(rows[0]?.n)
    },
  })
}

function withApp(adapter: Ports, close: () => Promise<void>, more: Pick<Backend, 'fresh' | 'buffersTouched'>): Backend {
  return {
    storage: adapter.storage,
    db: adapter.db,
    app: (hideSeek) => pluginApp(adapter, hideSeek ? withoutSeek(adapter.storage) : adapter.storage),
    ...more,
    close,
  }
}

async function keyOf(app: FastifyInstance, companyId: number): Promise<string> {
  return (await app.workforceApi.keys.create({ companyId, scopes: ['all'], expiresAt: null, name: 'bench' })).key
}

async function call(app: FastifyInstance, key: string, path: string): Promise<number> {
  const started = performance.now()
  const response = await app.inject({ method: 'GET', url: `${PREFIX}${path}`, headers: { 'x-api-key': key } })
  if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${response.body.slice(0, 200)}`)
  return performance.now() - started
}

/** Requests per second with 4 requests in flight, for `seconds`. */
async function throughput(app: FastifyInstance, key: string, path: string, seconds: number): Promise<number> {
  const until = performance.now() + seconds * 1000
  let done = 0
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < until) {
        await call(app, key, path)
        done += 1
      }
    }),
  )
  return done / seconds
}

async function p50(app: FastifyInstance, key: string, path: string, samples: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < samples; i += 1) times.push(await call(app, key, path))
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)] as number
}

/** Walks every page at per_page=100; the mean latency of the first and of the last 100 pages. */
async function walk(app: FastifyInstance, key: string, resource: string, rows: number): Promise<{ first: number; last: number; seconds: number }> {
  const pages = Math.ceil(rows / 100)
  const times: number[] = []
  const started = performance.now()
  for (let page = 1; page <= pages; page += 1) times.push(await call(app, key, `/v1/${resource}?per_page=100&page=${page}`))
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length
  return { first: mean(times.slice(0, 100)), last: mean(times.slice(-100)), seconds: (performance.now() - started) / 1000 }
}

/** One write per second to the large company: a shift changes status, a to-do is appended. */
function startWriter(db: Kysely<any>, scale: number): () => void {
  let n = 0
  const timer = setInterval(() => {
    n += 1
    const id = 1 + ((n * 7919) % scale)
    const write =
      n % 2 === 0
        ? sql`update wfa_shifts set status = ${n % 4 === 0 ? 'confirmed' : 'scheduled'}, updated_at = updated_at where id = ${id}`
        : sql`insert into wfa_todos (company_id, title, notes, status, priority, important, due_day, due_at, due_is_all_day, list_id, assigned_to, assignee_group_id, claimed_by, checklist, tag_ids, source, created_at, updated_at)
              select company_id, title, notes, status, priority, important, due_day, due_at, due_is_all_day, list_id, assigned_to, assignee_group_id, claimed_by, checklist, tag_ids, source, created_at, updated_at
              from wfa_todos where id = ${id}`
    write.execute(db).catch((error: unknown) => log(`writer: ${String(error)}`))
  }, 1000)
  return () => clearInterval(timer)
}

const FILTERS: ReadonlyArray<readonly [string, string]> = [
  ['shifts', ''],
  ['shifts', 'status=confirmed'],
  ['shifts', 'updated_since=2026-01-01T00:00:00.000Z'],
  ['shifts', 'date_from=2026-03-01&date_to=2026-03-31'],
  ['shifts', 'employee_id=1'],
  ['shifts', 'project_id=1'],
  ['todos', ''],
  ['todos', 'status=open'],
  ['todos', 'assigned_to=1'],
  ['todos', 'list_id=1'],
]

async function measure(backend: Backend, settings: Options, label: string, hideSeek: boolean, writer: boolean): Promise<string[]> {
  const app = await backend.app(hideSeek)
  const large = await keyOf(app, LARGE)
  const small = await keyOf(app, SMALL)
  const stop = writer ? startWriter(backend.db, settings.scale) : () => {}
  const lines: string[] = []
  try {
    const page1 = '/v1/shifts?per_page=25'
    const smallRps = await throughput(app, small, page1, settings.seconds)
    const largeRps = await throughput(app, large, page1, settings.seconds)
    lines.push(`| ${label} | page 1 throughput, ${settings.scale.toLocaleString('en')} vs 1,000 rows | ${largeRps.toFixed(0)} vs ${smallRps.toFixed(0)} req/s | **${((largeRps / smallRps) * 100).toFixed(0)} %** (goal ≥ 50 %) |`)
    log(`  ${label}: page 1 ${largeRps.toFixed(0)} vs ${smallRps.toFixed(0)} req/s`)

    const first = await p50(app, large, page1, settings.samples)
    const lastPage = Math.ceil(settings.scale / 25)
    const lastP50 = await p50(app, large, `/v1/shifts?per_page=25&page=${lastPage}`, settings.samples)
    lines.push(`| ${label} | last page, repeated: p50 vs page 1 | ${lastP50.toFixed(2)} vs ${first.toFixed(2)} ms | **${(lastP50 / first).toFixed(2)} ×** (goal ≤ 2) |`)
    log(`  ${label}: last page p50 ${lastP50.toFixed(2)} ms, page 1 ${first.toFixed(2)} ms`)

    const unfiltered = new Map<string, number>()
    for (const [resource, query] of FILTERS) {
      const path = `/v1/${resource}?per_page=25${query === '' ? '' : `&${query}`}`
      const time = await p50(app, large, path, Math.max(20, Math.floor(settings.samples / 4)))
      if (query === '') {
        unfiltered.set(resource, time)
        continue
      }
      const base = unfiltered.get(resource) as number
      lines.push(`| ${label} | ${resource}?${query}, page 1 p50 vs unfiltered | ${time.toFixed(2)} vs ${base.toFixed(2)} ms | **${(time / base).toFixed(2)} ×** (goal ≤ 2) |`)
      log(`  ${label}: ${resource}?${query} ${time.toFixed(2)} ms vs ${base.toFixed(2)} ms`)
    }

    if (!hideSeek) {
      const walked = await walk(app, large, 'shifts', settings.scale)
      lines.push(`| ${label} | walk of every page at per_page=100: last 100 pages vs first 100 (mean) | ${walked.last.toFixed(2)} vs ${walked.first.toFixed(2)} ms, ${walked.seconds.toFixed(0)} s in all | **${(walked.last / walked.first).toFixed(2)} ×** (goal ≤ 2) |`)
      log(`  ${label}: walk last ${walked.last.toFixed(2)} ms vs first ${walked.first.toFixed(2)} ms (${walked.seconds.toFixed(0)} s)`)
    }
  } finally {
    stop()
    await app.close()
  }
  return lines
}

// ---------------------------------------------------------------------------------------------
// Issue 22: any page, cold; every page, in parallel

/** The lists of the cold case, each with a documented filter where the issue found one slow. */
const COLD_LISTS: ReadonlyArray<readonly [string, string]> = [
  ['users', '/v1/users'],
  ['todos', '/v1/todos'],
  ['todos?status=open', '/v1/todos?status=open'],
  ['shifts in 2026', '/v1/shifts?date_from=2026-01-01&date_to=2026-12-31'],
  ['expenses', '/v1/expenses'],
]
const PER_PAGE = 100
/** Fresh apps whose page 1 is timed: their median is "cold page 1". */
const COLD_PAGE_1_SAMPLES = 5
const WARM_PAGE_1_SAMPLES = 20
/** Reads at once that prime a fresh app: SQLite's default read workers (2). */
const PRIMING_READS = 2
/** Time for Postgres backends that just ended to report their buffer counters. */
const STATS_SETTLE_MS = 1_500


const pageOf = (list: string, page: number) => `${list}${list.includes('?') ? '&' : '?'}per_page=${PER_PAGE}&page=${page}`
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`

interface Answer {
  ms: number
  status: number
  body: string
}

/** One request, timed; any status (the new cases count failures instead of stopping). */
async function ask(app: FastifyInstance, key: string, path: string): Promise<Answer> {
  const started = performance.now()
  const response = await app.inject({ method: 'GET', url: `${PREFIX}${path}`, headers: { 'x-api-key': key } })
  return { ms: performance.now() - started, status: response.statusCode, body: response.body }
}

/**
 * `work` on a fresh app, closed afterwards. With `primeWith`, that key first asks `GET /v1/company`
 * and then, twice at once, a list none of the cases times (roles): the key is verified (a
 * deliberately slow hash, then cached), pool connections are open and SQLite's read workers
 * started — costs a new process pays once whatever it lists. What is left cold is what issue 22
 * is about: no total and no page boundary of the timed list is remembered.
 */
async function onFresh<T>(backend: Backend, work: (app: FastifyInstance) => Promise<T>, primeWith?: string): Promise<T> {
  const fresh = await backend.fresh()
  try {
    if (primeWith !== undefined) {
      for (const primed of [
        await ask(fresh.app, primeWith, '/v1/company'),
        ...(await Promise.all(Array.from({ length: PRIMING_READS }, () => ask(fresh.app, primeWith, '/v1/roles?per_page=1')))),
      ]) {
        if (primed.status !== 200) throw new Error(`priming a fresh app: ${primed.status} ${primed.body.slice(0, 200)}`)
      }
    }
    return await work(fresh.app)
  } finally {
    await fresh.close()
  }
}

async function benchKey(backend: Backend): Promise<string> {
  return onFresh(backend, (app) => keyOf(app, LARGE))
}

async function totalPages(backend: Backend, key: string, list: string): Promise<number> {
  const answer = await onFresh(backend, (app) => ask(app, key, pageOf(list, 1)))
  if (answer.status !== 200) throw new Error(`${list} page 1: ${answer.status} ${answer.body.slice(0, 200)}`)
  return (JSON.parse(answer.body) as { pagination: { total_pages: number } }).pagination.total_pages
}

async function coldPages(backend: Backend, settings: Options, kind: string): Promise<string[]> {
  const key = await benchKey(backend)
  const next = mulberry32(22)
  const lines: string[] = []
  for (const [name, list] of COLD_LISTS) {
    const cold1: number[] = []
    const unprimed: number[] = []
    const failures: string[] = []
    let warm1 = 0
    let pages = 0
    for (let sample = 0; sample < COLD_PAGE_1_SAMPLES; sample += 1) {
      unprimed.push(await onFresh(backend, async (app) => (await ask(app, key, pageOf(list, 1))).ms))
      await onFresh(backend, async (app) => {
        const first = await ask(app, key, pageOf(list, 1))
        if (first.status !== 200) throw new Error(`${list} page 1 (cold): ${first.status} ${first.body.slice(0, 200)}`)
        cold1.push(first.ms)
        pages = (JSON.parse(first.body) as { pagination: { total_pages: number } }).pagination.total_pages
        if (sample > 0) return
        const warm: number[] = []
        for (let i = 0; i < WARM_PAGE_1_SAMPLES; i += 1) warm.push((await ask(app, key, pageOf(list, 1))).ms)
        warm1 = median(warm)
      }, key)
    }
    const deep: number[] = []
    const started = performance.now()
    for (let i = 0; i < settings.coldPages && pages > 1; i += 1) {
      if (performance.now() - started > settings.maxSeconds * 1000) {
        failures.push(`cut off after ${settings.maxSeconds} s`)
        break
      }
      const page = 2 + Math.floor(next() * (pages - 1))
      const answer = await onFresh(backend, (app) => ask(app, key, pageOf(list, page)), key)
      deep.push(answer.ms)
      if (answer.status !== 200) failures.push(`page ${page}: ${answer.status} after ${ms(answer.ms)}`)
    }
    const page1 = median(cold1)
    const p50 = deep.length === 0 ? Number.NaN : median(deep)
    const max = Math.max(...deep)
    const failed = failures.length === 0 ? '' : `; **${failures.length} not 200**: ${failures.slice(0, 3).join(', ')}${failures.length > 3 ? ' …' : ''}`
    lines.push(
      `| ${kind} | ${name}: ${deep.length} cold random pages of ${pages.toLocaleString('en')}, p50 / max vs cold page 1 | ${ms(p50)} / ${ms(max)} vs ${ms(page1)}${failed} | **${(p50 / page1).toFixed(2)} × / ${(max / page1).toFixed(2)} ×** (goal ≤ 3 / ≤ 10) |`,
      `| ${kind} | ${name}: page 1, cold (median of ${COLD_PAGE_1_SAMPLES} fresh apps) vs warm (p50); first request of an unprimed app | ${ms(page1)} vs ${ms(warm1)}; ${ms(median(unprimed))} | **${(page1 / warm1).toFixed(2)} ×** (goal ≤ 3) |`,
    )
    log(`  ${kind} cold ${name}: page 1 cold ${ms(page1)} (unprimed ${ms(median(unprimed))}), warm ${ms(warm1)}; deep p50 ${ms(p50)}, max ${ms(max)}${failed}`)
  }
  return lines
}

interface Read {
  seconds: number
  done: number
  failed: number
  /** This process's CPU (user + system; SQLite's read workers included), ms. */
  cpuMs: number
  buffers: number | undefined
  cutOff: boolean
}

/** Reads `pages` (in the order given) on one fresh app with `workers` clients, each taking the next page. */
async function readPages(backend: Backend, key: string, list: string, pages: number[], workers: number, maxSeconds: number): Promise<Read> {
  const buffersBefore = await backend.buffersTouched()
  const cpuBefore = process.cpuUsage()
  let next = 0
  let failed = 0
  let cutOff = false
  let seconds = 0
  const client = async (app: FastifyInstance, started: number) => {
    while (next < pages.length) {
      if (performance.now() - started > maxSeconds * 1000) {
        cutOff = true
        return
      }
      const page = pages[next++] as number
      if ((await ask(app, key, pageOf(list, page))).status !== 200) failed += 1
    }
  }
  await onFresh(
    backend,
    async (app) => {
      const started = performance.now()
      await Promise.all(Array.from({ length: workers }, () => client(app, started)))
      seconds = (performance.now() - started) / 1000
    },
    key,
  )
  const cpu = process.cpuUsage(cpuBefore)
  const buffersAfter = await backend.buffersTouched()
  return {
    seconds,
    done: Math.min(next, pages.length),
    failed,
    cpuMs: (cpu.user + cpu.system) / 1000,
    buffers: buffersBefore === undefined || buffersAfter === undefined ? undefined : buffersAfter - buffersBefore,
    cutOff,
  }
}

async function parallelRead(backend: Backend, settings: Options, kind: string): Promise<string[]> {
  const list = `/v1/${settings.parallelList}`
  const key = await benchKey(backend)
  const pages = await totalPages(backend, key, list)
  const inOrder = Array.from({ length: pages }, (_, i) => i + 1)
  const shuffled = [...inOrder]
  const next = mulberry32(8)
  for (let i = shuffled.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1))
    ;[shuffled[i], shuffled[j]] = [shuffled[j] as number, shuffled[i] as number]
  }
  const workers = settings.parallelWorkers
  log(`  ${kind} parallel: ${pages.toLocaleString('en')} pages of ${list}, in order by 1 client, then in random order by ${workers}`)
  const sequential = await readPages(backend, key, list, inOrder, 1, settings.maxSeconds)
  const parallel = await readPages(backend, key, list, shuffled, workers, settings.maxSeconds)
  // A read cut off is compared per page: its figures scaled to every page.
  const whole = (read: Read, value: number) => (value * pages) / Math.max(1, read.done)
  const ratio = (field: (read: Read) => number) => whole(parallel, field(parallel)) / whole(sequential, field(sequential))
  const describe = (read: Read) =>
    `${read.seconds.toFixed(1)} s, ${(read.done / read.seconds).toFixed(0)} pages/s${read.cutOff ? ` (cut off at ${read.done.toLocaleString('en')} pages)` : ''}, ${read.failed} not 200`
  const work = [
    `CPU ${ratio((read) => read.cpuMs).toFixed(2)} ×`,
    ...(parallel.buffers === undefined || sequential.buffers === undefined ? [] : [`buffers ${ratio((read) => read.buffers as number).toFixed(2)} ×`]),
  ].join(', ')
  log(`  ${kind} parallel: sequential ${describe(sequential)}; ${workers} workers ${describe(parallel)}; work ${work}`)
  return [
    `| ${kind} | all ${pages.toLocaleString('en')} pages of ${list} (per_page=${PER_PAGE}), fresh app: ${workers} workers in random order vs 1 in order, wall | ${describe(parallel)} vs ${describe(sequential)} | **${ratio((read) => read.seconds).toFixed(2)} ×** (goal ≤ 1, non-200 = 0) |`,
    `| ${kind} | same, work of the parallel read vs the sequential one (this process's CPU${parallel.buffers === undefined ? '' : ', Postgres buffers touched'}) | ${work} | (goal ≈ 1: linear in the rows) |`,
  ]
}

async function main(): Promise<void> {
  const settings = options()
  log(`bench/scale: Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  const out = ['| backend | measure | figures | ratio |', '|---|---|---|---|']
  for (const kind of settings.backends) {
    log(`${kind}: opening (seeding on first use)`)
    const backend = await openBackend(kind, settings)
    try {
      if (settings.only.has('classic')) {
        out.push(...(await measure(backend, settings, `${kind}, before (COUNT + OFFSET)`, true, false)))
        out.push(...(await measure(backend, settings, kind, false, false)))
        out.push(...(await measure(backend, settings, `${kind}, 1 write/s`, false, true)))
      }
      if (settings.only.has('cold')) out.push(...(await coldPages(backend, settings, kind)))
      if (settings.only.has('parallel')) out.push(...(await parallelRead(backend, settings, kind)))
    } finally {
      await backend.close()
    }
  }
  console.log(out.join('\n'))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
