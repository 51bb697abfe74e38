/**
 * Page 1 of filtered shift lists through the Postgres storage port, at 10,000 and
 * 1,000,000 shifts in company 1, plus what the `total` (COUNT) costs.
 *
 *   npx tsx bench/postgres-list.ts            # both sizes
 *   BENCH_SIZES=10000 BENCH_RUNS=30 npx tsx bench/postgres-list.ts
 *
 * Needs a Postgres server: WORKFORCE_TEST_PG_URL (an admin connection; default
 * postgres://postgres@127.0.0.1:5432/postgres). Each size runs in its own scratch database,
 * dropped at the end. Rows are generated in SQL (INSERT … SELECT generate_series), shaped
 * like real shifts: starts_at grows with id (shifts are entered roughly in date order),
 * four statuses, a third of rows updated a day after their start.
 */
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { openPostgresAdapter, type PostgresAdapter } from '../adapters/postgres/index.js'
import { postgresCodec } from '../adapters/postgres/postgres-codec.js'
import { createPostgresRunner } from '../adapters/postgres/postgres-database.js'
import type { PreparedQuery, SqlRunner } from '../adapters/sql/prepared.js'
import { SqlStorage } from '../adapters/sql/sql-storage.js'
import type { ShiftFilter } from '../src/ports/storage.js'
import { generateDataset } from '../src/seed/generate.js'

const ADMIN_URL = process.env.WORKFORCE_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres'
const SIZES = (process.env.BENCH_SIZES ?? '10000,1000000').split(',').map(Number)
const RUNS = Number(process.env.BENCH_RUNS ?? 50)
const WARMUP = 10
const PAGE = { limit: 25, offset: 0 }
/** Shifts span two years ending here; the newest week is what a sync usually asks for. */
const SPAN_END = Date.UTC(2026, 11, 31)
const SPAN_MS = 730 * 86_400_000
const DAY_MS = 86_400_000

interface Case {
  name: string
  companyId: number
  filter: ShiftFilter
}

const daysBeforeEnd = (days: number) => new Date(SPAN_END - days * DAY_MS)
/** The shift filter of `date_from`/`date_to` for the week ending `days` before the span's end. */
const confirmedInWeek = (days: number): ShiftFilter => ({ status: 'confirmed', startsFrom: daysBeforeEnd(days + 7), startsBefore: daysBeforeEnd(days) })

const CASES: Case[] = [
  { name: 'status + 7-day window (newest week)', companyId: 1, filter: confirmedInWeek(0) },
  { name: 'status + 7-day window (a year ago)', companyId: 1, filter: confirmedInWeek(365) },
  { name: 'updated_since (last 2 days)', companyId: 1, filter: { updatedSince: daysBeforeEnd(2) } },
  { name: 'updated_since (last year: half the rows)', companyId: 1, filter: { updatedSince: daysBeforeEnd(365) } },
  { name: 'status only', companyId: 1, filter: { status: 'confirmed' } },
  { name: 'no filter', companyId: 1, filter: {} },
  { name: 'small tenant (company 2), status', companyId: 2, filter: { status: 'confirmed' } },
]

/** A runner that times each statement; list() runs page and count concurrently. */
function timingRunner(inner: SqlRunner, last: Map<'page' | 'count', number>): SqlRunner {
  return {
    async all(query: PreparedQuery, values: unknown[]) {
      const started = performance.now()
      const rows = await inner.all(query, values)
      last.set(query.sql.startsWith('select count(') ? 'count' : 'page', performance.now() - started)
      return rows
    },
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}
const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1)

async function withAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  try {
    return await work(admin)
  } finally {
    await admin.end()
  }
}

/** Company 1 gets `size` shifts in all; company 2 keeps its 45 early rows and gets 45 newest ones. */
async function seed(adapter: PostgresAdapter, url: string, size: number): Promise<void> {
  const data = generateDataset()
  data.shifts = data.shifts.filter((shift) => shift.company_id !== 1)
  await adapter.loadDataset(data)
  // Its own connection: the adapter's pool has the 5 s statement timeout, seeding 1M rows does not.
  const seeder = new pg.Client({ connectionString: url })
  await seeder.connect()
  const insert = (companyId: number, count: number) =>
    seeder.query(
      `insert into wfa_shifts (company_id, employee_id, project_id, status, starts_at, ends_at, break_minutes, internal_notes, created_at, updated_at)
       select $1, 1 + i % 40, case when i % 5 = 0 then null else 1 + i % 40 end,
              (array['scheduled','confirmed','completed','cancelled'])[1 + (i + i / 7) % 4],
              s, s + interval '8 hours', 30, null, s - interval '7 days',
              case when i % 3 = 0 then s + interval '1 day' else s - interval '7 days' end
       from generate_series(1, $2::int) as i,
            lateral (select to_timestamp($3::float8 / 1000) - ($2::int - i) * ($4::float8 / $2::int) * interval '1 millisecond' as s) as t`,
      [companyId, count, SPAN_END, SPAN_MS],
    )
  try {
    await insert(1, size)
    await insert(2, 45)
    await seeder.query('vacuum (analyze) wfa_shifts')
  } finally {
    await seeder.end()
  }
}

async function explain(pool: pg.Pool, sql: string, values: unknown[]): Promise<string[]> {
  const { rows } = await pool.query({ text: `explain (analyze, buffers, costs off, timing off, summary on) ${sql}`, values })
  return rows.map((row) => String(row['QUERY PLAN']))
}

interface JsonPlanNode {
  'Node Type': string
  'Parallel Aware'?: boolean
  'Index Name'?: string
  Plans?: JsonPlanNode[]
}

/**
 * Executes a statement as a named prepared statement under `mode` and reports its scan and
 * execution time (median of 5). `force_generic_plan` shows the one plan Postgres may keep
 * for every tenant after five runs of a statement under the default `plan_cache_mode`.
 */
async function planTime(pool: pg.Pool, sql: string, values: unknown[], mode: string): Promise<{ scan: string; ms: number }> {
  const client = await pool.connect()
  try {
    await client.query(`set plan_cache_mode = ${mode}`)
    await client.query(`prepare wfa_bench_plan as ${sql}`)
    const literals = values.map((value) => pg.escapeLiteral(value instanceof Date ? value.toISOString() : String(value))).join(', ')
    const times: number[] = []
    let scan = ''
    for (let run = 0; run < 5; run++) {
      const { rows } = await client.query(`explain (analyze, format json) execute wfa_bench_plan(${literals})`)
      const [result] = rows[0]['QUERY PLAN'] as Array<{ Plan: JsonPlanNode; 'Execution Time': number }>
      if (result === undefined) throw new Error('no plan')
      times.push(result['Execution Time'])
      const scans: string[] = []
      const walk = (node: JsonPlanNode): void => {
        if (node['Node Type'].includes('Scan')) {
          const parallel = node['Parallel Aware'] === true ? 'Parallel ' : ''
          scans.push(`${parallel}${node['Node Type']}${node['Index Name'] ? ` (${node['Index Name']})` : ''}`)
        }
        node.Plans?.forEach(walk)
      }
      walk(result.Plan)
      scan = scans.join(' + ')
    }
    return { scan, ms: median(times) }
  } finally {
    await client.query('deallocate wfa_bench_plan; reset plan_cache_mode')
    client.release()
  }
}

/**
 * The page statement planned filter-first: `id + 0` cannot be read from an index in order,
 * so Postgres finds the matching rows through the filter's index and keeps the 25 lowest
 * ids (top-N sort). The shared SQL does this when a time range is present; forcing it on every
 * case shows why it is not done for equality-only filters. See the docs.
 */
function filterFirst(page: PreparedQuery): PreparedQuery {
  const sql = page.sql.replace(/ order by "s"\."id" /, ' order by "s"."id" + 0 ')
  if (sql === page.sql) throw new Error(`unexpected page SQL: ${page.sql}`)
  return { sql, params: page.params }
}

interface Timings {
  list: number[]
  page: number[]
  count: number[]
  filterFirst: number[]
  total: number
}

/** Runs one case WARMUP + RUNS times through the storage port, timing each statement too. */
async function runCase(pool: pg.Pool, adapter: PostgresAdapter, { companyId, filter }: Case): Promise<Timings & { captured: Captured[] }> {
  const last = new Map<'page' | 'count', number>()
  const captured: Captured[] = []
  const inner = createPostgresRunner(pool)
  const recording: SqlRunner = { all: (query, values) => (captured.push({ query, values }), inner.all(query, values)) }
  const storage = new SqlStorage(adapter.db, timingRunner(recording, last), postgresCodec)
  const timings: Timings = { list: [], page: [], count: [], filterFirst: [], total: 0 }
  for (let run = 0; run < WARMUP + RUNS; run++) {
    captured.length = 0
    const t0 = performance.now()
    const result = await storage.shifts.list(companyId, filter, PAGE)
    const elapsed = performance.now() - t0
    timings.total = result.total
    if (run < WARMUP) continue
    timings.list.push(elapsed)
    timings.page.push(last.get('page') ?? Number.NaN)
    timings.count.push(last.get('count') ?? Number.NaN)
  }
  const page = captured.find(({ query }) => !query.sql.startsWith('select count('))
  if (page === undefined) throw new Error('no page statement captured')
  const variant = filterFirst(page.query)
  for (let run = 0; run < WARMUP + RUNS; run++) {
    const t0 = performance.now()
    await inner.all(variant, page.values)
    if (run >= WARMUP) timings.filterFirst.push(performance.now() - t0)
  }
  return { ...timings, captured: [...captured] }
}

type Captured = { query: PreparedQuery; values: unknown[] }

const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)] ?? Number.NaN

async function measure(size: number): Promise<void> {
  const name = `wfa_bench_${randomBytes(4).toString('hex')}`
  await withAdmin((admin) => admin.query(`create database ${pg.escapeIdentifier(name)}`))
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  const adapter = await openPostgresAdapter({ connectionString: url.toString() })
  try {
    const started = performance.now()
    await seed(adapter, url.toString(), size)
    const { rows } = await adapter.pool.query(`select pg_size_pretty(pg_total_relation_size('wfa_shifts')) as size`)
    const seconds = ms((performance.now() - started) / 1000)
    console.log(`\n## ${size.toLocaleString('en')} shifts in company 1 (seeded in ${seconds} s, wfa_shifts ${rows[0].size})\n`)
    const columns = ['matching rows', 'list() median ms', 'list() p95 ms', 'page stmt median ms', 'count stmt median ms', 'page with id + 0 forced median ms']
    console.log(`| case | ${columns.join(' | ')} |`)
    console.log('|---|---:|---:|---:|---:|---:|---:|')
    const plans: string[] = []
    for (const testCase of CASES) {
      const t = await runCase(adapter.pool, adapter, testCase)
      const cells = [t.total.toLocaleString('en'), ms(median(t.list)), ms(p95(t.list)), ms(median(t.page)), ms(median(t.count)), ms(median(t.filterFirst))]
      console.log(`| ${testCase.name} | ${cells.join(' | ')} |`)
      for (const { query, values } of t.captured) {
        const kind = query.sql.startsWith('select count(') ? 'count' : 'page'
        plans.push(`-- ${testCase.name}: ${kind}`, ...(await explain(adapter.pool, query.sql, values)).map((line) => `   ${line}`))
      }
    }

    // Generic plans: what a small tenant would run if Postgres kept one plan for all tenants.
    console.log('\nSmall tenant (company 2, 90 shifts): its custom plan against the generic plan of the same statement:\n')
    console.log('| filter | statement | custom plan | custom ms | generic plan | generic ms |')
    console.log('|---|---|---|---:|---|---:|')
    const skewFilters: Array<[string, ShiftFilter]> = [
      ['no filter', {}],
      ['updated_since (last 2 days)', { updatedSince: new Date(SPAN_END - 2 * DAY_MS) }],
      ['status', { status: 'confirmed' }],
    ]
    for (const [label, filter] of skewFilters) {
      const t = await runCase(adapter.pool, adapter, { name: label, companyId: 2, filter })
      for (const { query, values } of t.captured) {
        const custom = await planTime(adapter.pool, query.sql, values, 'force_custom_plan')
        const generic = await planTime(adapter.pool, query.sql, values, 'force_generic_plan')
        const kind = query.sql.startsWith('select count(') ? 'count' : 'page'
        console.log(`| ${label} | ${kind} | ${custom.scan} | ${ms(custom.ms)} | ${generic.scan} | ${ms(generic.ms)} |`)
      }
    }

    console.log(`\nEXPLAIN (ANALYZE, BUFFERS) at ${size.toLocaleString('en')} rows (custom plans):\n`)
    console.log(plans.join('\n'))
  } finally {
    await adapter.close()
    await withAdmin((admin) => admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`))
  }
}

const { rows: settings } = await withAdmin((admin) =>
  admin.query(`select version(), current_setting('shared_buffers') as shared_buffers, current_setting('work_mem') as work_mem,
                      current_setting('random_page_cost') as random_page_cost`),
)
const server = settings[0]
console.log(`# Postgres list benchmark — ${RUNS} runs per case after ${WARMUP} warm-up runs, page 1 of 25`)
console.log(
  `${server.version}; shared_buffers ${server.shared_buffers}, work_mem ${server.work_mem}, random_page_cost ${server.random_page_cost}; Node ${process.version}`,
)
for (const size of SIZES) await measure(size)
