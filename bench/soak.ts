/**
 * Memory soak (issue 21): the built CLI's `serve`, as an operator runs it, under a mixed load of
 * lists, filters, lookups and writes for `--minutes` (10 by default), its resident set size
 * read from /proc/<pid>/status every `--sample` seconds. Once on SQLite, once on Postgres.
 *
 *   flock /tmp/build.lock npm run build && npm run bench -- --only soak     # 10 min per backend
 *   npx tsx bench/soak.ts --minutes 1 --backend sqlite                       # a smoke run
 *
 * Each run seeds a database of its own with `workforce-api seed --scale` (SQLite: a temporary
 * file; Postgres: the database `wfa_soak_<pid>` on WORKFORCE_TEST_PG_URL's server, dropped at the
 * end), creates two keys per seeded company with `keys create`, and starts `serve --port 0` on
 * 127.0.0.1 with a rate limit far above the offered load (the limiter still counts every key).
 * The load is open-loop: `--rate` requests per second, at most `--concurrency` in flight (a
 * request that would exceed it waits, and the achieved rate is reported), plus one request with
 * an unknown key every 6 s (under the failed-authentication budget of 60 a minute).
 *
 * The CLI runs from a copy of dist/ taken at start (its build time is reported), so a rebuild
 * during the run does not change what is measured.
 *
 * Reported: RSS after start, at minute 2 and at the end, the growth between them (issue 21's
 * goal: ≤ 25 MiB from minute 2 to minute 10), the peak (the samples' and the kernel's VmHWM),
 * requests, statuses, latency per minute, and errors: any 5xx, any answer that is not the spec's
 * envelope, any transport failure. The series goes to `--json` (default
 * bench/results/soak-<time>.json). Figures are reported, never asserted; the exit code is non-zero
 * only on errors or when the server dies.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { envelopeProblem, LIST_RESOURCES, nextRequest, rememberCreated, unknownKeyRequest, type CompanyView, type PlannedRequest } from './soak-mix.js'
import { integer } from './options.js'
import { scratchPostgresDatabase } from './scratch-postgres.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DIST = join(ROOT, 'dist')
/**
 * The build this run measures: a copy of dist/ taken at start, so a rebuild meanwhile (other
 * work in the checkout) changes nothing under a running soak. Under node_modules, so the copy
 * resolves the same packages as dist/ does.
 */
const SNAPSHOT = join(ROOT, 'node_modules', '.cache', `wfa-soak-dist-${process.pid}`)
const CLI = join(SNAPSHOT, 'cli.js')
/** Preloaded into `serve`: answers "memory" over IPC with the heap's own figures. */
const PROBE = join(ROOT, 'bench', 'soak-probe.cjs')
const PROBE_TIMEOUT_MS = 2_000
const PREFIX = '/api/public'
/** The seed's companies: 1 with `--scale` rows per resource, 2 with 45, 3 empty. */
const COMPANIES = [1, 2, 3]
const KEYS_PER_COMPANY = 2
const UNKNOWN_KEY_EVERY_MS = 6_000
const REQUEST_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 15_000
const MiB = 1024 * 1024

const USAGE = `Usage: npx tsx bench/soak.ts [options]   (build first: npm run build)

  --minutes <n>       minutes of load per backend                        [10]
  --backend <b>       sqlite, postgres or both                           [both]
  --scale <n>         seed scale: rows of every resource in company 1     [100000]
  --rate <n>          requests per second offered                        [200]
  --concurrency <n>   requests in flight at most                         [8]
  --sample <s>        seconds between RSS samples                        [10]
  --log-level <l>     the server's LOG_LEVEL (its log is read and dropped) [info]
  --pg <url>          Postgres server (a database of the run's own is created there)
                      [$WORKFORCE_TEST_PG_URL or postgres://postgres@127.0.0.1:5432/test]
  --json <file>       where the figures and series go   [bench/results/soak-<time>.json]
  --help`

interface Options {
  minutes: number
  backends: Array<'sqlite' | 'postgres'>
  scale: number
  rate: number
  concurrency: number
  sampleS: number
  logLevel: string
  pgUrl: string
  json: string
}

function parseOptions(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      minutes: { type: 'string', default: '10' },
      backend: { type: 'string', default: 'both' },
      scale: { type: 'string', default: '100000' },
      rate: { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '8' },
      sample: { type: 'string', default: '10' },
      'log-level': { type: 'string', default: 'info' },
      pg: { type: 'string', default: process.env.WORKFORCE_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test' },
      json: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) return undefined
  if (!['sqlite', 'postgres', 'both'].includes(values.backend)) throw new TypeError('--backend must be sqlite, postgres or both')
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  return {
    minutes: integer('--minutes', values.minutes, 1, 120),
    backends: values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as 'sqlite' | 'postgres'],
    scale: integer('--scale', values.scale, 40, 10_000_000),
    rate: integer('--rate', values.rate, 1, 5_000),
    concurrency: integer('--concurrency', values.concurrency, 1, 256),
    sampleS: integer('--sample', values.sample, 1, 600),
    logLevel: values['log-level'],
    pgUrl: values.pg,
    json: values.json ?? join(ROOT, 'bench', 'results', `soak-${stamp}.json`),
  }
}

const log = (line: string) => console.error(`soak: ${line}`)
const cli = (args: string[]) => execFileSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
const lastJson = <T>(stdout: string): T => JSON.parse(stdout.trim().split('\n').pop() as string) as T

/** A seeded database of this run's own; `drop()` removes it. */
async function seededDatabase(backend: 'sqlite' | 'postgres', options: Options): Promise<{ db: string; drop(): Promise<void> }> {
  const started = performance.now()
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'wfa-soak-'))
    const db = join(dir, 'soak.db')
    cli(['seed', '--db', db, '--scale', String(options.scale), '--json'])
    log(`sqlite: seeded scale ${options.scale} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    return { db, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const database = await scratchPostgresDatabase(options.pgUrl, `wfa_soak_${process.pid}`, (db) => cli(['seed', '--db', db, '--scale', String(options.scale), '--json']))
  log(`postgres: seeded scale ${options.scale} into ${database.name} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return database
}

interface Server {
  child: ChildProcess
  url: string
  exited: Promise<number | null>
  logLines: () => number
  errorLines: string[]
}

/** `serve` as a child process; resolves once it prints where it listens. */
function startServer(db: string, logLevel: string): Promise<Server> {
  const args = ['--require', PROBE, CLI, 'serve', '--db', db, '--port', '0', '--host', '127.0.0.1', '--rate-limit', '1000000', '--rate-limit-window', '1m']
  const env = { ...process.env, LOG_LEVEL: logLevel, WORKFORCE_WEBHOOK_KEY: randomBytes(32).toString('base64') }
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const errorLines: string[] = []
  let lines = 0
  let warnings = 0
  let pending = ''
  // The log is read and dropped (a pipe left unread would stall the server); errors are kept.
  const consume = (chunk: Buffer) => {
    pending += chunk.toString()
    const parts = pending.split('\n')
    pending = parts.pop() ?? ''
    for (const line of parts) {
      lines += 1
      // Errors, and the first warnings (a 503's cause is logged as a warning).
      if (/"level":(50|60)/.test(line) && errorLines.length < 20) errorLines.push(line.slice(0, 500))
      else if (/"level":40/.test(line) && warnings < 10) {
        warnings += 1
        errorLines.push(line.slice(0, 500))
      }
    }
  }
  child.stderr?.on('data', consume)
  return new Promise((resolve, reject) => {
    let head = ''
    const onData = (chunk: Buffer) => {
      head += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(head)
      if (match === null) return
      child.stdout?.off('data', onData)
      child.stdout?.on('data', consume)
      resolve({ child, url: match[1] as string, exited, logLines: () => lines, errorLines })
    }
    child.stdout?.on('data', onData)
    void exited.then((code) => reject(new Error(`serve exited with ${code} before listening: ${head}`)))
  })
}

/** SIGTERM, then SIGKILL after STOP_TIMEOUT_MS: only the process this run started, by its pid. */
async function stopServer(server: Server): Promise<number | null> {
  if (server.child.exitCode !== null) return server.child.exitCode
  server.child.kill('SIGTERM')
  const timer = setTimeout(() => server.child.kill('SIGKILL'), STOP_TIMEOUT_MS)
  const code = await server.exited
  clearTimeout(timer)
  return code
}

interface HeapFigures {
  heapUsed: number
  heapTotal: number
  external: number
}

/** The server's own heap figures (bench/soak-probe.cjs), or undefined when it does not answer in time. */
function heapOf(child: ChildProcess): Promise<HeapFigures | undefined> {
  return new Promise((resolve) => {
    const done = (figures: HeapFigures | undefined) => {
      clearTimeout(timer)
      child.off('message', onMessage)
      resolve(figures)
    }
    const onMessage = (message: { type?: string } & HeapFigures) => {
      if (message.type === 'memory') done(message)
    }
    const timer = setTimeout(() => done(undefined), PROBE_TIMEOUT_MS)
    child.on('message', onMessage)
    try {
      child.send('memory')
    } catch {
      done(undefined)
    }
  })
}

/**
 * VmRSS and VmHWM of `pid` in MiB (Linux), and the resident set split as the kernel counts it:
 * anonymous memory (heaps of every thread: V8's, malloc's, SQLite's page caches), file-backed
 * pages (the code, mapped files) and shared memory (SQLite's WAL index, `-shm`).
 */
function memoryOf(pid: number): { rss: number; hwm: number; anon: number; file: number; shmem: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
  return { rss: kib('VmRSS') / 1024, hwm: kib('VmHWM') / 1024, anon: kib('RssAnon') / 1024, file: kib('RssFile') / 1024, shmem: kib('RssShmem') / 1024 }
}

type Page = { data: Array<Record<string, unknown>>; pagination: { total: number } }

/** A page, or an empty one where the company's module is off (403: the mix still asks, and gets 403). */
async function getJson(agent: Agent, url: string, key: string): Promise<Page> {
  const response = await request(url, { headers: { 'x-api-key': key }, dispatcher: agent })
  const text = await response.body.text()
  if (response.statusCode === 403) return { data: [], pagination: { total: 0 } }
  if (response.statusCode !== 200) throw new Error(`GET ${url}: ${response.statusCode} ${text.slice(0, 200)}`)
  return JSON.parse(text)
}

/** What the mix needs to know of each company: totals, ids at both ends, members, lists, roles. */
async function discover(agent: Agent, base: string, companyId: number, keys: string[]): Promise<CompanyView> {
  const view: CompanyView = { companyId, keys, totals: {}, ids: {}, emails: [], memberIds: [], listIds: [], roleIds: [], customerIds: [], created: [] }
  const key = keys[0] as string
  for (const resource of LIST_RESOURCES) {
    const first = await getJson(agent, `${base}/v1/${resource}?per_page=100`, key)
    const total = first.pagination.total
    const lastPage = Math.max(1, Math.ceil(total / 100))
    const rows = lastPage > 1 ? [...first.data, ...(await getJson(agent, `${base}/v1/${resource}?per_page=100&page=${lastPage}`, key)).data] : first.data
    view.totals[resource] = total
    view.ids[resource] = rows.map((row) => row.id as number)
    if (resource === 'users') {
      view.emails = rows.map((row) => row.email as string)
      view.memberIds = rows.filter((row) => row.invitation_status === 'accepted').map((row) => row.id as number)
    }
    if (resource === 'roles') view.roleIds = rows.map((row) => row.id as number)
    if (resource === 'todos') view.listIds = [...new Set(rows.map((row) => row.list_id as number))]
    if (resource === 'projects') view.customerIds = [...new Set(rows.map((row) => row.customer_id).filter((id): id is number => typeof id === 'number'))]
  }
  return view
}

interface Sample {
  t_s: number
  rss_mib: number
  /** RSS split: anonymous, file-backed, shared memory (memoryOf). */
  anon_mib: number
  file_mib: number
  shmem_mib: number
  /** The main thread's V8 heap in use, and Buffers' memory outside it (the read workers' heaps are not included). */
  heap_used_mib: number | null
  /** The main thread's V8 heap as reserved (used plus room V8 keeps). */
  heap_total_mib: number | null
  external_mib: number | null
  requests: number
  errors: number
}

interface MinuteLatency {
  minute: number
  requests: number
  p50_ms: number
  p99_ms: number
}

interface RunResult {
  backend: string
  minutes: number
  scale: number
  offered_rate: number
  achieved_rate: number
  requests: number
  by_op: Record<string, Record<string, number>>
  errors: number
  error_samples: string[]
  server_error_log: string[]
  server_log_lines: number
  server_exit: number | null
  rss_start_mib: number
  rss_warm_mib: number
  warm_at_s: number
  rss_end_mib: number
  growth_mib: number
  /** The same growth between medians of a minute's samples (the minute up to minute 2, the last one): less sensitive to one sample caught mid-GC. */
  growth_of_medians_mib: number
  heap_warm_mib: number | null
  heap_end_mib: number | null
  peak_sample_mib: number
  peak_hwm_mib: number
  series: Sample[]
  latency: MinuteLatency[]
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function soak(backend: 'sqlite' | 'postgres', options: Options): Promise<RunResult> {
  const database = await seededDatabase(backend, options)
  const agent = new Agent({ connections: options.concurrency + 2, keepAliveTimeout: 30_000, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS })
  let server: Server | undefined
  try {
    const keysOf = new Map<number, string[]>()
    for (const companyId of COMPANIES) {
      const keys: string[] = []
      for (let i = 0; i < KEYS_PER_COMPANY; i++) {
        keys.push(lastJson<{ key: string }>(cli(['keys', 'create', '--db', database.db, '--company', String(companyId), '--scopes', 'all', '--name', `soak ${i}`, '--json'])).key)
      }
      keysOf.set(companyId, keys)
    }
    server = await startServer(database.db, options.logLevel)
    const pid = server.child.pid as number
    const base = `${server.url}${PREFIX}`
    const rssStart = memoryOf(pid).rss
    log(`${backend}: serve pid ${pid} at ${server.url}, RSS ${rssStart.toFixed(1)} MiB after start`)
    const views: CompanyView[] = []
    for (const companyId of COMPANIES) views.push(await discover(agent, base, companyId, keysOf.get(companyId) as string[]))
    log(`${backend}: ${views.map((v) => `company ${v.companyId}: ${v.totals.todos} to-dos, ${v.memberIds.length} members seen`).join('; ')}`)

    const runId = `${process.pid}-${backend}`
    const byOp: Record<string, Record<string, number>> = {}
    const errorSamples: string[] = []
    let errors = 0
    let requests = 0
    let inFlight = 0
    let n = 0
    let minuteLatencies: number[] = []
    const latency: MinuteLatency[] = []
    const series: Sample[] = []
    const record = (op: string, outcome: string) => {
      const counts = (byOp[op] ??= {})
      counts[outcome] = (counts[outcome] ?? 0) + 1
    }
    const fail = (planned: PlannedRequest, reason: string) => {
      errors += 1
      if (errorSamples.length < 20) errorSamples.push(`${planned.method} ${planned.path}: ${reason}`)
    }

    const send = async (planned: PlannedRequest) => {
      inFlight += 1
      const started = performance.now()
      try {
        const response = await request(`${base}${planned.path}`, {
          method: planned.method,
          headers: { 'x-api-key': planned.key, ...planned.headers },
          ...(planned.body === undefined ? {} : { body: planned.body }),
          dispatcher: agent,
        })
        const text = await response.body.text()
        minuteLatencies.push(performance.now() - started)
        record(planned.op, String(response.statusCode))
        if (response.statusCode >= 500) fail(planned, `${response.statusCode} ${text.slice(0, 200)}`)
        else {
          const problem = envelopeProblem(response.statusCode, text, planned.list)
          if (problem !== undefined) fail(planned, `${response.statusCode}: ${problem}`)
          else if (planned.op === 'post-todo' && response.statusCode === 201 && planned.company !== undefined) {
            rememberCreated(planned.company, (JSON.parse(text) as { data: { id: number } }).data.id)
          }
        }
      } catch (error) {
        record(planned.op, 'transport')
        fail(planned, `transport: ${error instanceof Error ? error.message : String(error)}`)
      } finally {
        inFlight -= 1
        requests += 1
      }
    }

    const durationMs = options.minutes * 60_000
    const start = performance.now()
    const mib = (bytes: number | undefined) => (bytes === undefined ? null : Number((bytes / MiB).toFixed(1)))
    const sample = async () => {
      const t = Math.round((performance.now() - start) / 1000)
      const memory = memoryOf(pid)
      const round = (value: number) => Number(value.toFixed(1))
      const heap = await heapOf((server as Server).child)
      series.push({ t_s: t, rss_mib: round(memory.rss), anon_mib: round(memory.anon), file_mib: round(memory.file), shmem_mib: round(memory.shmem), heap_used_mib: mib(heap?.heapUsed), heap_total_mib: mib(heap?.heapTotal), external_mib: mib(heap?.external), requests, errors })
    }
    await sample()
    const sampler = setInterval(() => void sample(), options.sampleS * 1000)
    const minuteTimer = setInterval(() => {
      const sorted = minuteLatencies.sort((a, b) => a - b)
      latency.push({ minute: latency.length + 1, requests: sorted.length, p50_ms: percentile(sorted, 50), p99_ms: percentile(sorted, 99) })
      minuteLatencies = []
      const last = series.at(-1)
      log(`${backend}: minute ${latency.length}: ${requests} requests, ${errors} errors, RSS ${last?.rss_mib} MiB (anon ${last?.anon_mib}, file ${last?.file_mib}, shmem ${last?.shmem_mib}; heap ${last?.heap_used_mib} of ${last?.heap_total_mib}), p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms`)
    }, 60_000)
    let issued = 0
    let unknownIssued = 0
    try {
      while (performance.now() - start < durationMs) {
        if (server.child.exitCode !== null) throw new Error(`serve exited with ${server.child.exitCode} during the load`)
        const elapsed = performance.now() - start
        const due = Math.floor((elapsed / 1000) * options.rate)
        while (issued < due && inFlight < options.concurrency) {
          issued += 1
          n += 1
          void send(nextRequest(views, n, runId))
        }
        // Outside the concurrency cap: one every 6 s, whatever the backlog.
        if (elapsed >= (unknownIssued + 1) * UNKNOWN_KEY_EVERY_MS) {
          unknownIssued += 1
          void send(unknownKeyRequest())
        }
        await sleep(2)
      }
      const drainUntil = performance.now() + REQUEST_TIMEOUT_MS + 1_000
      while (inFlight > 0 && performance.now() < drainUntil) await sleep(10)
    } finally {
      clearInterval(sampler)
      clearInterval(minuteTimer)
    }
    const loadS = (performance.now() - start) / 1000
    await sample()
    // The few answers after the last full minute (the in-flight ones drained) are no minute of their own.
    const hwm = memoryOf(pid).hwm
    // Issue 21 measures growth from minute 2 to the end; a run shorter than 4 minutes uses its middle.
    const warmAt = options.minutes >= 4 ? 120 : (options.minutes * 60) / 2
    const warm = series.reduce((best, s) => (Math.abs(s.t_s - warmAt) < Math.abs(best.t_s - warmAt) ? s : best))
    const end = series.at(-1) as Sample
    const medianRss = (from: number, to: number) => {
      const values = series.filter((s) => s.t_s > from && s.t_s <= to).map((s) => s.rss_mib).sort((a, b) => a - b)
      return values[Math.floor(values.length / 2)] ?? Number.NaN
    }
    const minuteS = Math.min(60, warmAt)
    const exit = await stopServer(server)
    return {
      backend,
      minutes: options.minutes,
      scale: options.scale,
      offered_rate: options.rate,
      achieved_rate: Number((requests / loadS).toFixed(1)),
      requests,
      by_op: byOp,
      errors,
      error_samples: errorSamples,
      server_error_log: server.errorLines,
      server_log_lines: server.logLines(),
      server_exit: exit,
      rss_start_mib: Number(rssStart.toFixed(1)),
      rss_warm_mib: warm.rss_mib,
      warm_at_s: warm.t_s,
      rss_end_mib: end.rss_mib,
      growth_mib: Number((end.rss_mib - warm.rss_mib).toFixed(1)),
      growth_of_medians_mib: Number((medianRss(end.t_s - minuteS, end.t_s) - medianRss(warmAt - minuteS, warmAt)).toFixed(1)),
      heap_warm_mib: warm.heap_used_mib,
      heap_end_mib: end.heap_used_mib,
      peak_sample_mib: Math.max(...series.map((s) => s.rss_mib)),
      peak_hwm_mib: Number(hwm.toFixed(1)),
      series,
      latency,
    }
  } finally {
    if (server !== undefined) await stopServer(server)
    await agent.close()
    await database.drop()
  }
}

/** Copies dist/ (without the portal, which serve does not use) to SNAPSHOT; returns its removal. */
function snapshotDist(): () => void {
  if (!existsSync(join(DIST, 'cli.js'))) throw new Error('dist/cli.js not found: build first (npm run build)')
  cpSync(DIST, SNAPSHOT, { recursive: true, filter: (source) => !source.startsWith(join(DIST, 'portal')) })
  return () => rmSync(SNAPSHOT, { recursive: true, force: true })
}

function build(): { dist_built_at: string; commit: string } {
  let commit = 'unknown'
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    // Not a checkout: the build time alone says what was measured.
  }
  return { dist_built_at: statSync(join(DIST, 'cli.js')).mtime.toISOString(), commit }
}

function table(results: RunResult[]): string {
  const lines = [
    '| backend | requests (req/s) | errors | RSS after start | RSS at minute 2 (shorter runs: their middle) | RSS at end | growth, minute 2 → end (goal ≤ 25 MiB) | peak (samples / VmHWM) | V8 heap used, minute 2 → end | p50 / p99, first → last minute |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ]
  for (const r of results) {
    const first = r.latency[0]
    const last = r.latency.at(-1)
    const lat = (m: MinuteLatency | undefined) => (m === undefined ? '–' : `${m.p50_ms.toFixed(1)} / ${m.p99_ms.toFixed(1)} ms`)
    lines.push(
      `| ${r.backend} | ${r.requests.toLocaleString('en')} (${r.achieved_rate}) | ${r.errors} | ${r.rss_start_mib} MiB | ${r.rss_warm_mib} MiB (t=${r.warm_at_s} s) | ${r.rss_end_mib} MiB (t=${r.series.at(-1)?.t_s} s) | **${r.growth_mib >= 0 ? '+' : ''}${r.growth_mib} MiB** (medians of a minute: ${r.growth_of_medians_mib >= 0 ? '+' : ''}${r.growth_of_medians_mib}) | ${r.peak_sample_mib} / ${r.peak_hwm_mib} MiB | ${r.heap_warm_mib ?? '?'} → ${r.heap_end_mib ?? '?'} MiB | ${lat(first)} → ${lat(last)} |`,
    )
  }
  for (const r of results) {
    lines.push('', `${r.backend}: RSS every ${r.series[1] ? r.series[1].t_s - r.series[0]!.t_s : '?'} s (MiB): ${r.series.map((s) => s.rss_mib).join(', ')}`)
    lines.push(`${r.backend}: V8 heap used at the same samples (MiB): ${r.series.map((s) => s.heap_used_mib ?? '?').join(', ')}`)
    lines.push(`${r.backend}: statuses by kind: ${Object.entries(r.by_op).map(([op, counts]) => `${op} ${Object.entries(counts).map(([s, c]) => `${s}×${c}`).join(' ')}`).join('; ')}`)
    if (r.error_samples.length > 0) lines.push(`${r.backend}: first errors:\n  ${r.error_samples.join('\n  ')}`)
    if (r.server_error_log.length > 0) lines.push(`${r.backend}: server log, errors and first warnings:\n  ${r.server_error_log.join('\n  ')}`)
  }
  return lines.join('\n')
}

async function main(): Promise<void> {
  let options: Options | undefined
  try {
    options = parseOptions(process.argv.slice(2))
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`)
    process.exitCode = 2
    return
  }
  if (options === undefined) {
    console.log(USAGE)
    return
  }
  const built = build()
  const removeSnapshot = snapshotDist()
  try {
    await runAll(options, built)
  } finally {
    removeSnapshot()
  }
}

async function runAll(options: Options, built: { dist_built_at: string; commit: string }): Promise<void> {
  const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`
  log(`${machine}; dist built ${built.dist_built_at} (HEAD ${built.commit}); ${options.minutes} min per backend at ${options.rate} req/s, ≤ ${options.concurrency} in flight`)
  const results: RunResult[] = []
  for (const backend of options.backends) {
    const result = await soak(backend, options)
    results.push(result)
    mkdirSync(dirname(options.json), { recursive: true })
    writeFileSync(options.json, `${JSON.stringify({ machine, ...built, options, results }, null, 2)}\n`)
  }
  console.log(`\n${machine}; dist built ${built.dist_built_at} (HEAD ${built.commit})`)
  console.log(`scale ${options.scale}, ${options.minutes} min per backend, ${options.rate} req/s offered, ≤ ${options.concurrency} in flight, RSS every ${options.sampleS} s\n`)
  console.log(table(results))
  log(`figures and series written to ${options.json}`)
  if (results.some((r) => r.errors > 0 || (r.server_exit !== 0 && r.server_exit !== null))) process.exitCode = 1
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exitCode = 1
})
