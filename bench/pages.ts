/**
 * Issue 25: page 1 of every list and a by-id GET of every resource through the real
 * `workforce-api serve` (the built CLI, default options, a key made by `keys create`), against a
 * hand-written Fastify route over the same database (bench/pages-baseline.ts), on SQLite and
 * Postgres; and the 304 path of each route (`If-None-Match` with the ETag of a first 200) against
 * its 200 path. Each backend gets a fresh database seeded by `workforce-api seed --scale <n>`:
 * company 1 has `--scale` rows of every list resource, company 2 has 45.
 *
 *   npm run build && npx tsx bench/pages.ts                          # every route, both backends
 *   npx tsx bench/pages.ts --backends sqlite --routes users,company --rounds 1
 *   npx tsx bench/pages.ts --profile                                 # also the corridor's stage costs
 *
 * Method: the two servers are child processes; for each route, round after round, serve (200),
 * the baseline (200) and serve (304) are loaded in turn by the same autocannon in this process
 * (a warm-up before each in the first round), so each round gives a serve/baseline pair and a
 * 304/200 pair under the same conditions. CPU per request is read from /proc for the server
 * process (all threads and its main thread) and, on Postgres, for the database's backends.
 * At start-up every route's JSON is fetched from both and must be equal, or the run fails.
 * Figures are reported, never asserted. Recorded figures: docs/benchmarks.md, "Pages through serve".
 */
import { execFileSync } from 'node:child_process'
import { deepStrictEqual } from 'node:assert/strict'
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { integer } from './options.js'
import { BASELINE_PREFIX } from './pages-baseline.js'
import { runStatusLoad, type StatusLoadResult } from './pages-load.js'
import { BASELINE_RESOURCES } from './pages-routes.js'
import { ratioTable, stageTable, type Backend, type Measurement, type Path, type Route, type StageRow } from './pages-report.js'
import { STAGE_NAMES, stageTimes } from './pages-stages.js'
import { processCpuMicros, startBaseline, startServe, type CpuSample, type PagesTarget } from './pages-targets.js'
import { scratchPostgresDatabase } from './scratch-postgres.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/**
 * The build this run measures: a copy of dist/ (or `--dist`) taken at start, so a rebuild
 * meanwhile (other work in the checkout) changes nothing under a running serve. Under
 * node_modules, so the copy resolves the same packages as dist/ does.
 */
const SNAPSHOT = join(ROOT, 'node_modules', '.cache', `wfa-pages-dist-${process.pid}`)
const CLI = join(SNAPSHOT, 'cli.js')
const SERVE_PREFIX = '/api/public'
const PG_SERVER_URL = process.env.WORKFORCE_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test'
/** A key budget no run reaches: the rate-limit stage still runs on every request, it never answers 429. */
const KEY_RATE_LIMIT = 1_000_000_000
/** `--routes` names: the resources' and `company`. */
const ROUTE_NAMES = [...BASELINE_RESOURCES.map((r) => r.path), 'company']

const PAGES_USAGE = `Usage: npx tsx bench/pages.ts [options]   (npm run bench -- --only pages)

  --backends <list>     sqlite, postgres or both, comma-separated                 [sqlite,postgres]
  --scale <n>           rows of every list resource in company 1 (company 2: 45)  [20000]
  --companies <ids>     companies whose routes are measured                       [1,2]
  --routes <list>       resources (list and by-id) and/or company                 [${ROUTE_NAMES.join(',')}]
  --duration <s>        seconds of measured load per target, round and route      [2]
  --warmup <s>          seconds of unmeasured load before each target's first round [1]
  --rounds <n>          rounds of serve, baseline, serve-304 per route            [2]
  --connections <n>     autocannon connections                                   [20]
  --per-page <n>        per_page of page 1                                        [25]
  --profile             also profile serve's main thread per stage (--profile-routes)
  --profile-routes <l>  routes profiled, e.g. users,users/:id                     [users,users/:id]
  --profile-seconds <s> profiled seconds per route and path                       [5]
  --dist <dir>          the build to serve (copied at start)                       [dist]
  --serve-flags <f>     more flags for serve, space-separated, as --serve-flags="--answer-cache 0" (kept answers off:
                        every 200 runs its query, the 200 of an answer that changed) []
  --json <file>         also write every figure as JSON
  --report <file>       only print the tables of an earlier run's --json file
  --help`

interface Options {
  backends: Backend[]
  scale: number
  companies: number[]
  routes: string[]
  durationS: number
  warmupS: number
  rounds: number
  connections: number
  perPage: number
  profile: boolean
  profileRoutes: string[]
  profileSeconds: number
  dist: string
  /** Extra flags of `serve` (`--answer-cache 0`). */
  serveFlags: string[]
  json: string | undefined
  report: string | undefined
  help: boolean
}

function parsePagesOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      backends: { type: 'string', default: 'sqlite,postgres' },
      scale: { type: 'string', default: '20000' },
      companies: { type: 'string', default: '1,2' },
      routes: { type: 'string', default: ROUTE_NAMES.join(',') },
      duration: { type: 'string', default: '2' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '2' },
      connections: { type: 'string', default: '20' },
      'per-page': { type: 'string', default: '25' },
      profile: { type: 'boolean', default: false },
      'profile-routes': { type: 'string', default: 'users,users/:id' },
      'profile-seconds': { type: 'string', default: '5' },
      dist: { type: 'string', default: join(ROOT, 'dist') },
      'serve-flags': { type: 'string', default: '' },
      json: { type: 'string' },
      report: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  const list = (text: string) => text.split(',').map((item) => item.trim()).filter((item) => item !== '')
  const backends = list(values.backends)
  for (const backend of backends) if (backend !== 'sqlite' && backend !== 'postgres') throw new TypeError(`--backends: sqlite or postgres, not "${backend}"`)
  const routes = list(values.routes)
  for (const route of routes) if (!ROUTE_NAMES.includes(route)) throw new TypeError(`--routes: one of ${ROUTE_NAMES.join(', ')}, not "${route}"`)
  return {
    backends: backends as Backend[],
    scale: integer('--scale', values.scale, 40),
    companies: list(values.companies).map((id) => integer('--companies', id, 1)),
    routes,
    durationS: integer('--duration', values.duration, 1),
    warmupS: integer('--warmup', values.warmup, 0),
    rounds: integer('--rounds', values.rounds, 1),
    connections: integer('--connections', values.connections, 1),
    perPage: integer('--per-page', values['per-page'], 1, 100),
    profile: values.profile,
    profileRoutes: list(values['profile-routes']),
    profileSeconds: integer('--profile-seconds', values['profile-seconds'], 1),
    dist: values.dist,
    serveFlags: values['serve-flags'].split(' ').filter((flag) => flag !== ''),
    json: values.json,
    report: values.report,
    help: values.help,
  }
}





const log = (line: string) => console.error(line)

async function main(): Promise<void> {
  let options: Options
  try {
    options = parsePagesOptions(process.argv.slice(2))
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${PAGES_USAGE}`)
    process.exitCode = 1
    return
  }
  if (options.help) {
    console.log(PAGES_USAGE)
    return
  }
  if (options.report !== undefined) {
    const run = JSON.parse(readFileSync(options.report, 'utf8')) as RecordedRun
    console.log(report(run))
    return
  }
  const dist = options.dist
  if (!existsSync(join(dist, 'cli.js'))) throw new Error(`${join(dist, 'cli.js')} not found: build first (npm run build)`)
  const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at start; ${dist} built ${statSync(join(dist, 'cli.js')).mtime.toISOString()}`
  log(`pages: ${machine}`)
  cpSync(dist, SNAPSHOT, { recursive: true, filter: (source) => !source.startsWith(join(dist, 'portal')) })
  const work = mkdtempSync(join(tmpdir(), 'wfa-pages-'))
  const measurements: Measurement[] = []
  const stages: StageRow[] = []
  const routesSeen: Array<Route & { backend: Backend }> = []
  try {
    for (const backend of options.backends) {
      await runBackend(backend, options, work, measurements, stages, routesSeen)
    }
  } finally {
    rmSync(SNAPSHOT, { recursive: true, force: true })
    rmSync(work, { recursive: true, force: true })
  }
  console.log(`\n${report({ machine, options, routes: routesSeen, measurements, stages })}`)
  if (options.json !== undefined) {
    writeFileSync(options.json, `${JSON.stringify({ machine, options, routes: routesSeen, measurements, stages }, null, 2)}\n`)
    log(`pages: figures written to ${options.json}`)
  }
}

/** What `--json` writes and `--report` reads. */
interface RecordedRun {
  machine: string
  options: Options
  routes: Array<Route & { backend: Backend }>
  measurements: Measurement[]
  stages: StageRow[]
}

function report(run: RecordedRun): string {
  const { options } = run
  const settings =
    `scale ${options.scale}, per_page ${options.perPage}, ${options.connections} connections, ${options.rounds} rounds × ` +
    `(serve, baseline, serve 304) × ${options.durationS} s per route, ${options.warmupS} s warm-up before each target's first round`
  const sections = [`${run.machine}\n${settings}`]
  for (const backend of options.backends) sections.push(ratioTable(backend, run.routes.filter((r) => r.backend === backend), run.measurements))
  if (run.stages.length > 0) sections.push(stageTable(run.stages))
  return sections.join('\n\n')
}

async function runBackend(
  backend: Backend,
  options: Options,
  work: string,
  measurements: Measurement[],
  stages: StageRow[],
  routesSeen: Array<Route & { backend: Backend }>,
): Promise<void> {
  const started = performance.now()
  let db: string
  let drop = async () => {}
  let pgCpu: (() => Promise<Map<number, number>>) | undefined
  if (backend === 'sqlite') {
    db = join(work, 'pages.db')
    cli(['seed', '--db', db, '--scale', String(options.scale), '--json'])
  } else {
    const scratch = await scratchPostgresDatabase(PG_SERVER_URL, `wfa_bench_pages_${process.pid}`, (url) => {
      cli(['seed', '--db', url, '--scale', String(options.scale), '--json'])
    })
    db = scratch.db
    drop = () => scratch.drop()
    // What an operator runs after a bulk load: planner statistics and the visibility map.
    const client = new pg.Client({ connectionString: db })
    await client.connect()
    await client.query('vacuum (analyze)').finally(() => client.end())
    pgCpu = () => backendCpu(scratch.admin, scratch.name)
  }
  log(`pages: ${backend}: seeded scale ${options.scale} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const keys = new Map(
    options.companies.map((company) => {
      const out = cli(['keys', 'create', '--db', db, '--company', String(company), '--scopes', 'all', '--name', 'pages-bench', '--rate-limit', String(KEY_RATE_LIMIT), '--json'])
      return [company, (JSON.parse(out.trim().split('\n').at(-1) as string) as { key: string }).key] as const
    }),
  )

  const targets: PagesTarget[] = []
  try {
    const serve = await startServe({ cli: CLI, db, flags: options.serveFlags, ...(options.profile ? { profile: join(work, `serve-${backend}.cpuprofile`) } : {}) })
    targets.push(serve)
    const baseline = await startBaseline(db, options.profile ? join(work, `baseline-${backend}.cpuprofile`) : undefined)
    targets.push(baseline)
    log(`pages: ${backend}: serve pid ${serve.pid}, baseline pid ${baseline.pid}`)
    const routes: Route[] = []
    for (const company of options.companies) {
      routes.push(...(await discoverRoutes(serve, baseline, company, keys.get(company) as string, options)))
    }
    routesSeen.push(...routes.map((route) => ({ ...route, backend })))
    log(`pages: ${backend}: ${routes.length} routes answer the same JSON on both; ${routes.filter((r) => r.etag !== undefined).length} with an ETag`)

    for (const route of routes) {
      for (let round = 1; round <= options.rounds; round++) {
        const paths: Path[] = route.etag === undefined ? ['serve', 'baseline'] : ['serve', 'baseline', 'serve-304']
        for (const path of paths) {
          const target = path === 'baseline' ? baseline : serve
          const load = loadOf(route, path, target, options)
          if (round === 1 && options.warmupS > 0) checked(route, path, await runStatusLoad({ ...load, durationS: options.warmupS }))
          const loadAverage = loadavg()[0] as number
          const measured = await measure(target, pgCpu, () => runStatusLoad({ ...load, durationS: options.durationS }))
          const result = checked(route, path, measured.result)
          measurements.push({
            backend,
            company: route.company,
            route: route.label,
            path,
            round,
            requestsPerSecond: result.requestsPerSecond,
            p50: result.latency.p50,
            p99: result.latency.p99,
            requests: result.requests,
            cpuMicros: measured.cpu.total / result.requests,
            mainMicros: measured.cpu.main / result.requests,
            pgMicros: measured.pg === undefined ? undefined : measured.pg / result.requests,
            loadAverage,
          })
        }
        const last = (path: Path) => measurements.filter((m) => m.path === path && m.route === route.label && m.company === route.company && m.backend === backend).at(-1)
        const s = last('serve') as Measurement
        const b = last('baseline') as Measurement
        const n = last('serve-304')
        log(
          `pages: ${backend} company ${route.company} ${route.label.padEnd(14)} round ${round}: serve ${s.requestsPerSecond.toFixed(0)}, ` +
            `baseline ${b.requestsPerSecond.toFixed(0)} req/s (${(s.requestsPerSecond / b.requestsPerSecond).toFixed(2)} ×)` +
            (n === undefined || route.etag === undefined ? `; 304: ${route.no304}` : `; 304 ${n.requestsPerSecond.toFixed(0)} req/s (${(n.requestsPerSecond / s.requestsPerSecond).toFixed(2)} ×)`) +
            `, load ${(loadavg()[0] as number).toFixed(2)}`,
        )
      }
    }

    if (options.profile) {
      const profiles = profileDir()
      for (const route of routes.filter((r) => options.profileRoutes.includes(r.label))) {
        // The baseline too, bucketed the same way: what serve adds, stage by stage.
        const paths: Path[] = route.etag === undefined ? ['serve', 'baseline'] : ['serve', 'serve-304', 'baseline']
        for (const path of paths) {
          const target = path === 'baseline' ? baseline : serve
          const load = loadOf(route, path, target, options)
          checked(route, path, await runStatusLoad({ ...load, durationS: 1 }))
          await target.startProfile()
          const measured = await measure(target, pgCpu, () => runStatusLoad({ ...load, durationS: options.profileSeconds }))
          const profilePath = join(profiles, `${backend}-company-${route.company}-${route.label.replace('/:id', '-by-id')}-${path}.cpuprofile`)
          renameSync(await target.stopProfile(), profilePath)
          const result = checked(route, path, measured.result)
          const unprofiled = measurements.filter((m) => m.backend === backend && m.company === route.company && m.route === route.label && m.path === path)
          stages.push(stageRow(backend, route, path, result, measured, profilePath, unprofiled))
          log(`pages: ${backend} company ${route.company} ${route.label} ${path}: profiled ${result.requests} requests`)
        }
      }
    }
  } finally {
    await Promise.all(targets.map((target) => target.close()))
    await drop()
  }
}

/** Kept after the run (they are small) for a closer look: `node --cpu-prof`'s format, e.g. Chrome's DevTools. */
let keptProfiles: string | undefined
function profileDir(): string {
  if (keptProfiles === undefined) {
    keptProfiles = mkdtempSync(join(tmpdir(), 'wfa-pages-profiles-'))
    log(`pages: CPU profiles in ${keptProfiles}`)
  }
  return keptProfiles
}

function loadOf(route: Route, path: Path, target: PagesTarget, options: Options) {
  const headers = path === 'baseline' ? {} : path === 'serve-304' ? { ...route.headers, 'if-none-match': route.etag as string } : route.headers
  return {
    url: `${target.origin}${path === 'baseline' ? route.baselinePath : route.servePath}`,
    headers,
    connections: options.connections,
    expectStatus: path === 'serve-304' ? 304 : 200,
  }
}

function checked(route: Route, path: Path, result: StatusLoadResult): StatusLoadResult {
  if (result.failures > 0 || result.requests === 0) {
    throw new Error(
      `${path} company ${route.company} ${route.label}: ${result.failures} failed requests out of ${result.requests + result.failures}` +
        (result.unexpectedStatus === undefined ? '' : ` (first unexpected status ${result.unexpectedStatus})`),
    )
  }
  return result
}

async function measure(
  target: PagesTarget,
  pgCpu: (() => Promise<Map<number, number>>) | undefined,
  run: () => Promise<StatusLoadResult>,
): Promise<{ result: StatusLoadResult; cpu: CpuSample; pg: number | undefined }> {
  const pgBefore = await pgCpu?.()
  const before = target.cpu()
  const result = await run()
  const after = target.cpu()
  const pgAfter = await pgCpu?.()
  let pgMicros: number | undefined
  if (pgBefore !== undefined && pgAfter !== undefined) {
    // Per backend: one that appeared during the round counts from zero, one that left is lost (rare).
    pgMicros = 0
    for (const [pid, micros] of pgAfter) pgMicros += micros - (pgBefore.get(pid) ?? 0)
  }
  return { result, cpu: { total: after.total - before.total, main: after.main - before.main }, pg: pgMicros }
}

/** CPU used so far by each backend connected to `database`, µs, from /proc (same machine). */
async function backendCpu(admin: pg.Client, database: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database])
  const cpu = new Map<number, number>()
  for (const { pid } of rows) {
    try {
      cpu.set(pid, processCpuMicros(`/proc/${pid}/stat`))
    } catch {
      // Gone since the query: its time is lost either way.
    }
  }
  return cpu
}

/**
 * Every measured route of `company`, checked: page 1 of each list, the first row of that page by
 * id, and the company. Both servers must answer the same JSON; serve's ETag, if any, must get a 304.
 */
async function discoverRoutes(serve: PagesTarget, baseline: PagesTarget, company: number, key: string, options: Options): Promise<Route[]> {
  const headers = { 'x-api-key': key }
  const routes: Route[] = []
  const add = async (label: string, path: string) => {
    const servePath = `${SERVE_PREFIX}/v1/${path}`
    const baselinePath = `${BASELINE_PREFIX}/${company}/v1/${path}`
    const [served, hand] = await Promise.all([
      fetch(`${serve.origin}${servePath}`, { headers }),
      fetch(`${baseline.origin}${baselinePath}`),
    ])
    const [serveBody, handBody] = await Promise.all([served.json(), hand.json()])
    if (served.status !== 200 || hand.status !== 200) {
      throw new Error(`company ${company} ${label}: serve answered ${served.status}, the baseline ${hand.status}: ${JSON.stringify(serveBody)}`)
    }
    deepStrictEqual(handBody, serveBody, `company ${company} ${label}: the hand-written route and serve answer different JSON`)
    const etag = served.headers.get('etag') ?? undefined
    let no304: string | undefined = etag === undefined ? 'no ETag' : undefined
    if (etag !== undefined) {
      const conditional = await fetch(`${serve.origin}${servePath}`, { headers: { ...headers, 'if-none-match': etag } })
      await conditional.arrayBuffer()
      if (conditional.status !== 304) no304 = `ETag, but If-None-Match answered ${conditional.status}`
    }
    const body = serveBody as { data: unknown; pagination?: { total: number } }
    routes.push({
      company,
      label,
      servePath,
      baselinePath,
      headers,
      etag: no304 === undefined ? etag : undefined,
      ...(no304 === undefined ? {} : { no304 }),
      total: body.pagination?.total ?? 1,
    })
    return body
  }
  for (const name of options.routes) {
    if (name === 'company') {
      await add('company', 'company')
      continue
    }
    const page = (await add(name, `${name}?per_page=${options.perPage}`)) as unknown as { data: Array<{ id: number }>; pagination: { total_pages: number } }
    await sameLastPage(serve, baseline, company, headers, name, page.pagination.total_pages, options.perPage)
    const first = page.data[0]
    if (first === undefined) throw new Error(`company ${company} has no ${name}: nothing to GET by id`)
    await add(`${name}/:id`, `${name}/${first.id}`)
  }
  return routes
}

/**
 * The last page of a list, from both, must be equal too (not measured): page 1 alone let the old
 * users baseline (bench/bare-app.ts) join people by the wrong column, the 3 members it got wrong
 * being the last of company 2.
 */
async function sameLastPage(
  serve: PagesTarget,
  baseline: PagesTarget,
  company: number,
  headers: Record<string, string>,
  name: string,
  lastPage: number,
  perPage: number,
): Promise<void> {
  if (lastPage <= 1) return
  const query = `${name}?per_page=${perPage}&page=${lastPage}`
  const [served, hand] = await Promise.all([
    fetch(`${serve.origin}${SERVE_PREFIX}/v1/${query}`, { headers }).then((r) => r.json()),
    fetch(`${baseline.origin}${BASELINE_PREFIX}/${company}/v1/${query}`).then((r) => r.json()),
  ])
  deepStrictEqual(hand, served, `company ${company} ${name} page ${lastPage}: the hand-written route and serve answer different JSON`)
}

function stageRow(
  backend: Backend,
  route: Route,
  path: Path,
  result: StatusLoadResult,
  measured: { cpu: CpuSample; pg: number | undefined },
  profilePath: string,
  unprofiled: Measurement[],
): StageRow {
  const times = stageTimes(profilePath, ROOT)
  const mainMicros = measured.cpu.main / result.requests
  // The profiler's samples are spaced in wall time, and sampling slows the process (about 2 × for
  // a request of 100 µs here): each stage's share of the samples is scaled to the CPU the main
  // thread used per request in the unprofiled rounds of the same route, when there were some.
  const requests = unprofiled.reduce((n, m) => n + m.requests, 0)
  const scaleMicros = requests === 0 ? mainMicros : unprofiled.reduce((n, m) => n + m.mainMicros * m.requests, 0) / requests
  const perRequest = (micros: number) => (micros / times.busyMicros) * scaleMicros
  const stagesUs: Record<string, number> = {}
  for (const name of STAGE_NAMES) stagesUs[name] = perRequest(times.byStage.get(name) ?? 0)
  return {
    backend,
    company: route.company,
    route: route.label,
    path,
    requestsPerSecond: result.requestsPerSecond,
    stages: stagesUs,
    mainMicros: scaleMicros,
    profiledMainMicros: mainMicros,
    offMainMicros:
      requests === 0
        ? (measured.cpu.total - measured.cpu.main) / result.requests
        : unprofiled.reduce((n, m) => n + (m.cpuMicros - m.mainMicros) * m.requests, 0) / requests,
    pgMicros:
      measured.pg === undefined
        ? undefined
        : requests === 0
          ? measured.pg / result.requests
          : unprofiled.reduce((n, m) => n + (m.pgMicros ?? 0) * m.requests, 0) / requests,
    topSources: [...times.bySource]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([source, micros]) => [source, perRequest(micros)]),
  }
}

function cli(args: string[]): string {
  return execFileSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exitCode = 1
})
