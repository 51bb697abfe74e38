/**
 * Cold start on Postgres (issue 21, item 4): a fresh instance takes a burst of writes the moment
 * it listens. Before the fix, 40 of the first 4,000 writes got 503 (the 1.5 s pool acquire
 * timeout, while the pool opened its connections under load). Two modes, alternated round by
 * round (A B, B A, …), each round a fresh server process on 127.0.0.1, port 0:
 *
 * - `serve`: the built CLI's `serve --no-dispatcher`, which opens the pool's connections
 *   (`warmUp()`, `minConnections` 10) and warms the lists before it listens;
 * - `lazy`: the baseline, the same build of the plugin registered as serve registers it, over
 *   the Postgres adapter with `minConnections: 0` and no warm-up (bench/cold-start-lazy-server.ts):
 *   serve as it was before the fix.
 *
 * As soon as the server prints where it listens, `--writes` `POST /v1/todos` are fired,
 * `--concurrency` at a time, over undici. Reported per mode: 503s (and their logged causes), 504s,
 * other non-2xx and transport failures, the burst's wall time, p50/p99 latency (every answer,
 * 503s included), the time to the first byte of the first answer, and, for context, spawn →
 * listening (the warm-up moves time there; `lazy` also loads tsx) and the database's backends
 * at listening. The modes' figures are compared as ratios (serve ÷ lazy) of per-round medians.
 *
 *   flock /tmp/build.lock npm run build && npx tsx bench/cold-start.ts   # or: npm run bench -- --only cold-start
 *   npx tsx bench/cold-start.ts --rounds 1 --writes 500                  # a smoke run
 *
 * The run seeds a database of its own, `wfa_cold_<pid>` on the `--pg` server (dropped at the
 * end), with `workforce-api seed`, and creates one key for company 1 with `keys create`. Both
 * modes run from one copy of dist/ taken at start, so a rebuild meanwhile changes nothing.
 * Figures are reported, never asserted: the exit code is non-zero only when a server fails or a
 * write gets a transport failure or a status other than 201, 503 and 504 (504 `query_timeout`:
 * a statement past the database's own bound, which a starved machine produces in either mode).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { Agent, request } from 'undici'
import { integer } from './options.js'
import { scratchPostgresDatabase, type ScratchPostgresDatabase } from './scratch-postgres.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DIST = join(ROOT, 'dist')
/** Under node_modules, so the copy resolves the same packages as dist/ does. */
const SNAPSHOT = join(ROOT, 'node_modules', '.cache', `wfa-cold-start-dist-${process.pid}`)
const CLI = join(SNAPSHOT, 'cli.js')
const LAZY_ENTRY = fileURLToPath(new URL('./cold-start-lazy-server.ts', import.meta.url))
const TODOS_PATH = '/api/public/v1/todos'
const LISTEN_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 15_000
const REQUEST_TIMEOUT_MS = 60_000
const UNAVAILABLE_LOG = 'workforce-api: storage unavailable'

const USAGE = `Usage: npx tsx bench/cold-start.ts [options]   (build first: npm run build)

  --rounds <n>        rounds; each starts a fresh server of each mode       [5]
  --writes <n>        POST /v1/todos fired the moment a server listens      [4000]
  --concurrency <n>   writes in flight at once                              [100]
  --log-level <l>     the servers' LOG_LEVEL (their log is read for 503 causes) [info]
  --pg <url>          Postgres server (a database of the run's own is created there)
                      [$WORKFORCE_TEST_PG_URL or postgres://postgres@127.0.0.1:5432/postgres]
  --json <file>       where the figures go           [bench/results/cold-start-<time>.json]
  --help`

type Mode = 'serve' | 'lazy'

interface Options {
  rounds: number
  writes: number
  concurrency: number
  logLevel: string
  pgUrl: string
  json: string
}

function parseOptions(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      rounds: { type: 'string', default: '5' },
      writes: { type: 'string', default: '4000' },
      concurrency: { type: 'string', default: '100' },
      'log-level': { type: 'string', default: 'info' },
      pg: { type: 'string', default: process.env.WORKFORCE_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres' },
      json: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) return undefined
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  return {
    rounds: integer('--rounds', values.rounds, 1, 100),
    writes: integer('--writes', values.writes, 1, 1_000_000),
    concurrency: integer('--concurrency', values.concurrency, 1, 1_000),
    logLevel: values['log-level'],
    pgUrl: values.pg,
    json: values.json ?? join(ROOT, 'bench', 'results', `cold-start-${stamp}.json`),
  }
}

const log = (line: string) => console.error(`cold-start: ${line}`)
const cli = (args: string[]) => execFileSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })

/** A seeded database of this run's own on the `--pg` server; `drop()` removes it. */
function seededDatabase(pgUrl: string): Promise<ScratchPostgresDatabase> {
  return scratchPostgresDatabase(pgUrl, `wfa_cold_${process.pid}`, (db) => cli(['seed', '--db', db, '--json']))
}

interface Server {
  child: ChildProcess
  url: string
  exited: Promise<number | null>
  spawnToListenMs: number
  /** Logged causes of 503s, by message. */
  causes: Map<string, number>
}

/** A server of `mode` as a child process; resolves once it prints where it listens. */
function startServer(mode: Mode, db: string, logLevel: string): Promise<Server> {
  const args =
    mode === 'serve'
      ? [CLI, 'serve', '--db', db, '--port', '0', '--host', '127.0.0.1', '--rate-limit', '1000000', '--no-dispatcher']
      : ['--import', import.meta.resolve('tsx'), LAZY_ENTRY, SNAPSHOT, db]
  // No webhook key in either: events are recorded, not delivered (serve says so on stderr).
  const { WORKFORCE_WEBHOOK_KEY: _unused, ...env } = process.env
  const spawned = performance.now()
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...env, LOG_LEVEL: logLevel }, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const causes = new Map<string, number>()
  let head = ''
  // Both streams are read to the end (a pipe left unread would stall the server); pino's lines
  // for 503s give their causes.
  const reader = () => {
    let pending = ''
    return (chunk: Buffer) => {
      pending += chunk.toString()
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        if (head.length < 4_000) head += `${line}\n`
        if (!line.includes(UNAVAILABLE_LOG)) continue
        let cause: string
        try {
          cause = (JSON.parse(line) as { err?: { message?: string } }).err?.message ?? '?'
        } catch {
          cause = line.slice(0, 200)
        }
        // "unreachable since <instant>": one cause, whenever it began.
        cause = cause.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
        causes.set(cause, (causes.get(cause) ?? 0) + 1)
      }
    }
  }
  const stdout = reader()
  child.stderr?.on('data', reader())
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${mode}: not listening after ${LISTEN_TIMEOUT_MS} ms: ${head}`))
    }, LISTEN_TIMEOUT_MS)
    let seen = ''
    const onData = (chunk: Buffer) => {
      seen += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(seen)
      if (match === null) return
      clearTimeout(timer)
      child.stdout?.off('data', onData)
      resolve({ child, url: match[1] as string, exited, spawnToListenMs: performance.now() - spawned, causes })
    }
    child.stdout?.on('data', (chunk: Buffer) => stdout(chunk))
    child.stdout?.on('data', onData)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${mode} exited with ${code} before listening: ${head}`))
    })
  })
}

/** SIGTERM, then SIGKILL after STOP_TIMEOUT_MS: only the process this run started, by its handle. */
async function stopServer(server: Server): Promise<number | null> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return server.child.exitCode
  server.child.kill('SIGTERM')
  const timer = setTimeout(() => server.child.kill('SIGKILL'), STOP_TIMEOUT_MS)
  const code = await server.exited
  clearTimeout(timer)
  return code
}

interface Burst {
  statuses: Record<string, number>
  unavailable: number
  timedOut: number
  otherNon2xx: number
  transport: number
  /** When the last 503 was answered, in ms from the burst's start (null: none). */
  last503Ms: number | null
  wallMs: number
  p50Ms: number
  p99Ms: number
  maxMs: number
  firstByteMs: number
  errorSamples: string[]
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50)

/** `writes` POST /v1/todos, `concurrency` in flight, from now on. */
async function burst(base: string, key: string, label: string, options: Options): Promise<Burst> {
  const agent = new Agent({ connections: options.concurrency, keepAliveTimeout: 30_000, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS })
  const statuses: Record<string, number> = {}
  const latencies: number[] = []
  const errorSamples: string[] = []
  let transport = 0
  let last503Ms: number | null = null
  let firstByteMs = Number.POSITIVE_INFINITY
  let next = 0
  const start = performance.now()
  const worker = async () => {
    while (next < options.writes) {
      const n = next++
      const sent = performance.now()
      try {
        const response = await request(`${base}${TODOS_PATH}`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          // Company 1 of the seed has to-do list 1 and user 1.
          body: JSON.stringify({ title: `Cold start ${label} ${n}`, list_id: 1, assigned_to: 1 }),
          dispatcher: agent,
        })
        firstByteMs = Math.min(firstByteMs, performance.now() - start)
        const text = await response.body.text()
        const done = performance.now()
        latencies.push(done - sent)
        statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
        if (response.statusCode === 503) last503Ms = done - start
        else if (response.statusCode !== 201 && response.statusCode !== 504 && errorSamples.length < 5) errorSamples.push(`${response.statusCode} ${text.slice(0, 200)}`)
      } catch (error) {
        transport += 1
        if (errorSamples.length < 5) errorSamples.push(`transport: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, options.writes) }, worker))
  } finally {
    await agent.close()
  }
  const wallMs = performance.now() - start
  const sorted = latencies.sort((a, b) => a - b)
  const unavailable = statuses['503'] ?? 0
  const timedOut = statuses['504'] ?? 0
  const otherNon2xx = Object.entries(statuses).reduce((n, [status, count]) => (['503', '504'].includes(status) || status.startsWith('2') ? n : n + count), 0)
  return {
    statuses,
    unavailable,
    timedOut,
    otherNon2xx,
    transport,
    last503Ms,
    wallMs,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    firstByteMs,
    errorSamples,
  }
}

interface RoundResult {
  round: number
  mode: Mode
  spawn_to_listen_ms: number
  /** The database's backends when the burst starts: the pool's idle connections, plus the adapter's LISTEN connections. */
  backends_at_listen: number
  statuses: Record<string, number>
  unavailable_503: number
  /** 504 `query_timeout`: a statement past the database's own bound (a starved machine), not a wait for a connection. */
  timeout_504: number
  other_non_2xx: number
  transport_errors: number
  last_503_ms: number | null
  causes_503: Record<string, number>
  wall_ms: number
  p50_ms: number
  p99_ms: number
  max_ms: number
  first_byte_ms: number
  error_samples: string[]
  server_exit: number | null
}

async function round(mode: Mode, index: number, database: { db: string; name: string; admin: pg.Client }, key: string, options: Options): Promise<RoundResult> {
  const server = await startServer(mode, database.db, options.logLevel)
  try {
    const { rows } = await database.admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [database.name])
    const result = await burst(`${server.url}`, key, `${mode} ${index}`, options)
    // The last log lines (503 causes) arrive with the exit.
    const exit = await stopServer(server)
    const r = (value: number) => Number(value.toFixed(1))
    return {
      round: index,
      mode,
      spawn_to_listen_ms: r(server.spawnToListenMs),
      backends_at_listen: rows[0]?.n ?? 0,
      statuses: result.statuses,
      unavailable_503: result.unavailable,
      timeout_504: result.timedOut,
      other_non_2xx: result.otherNon2xx,
      transport_errors: result.transport,
      last_503_ms: result.last503Ms === null ? null : r(result.last503Ms),
      causes_503: Object.fromEntries(server.causes),
      wall_ms: r(result.wallMs),
      p50_ms: r(result.p50Ms),
      p99_ms: r(result.p99Ms),
      max_ms: r(result.maxMs),
      first_byte_ms: r(result.firstByteMs),
      error_samples: result.errorSamples,
      server_exit: exit,
    }
  } finally {
    await stopServer(server)
  }
}

interface ModeSummary {
  mode: Mode
  rounds: number
  writes: number
  unavailable_503: number
  rounds_with_503: number
  timeout_504: number
  other_non_2xx: number
  transport_errors: number
  median_wall_ms: number
  median_p50_ms: number
  median_p99_ms: number
  median_first_byte_ms: number
  median_spawn_to_listen_ms: number
  median_backends_at_listen: number
  causes_503: Record<string, number>
}

function summarise(mode: Mode, rounds: RoundResult[]): ModeSummary {
  const mine = rounds.filter((r) => r.mode === mode)
  const causes: Record<string, number> = {}
  for (const r of mine) for (const [cause, n] of Object.entries(r.causes_503)) causes[cause] = (causes[cause] ?? 0) + n
  const sum = (pick: (r: RoundResult) => number) => mine.reduce((n, r) => n + pick(r), 0)
  return {
    mode,
    rounds: mine.length,
    writes: sum((r) => Object.values(r.statuses).reduce((a, b) => a + b, 0) + r.transport_errors),
    unavailable_503: sum((r) => r.unavailable_503),
    rounds_with_503: mine.filter((r) => r.unavailable_503 > 0).length,
    timeout_504: sum((r) => r.timeout_504),
    other_non_2xx: sum((r) => r.other_non_2xx),
    transport_errors: sum((r) => r.transport_errors),
    median_wall_ms: median(mine.map((r) => r.wall_ms)),
    median_p50_ms: median(mine.map((r) => r.p50_ms)),
    median_p99_ms: median(mine.map((r) => r.p99_ms)),
    median_first_byte_ms: median(mine.map((r) => r.first_byte_ms)),
    median_spawn_to_listen_ms: median(mine.map((r) => r.spawn_to_listen_ms)),
    median_backends_at_listen: median(mine.map((r) => r.backends_at_listen)),
    causes_503: causes,
  }
}

function report(summaries: ModeSummary[], rounds: RoundResult[], options: Options): string {
  const ms = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} ms`
  const lines = [
    `${options.writes} × POST /v1/todos per round, ${options.concurrency} in flight, fired the moment the server listens; ${options.rounds} rounds per mode (medians of rounds)`,
    '',
    '| mode | writes | 503 (rounds with any) | 504 | other non-2xx / transport | burst wall | p50 / p99 | first byte | spawn → listening | backends at listen |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const s of summaries) {
    lines.push(
      `| ${s.mode} | ${s.writes.toLocaleString('en')} | **${s.unavailable_503}** (${s.rounds_with_503} of ${s.rounds}) | ${s.timeout_504} | ${s.other_non_2xx} / ${s.transport_errors} | ${ms(s.median_wall_ms)} | ${ms(s.median_p50_ms)} / ${ms(s.median_p99_ms)} | ${ms(s.median_first_byte_ms)} | ${ms(s.median_spawn_to_listen_ms)} | ${s.median_backends_at_listen} |`,
    )
  }
  const [serve, lazy] = summaries as [ModeSummary, ModeSummary]
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)} ×` : '–')
  lines.push(
    `| serve ÷ lazy | | ${serve.unavailable_503} vs ${lazy.unavailable_503} | | | **${ratio(serve.median_wall_ms, lazy.median_wall_ms)}** | ${ratio(serve.median_p50_ms, lazy.median_p50_ms)} / **${ratio(serve.median_p99_ms, lazy.median_p99_ms)}** | **${ratio(serve.median_first_byte_ms, lazy.median_first_byte_ms)}** | ${ratio(serve.median_spawn_to_listen_ms, lazy.median_spawn_to_listen_ms)} | |`,
  )
  lines.push('', '| round | mode | 503 (last at) | statuses | burst wall | p50 / p99 / max | first byte | spawn → listening |', '|---:|---|---:|---|---:|---:|---:|---:|')
  for (const r of rounds) {
    const statuses = Object.entries(r.statuses).map(([status, n]) => `${status}×${n}`).join(' ') + (r.transport_errors > 0 ? ` transport×${r.transport_errors}` : '')
    lines.push(
      `| ${r.round} | ${r.mode} | ${r.unavailable_503}${r.last_503_ms === null ? '' : ` (${ms(r.last_503_ms)})`} | ${statuses} | ${ms(r.wall_ms)} | ${ms(r.p50_ms)} / ${ms(r.p99_ms)} / ${ms(r.max_ms)} | ${ms(r.first_byte_ms)} | ${ms(r.spawn_to_listen_ms)} |`,
    )
  }
  for (const s of summaries) {
    const causes = Object.entries(s.causes_503)
    if (causes.length > 0) lines.push('', `${s.mode}: 503 causes (server log): ${causes.map(([cause, n]) => `${n} × "${cause}"`).join('; ')}`)
  }
  for (const r of rounds) if (r.error_samples.length > 0) lines.push('', `round ${r.round} ${r.mode}: first failures:\n  ${r.error_samples.join('\n  ')}`)
  return lines.join('\n')
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
  if (!existsSync(join(DIST, 'cli.js'))) throw new Error('dist/cli.js not found: build first (npm run build)')
  const built = build()
  // The portal is not served by either mode.
  cpSync(DIST, SNAPSHOT, { recursive: true, filter: (source) => !source.startsWith(join(DIST, 'portal')) })
  try {
    await run(options, built)
  } finally {
    rmSync(SNAPSHOT, { recursive: true, force: true })
  }
}

async function run(options: Options, built: { dist_built_at: string; commit: string }): Promise<void> {
  const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`
  log(`${machine}; dist built ${built.dist_built_at} (HEAD ${built.commit})`)
  const database = await seededDatabase(options.pgUrl)
  const rounds: RoundResult[] = []
  try {
    const created = cli(['keys', 'create', '--db', database.db, '--company', '1', '--scopes', 'all', '--json'])
    const { key } = JSON.parse(created.trim().split('\n').pop() as string) as { key: string }
    log(`seeded ${database.name}; ${options.rounds} rounds of ${options.writes} writes, ${options.concurrency} in flight`)
    for (let index = 1; index <= options.rounds; index++) {
      // A B, B A, …: neither mode always goes first after the other's writes.
      const order: Mode[] = index % 2 === 1 ? ['serve', 'lazy'] : ['lazy', 'serve']
      for (const mode of order) {
        const result = await round(mode, index, database, key, options)
        rounds.push(result)
        log(
          `round ${index} ${mode}: ${result.unavailable_503} × 503, wall ${result.wall_ms} ms, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, first byte ${result.first_byte_ms} ms, listening after ${result.spawn_to_listen_ms} ms (${result.backends_at_listen} backends)`,
        )
      }
    }
  } finally {
    await database.drop()
  }
  const summaries = [summarise('serve', rounds), summarise('lazy', rounds)]
  console.log(`\n${machine}; dist built ${built.dist_built_at} (HEAD ${built.commit})\n`)
  console.log(report(summaries, rounds, options))
  mkdirSync(dirname(options.json), { recursive: true })
  const pgUrl = new URL(options.pgUrl)
  if (pgUrl.password !== '') pgUrl.password = '***'
  writeFileSync(options.json, `${JSON.stringify({ machine, ...built, options: { ...options, pgUrl: pgUrl.toString() }, summaries, rounds }, null, 2)}\n`)
  log(`figures written to ${options.json}`)
  if (rounds.some((r) => r.other_non_2xx > 0 || r.transport_errors > 0 || (r.server_exit !== 0 && r.server_exit !== null))) process.exitCode = 1
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exitCode = 1
})
