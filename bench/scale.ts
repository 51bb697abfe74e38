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

interface Options {
  backends: Array<'sqlite' | 'postgres'>
  scale: number
  cacheDir: string
  seconds: number
  samples: number
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      backend: { type: 'string', default: 'both' },
      scale: { type: 'string', default: '1000000' },
      'cache-dir': { type: 'string', default: join(tmpdir(), 'fastify-workforce-api-bench') },
      seconds: { type: 'string', default: '3' },
      samples: { type: 'string', default: '200' },
    },
  })
  const backend = values.backend as string
  return {
    backends: backend === 'both' ? ['sqlite', 'postgres'] : [backend as 'sqlite' | 'postgres'],
    scale: Number(values.scale),
    cacheDir: values['cache-dir'] as string,
    seconds: Number(values.seconds),
    samples: Number(values.samples),
  }
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
    const notYet = id === 'user_id' ? sql`and user_id not in (select user_id from wfa_memberships where company_id = ${SMALL})` : sql``
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

interface Backend {
  storage: Storage
  db: Kysely<any>
  app(hideSeek: boolean): Promise<FastifyInstance>
  close(): Promise<void>
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
    return withApp(adapter, () => adapter.close())
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
  await admin.end()
  const adapter = await openPostgresAdapter({ connectionString: url.toString() }, { statementTimeoutMs: 60_000, queryTimeoutMs: 60_000 })
  if (!exists) {
    await growSmallCompany(adapter.db)
    await sql`analyze`.execute(adapter.db)
  }
  return withApp(adapter, () => adapter.close())
}

function withApp(adapter: { storage: Storage; db: Kysely<any>; keyStore: KeyStore; modules: ModuleRegistry }, close: () => Promise<void>): Backend {
  return {
    storage: adapter.storage,
    db: adapter.db,
    async app(hideSeek) {
      const app = Fastify()
      const storage = hideSeek ? withoutSeek(adapter.storage) : adapter.storage
      await app.register(workforceApi, { prefix: PREFIX, storage, keyStore: adapter.keyStore, modules: adapter.modules, rateLimit: false, openapi: false })
      await app.ready()
      return app
    },
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

async function main(): Promise<void> {
  const settings = options()
  log(`bench/scale: Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  const out = ['| backend | measure | figures | ratio |', '|---|---|---|---|']
  for (const kind of settings.backends) {
    log(`${kind}: opening (seeding on first use)`)
    const backend = await openBackend(kind, settings)
    try {
      out.push(...(await measure(backend, settings, `${kind}, before (COUNT + OFFSET)`, true, false)))
      out.push(...(await measure(backend, settings, kind, false, false)))
      out.push(...(await measure(backend, settings, `${kind}, 1 write/s`, false, true)))
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
