/**
 * Delivery fairness (issue 21): does one company's broken webhook receivers slow everyone else's
 * deliveries, or the API's own writes?
 *
 * Per backend and per mode, a fresh server process (the plugin over a fresh SQLite file or a
 * fresh Postgres schema, its dispatcher running with the default options) takes a fixed, open-loop
 * rate of `POST /v1/todos` over real HTTP on 127.0.0.1, alternating the two seed companies. Each
 * company has 5 healthy endpoints; in the degraded modes company 2 also has N endpoints that
 * accept the request and never answer (`hanging-N`) or answer 500 at once (`failing-N`). Every
 * endpoint is a receiver of its own (its own port, so its own connection pool in the dispatcher,
 * as distinct customers' hosts are), in this process.
 *
 * Reported for the healthy endpoints of every company, over the to-dos written in the measured
 * window: commit → arrival latency (p50, p99; a delivery still missing after the grace period
 * counts as infinitely late), and arrivals per second during the window; and the API's own
 * `POST /v1/todos` latency as the client saw it. Each mode is compared with the `healthy` runs of
 * the same backend around it in the same run (`baselineOf`): interleave them
 * (`--modes healthy,hanging-5,healthy,hanging-20,healthy`) so that each degraded mode is judged
 * against what the machine did just before and after it, not minutes earlier. The server process counts its garbage collections, so the
 * report shows that they happened while receivers hung.
 *
 * "Commit" is the to-do's `created_at`, which the API stamps once the write transaction holds the
 * store, just before it commits (src/api/write-routes.ts); arrival is the receiver's clock. Both
 * are this machine's wall clock; `created_at` has millisecond resolution, so a latency reads up
 * to 1 ms long.
 *
 * Usage: npx tsx bench/webhook-fairness.ts [--quick] [--duration 180] [--warmup 15] [--grace 20]
 *          [--rate 50] [--modes healthy,hanging-5,hanging-20,failing-5,failing-20]
 *          [--backends sqlite,postgres] [--pg postgres://…] [--timeout-ms <ms>] [--json <file>]
 *
 * `--quick`: 20 s per mode, 5 s warm-up, 10 s grace (a smoke check). Postgres: each mode gets a
 * schema `wfa_bench_fair_<pid>_<n>` of its own on the `--pg` server, dropped afterwards.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { Agent, request } from 'undici'
import type { FairnessParentMessage, FairnessServerConfig, FairnessServerMessage, ServerStats } from './webhook-fairness-server.js'
import { integer } from './options.js'

export const FAIRNESS_USAGE = `Usage: npx tsx bench/webhook-fairness.ts [options]

  --quick             20 s per mode, 5 s warm-up, 10 s grace: a smoke check
  --duration <s>      measured seconds of writes per mode                       [180]
  --warmup <s>        seconds of writes before the measured window              [15]
  --grace <s>         after the writes stop, how long late deliveries may still arrive [20]
  --rate <n>          POST /v1/todos per second, alternating the two companies    [50]
  --modes <list>      healthy, hanging-N, failing-N (N endpoints of company 2)
                      [healthy,hanging-5,hanging-20,failing-5,failing-20]
  --backends <list>   sqlite, postgres                                         [sqlite,postgres]
  --pg <url>          Postgres server (a schema of its own per mode)  [$WORKFORCE_TEST_PG_URL or local]
  --timeout-ms <ms>   webhookOptions.timeoutMs (default: the plugin's own, 15 s)
  --json <file>       also write every figure as JSON
  --help`

const SERVER_ENTRY = fileURLToPath(new URL('./webhook-fairness-server.ts', import.meta.url))
const READY_TIMEOUT_MS = 120_000
const CLOSE_TIMEOUT_MS = 15_000
const COMPANIES = [1, 2] as const
/** The company whose extra endpoints hang or fail. */
const BAD_COMPANY = 2
const HEALTHY_PER_COMPANY = 5
/** Open-loop writes still unanswered beyond this are not sent (counted as skipped): bounded memory. */
const MAX_IN_FLIGHT = 2_000
/** A write unanswered after this counts as failed. */
const POST_TIMEOUT_MS = 60_000

type Behaviour = 'healthy' | 'hanging' | 'failing'
export interface Mode {
  name: string
  behaviour: Behaviour
  bad: number
}

export interface FairnessOptions {
  durationS: number
  warmupS: number
  graceS: number
  rate: number
  modes: Mode[]
  backends: Array<'sqlite' | 'postgres'>
  pg: string
  timeoutMs: number | undefined
  json: string | undefined
  help: boolean
}

export function parseFairnessOptions(argv: string[]): FairnessOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      grace: { type: 'string' },
      rate: { type: 'string', default: '50' },
      modes: { type: 'string', default: 'healthy,hanging-5,hanging-20,failing-5,failing-20' },
      backends: { type: 'string', default: 'sqlite,postgres' },
      pg: { type: 'string', default: process.env.WORKFORCE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
      'timeout-ms': { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  const quick = values.quick
  const modes = values.modes.split(',').map((name): Mode => {
    const trimmed = name.trim()
    if (trimmed === 'healthy') return { name: trimmed, behaviour: 'healthy', bad: 0 }
    const match = /^(hanging|failing)-(\d+)$/.exec(trimmed)
    if (match === null || Number(match[2]) < 1 || Number(match[2]) > 100) throw new TypeError(`--modes: "${trimmed}" is not healthy, hanging-N or failing-N (N 1..100)`)
    return { name: trimmed, behaviour: match[1] as Behaviour, bad: Number(match[2]) }
  })
  const backends = values.backends.split(',').map((backend) => {
    if (backend !== 'sqlite' && backend !== 'postgres') throw new TypeError(`--backends: "${backend}" is not sqlite or postgres`)
    return backend
  })
  return {
    durationS: integer('--duration', values.duration ?? (quick ? '20' : '180'), 5, 3_600),
    warmupS: integer('--warmup', values.warmup ?? (quick ? '5' : '15'), 0, 600),
    graceS: integer('--grace', values.grace ?? (quick ? '10' : '20'), 1, 600),
    rate: integer('--rate', values.rate, 2, 2_000),
    modes,
    backends,
    pg: values.pg,
    timeoutMs: values['timeout-ms'] === undefined ? undefined : integer('--timeout-ms', values['timeout-ms'], 100, 600_000),
    json: values.json,
    help: values.help,
  }
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable with other processes' `Date.now()`. */
const epochNow = () => performance.timeOrigin + performance.now()

// ---------------------------------------------------------------------------------------------
// Receivers

interface Receiver {
  companyId: number
  behaviour: Behaviour
  url: string
  server: Server
  sockets: Set<Socket>
  /** Requests received (attempts), duplicates included. */
  requests: number
  /** Requests received and not answered whose connection is still open (hanging receivers). */
  open: Set<ServerResponse>
  /** Healthy: first arrival (epoch ms) per to-do id. */
  arrivals: Map<number, number>
  duplicates: number
}

async function startReceiver(companyId: number, behaviour: Behaviour, name: string): Promise<Receiver> {
  const receiver: Receiver = {
    companyId,
    behaviour,
    url: '',
    server: undefined as unknown as Server,
    sockets: new Set(),
    requests: 0,
    open: new Set(),
    arrivals: new Map(),
    duplicates: 0,
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    receiver.requests++
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const at = epochNow()
      if (behaviour === 'hanging') {
        // Accepts the request and never answers; the connection stays open until the sender gives up.
        receiver.open.add(res)
        res.on('close', () => receiver.open.delete(res))
        return
      }
      if (behaviour === 'failing') {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver failing on purpose')
        return
      }
      res.writeHead(204).end()
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { id?: number } }
      const id = event.data?.id
      if (typeof id !== 'number') return
      if (receiver.arrivals.has(id)) receiver.duplicates++
      else receiver.arrivals.set(id, at)
    })
  })
  server.keepAliveTimeout = 60_000
  server.on('connection', (socket: Socket) => {
    receiver.sockets.add(socket)
    socket.on('close', () => receiver.sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.server = server
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/${name}`
  return receiver
}

async function stopReceiver(receiver: Receiver): Promise<void> {
  const closed = new Promise<void>((resolve) => receiver.server.close(() => resolve()))
  for (const socket of receiver.sockets) socket.destroy()
  receiver.server.closeAllConnections()
  await closed
}

// ---------------------------------------------------------------------------------------------
// The server process

interface ServerHandle {
  baseUrl: string
  keys: Record<number, string>
  stats(): Promise<ServerStats>
  close(): Promise<void>
  child: ChildProcess
}

async function startServer(config: FairnessServerConfig): Promise<ServerHandle> {
  const child = fork(SERVER_ENTRY, [JSON.stringify(config)], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  const ready = await nextMessage(child, 'ready', READY_TIMEOUT_MS)
  return {
    baseUrl: ready.baseUrl,
    keys: ready.keys,
    child,
    async stats() {
      const reply = nextMessage(child, 'stats', 30_000)
      child.send({ type: 'stats' } satisfies FairnessParentMessage)
      return (await reply).stats
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.send({ type: 'close' } satisfies FairnessParentMessage)
      const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    },
  }
}

function nextMessage<T extends FairnessServerMessage['type']>(child: ChildProcess, type: T, timeoutMs: number): Promise<Extract<FairnessServerMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer)
      child.off('message', onMessage)
      child.off('exit', onExit)
    }
    const onMessage = (message: FairnessServerMessage) => {
      if (message.type === 'failed') {
        cleanup()
        reject(new Error(`fairness server failed:\n${message.message}`))
      } else if (message.type === type) {
        cleanup()
        resolve(message as Extract<FairnessServerMessage, { type: T }>)
      }
    }
    const onExit = (code: number | null, signal: string | null) => {
      cleanup()
      reject(new Error(`fairness server exited (code ${String(code)}, signal ${String(signal)}) while waiting for "${type}"`))
    }
    const timer = setTimeout(() => {
      cleanup()
      child.kill('SIGKILL')
      reject(new Error(`fairness server sent no "${type}" within ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('message', onMessage)
    child.on('exit', onExit)
  })
}

/** Children this process started: killed by pid if it is interrupted. */
const running = new Set<ChildProcess>()
/** Cleanups still owed (temporary files, Postgres schemas), run on interruption too. */
const cleanups = new Set<() => Promise<void> | void>()
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of running) child.kill('SIGKILL')
    void Promise.allSettled([...cleanups].map((cleanup) => cleanup())).then(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------------
// The writes

interface WriteSample {
  companyId: number
  /** Sent inside the measured window. */
  measured: boolean
  status: number
  latencyMs: number
  todoId?: number
  createdAtMs?: number
  /** A non-2xx answer's status and the start of its body, or the client's error. */
  failure?: string
}

interface WriteTarget {
  key: string
  body: string
}

/** GETs one JSON resource with the company's key. */
async function getJson(url: string, key: string, agent: Agent): Promise<any> {
  const res = await request(url, { dispatcher: agent, headers: { 'x-api-key': key } })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${text}`)
  return JSON.parse(text)
}

/** A to-do body valid for the company: one of its lists, assigned to one of its members. */
async function writeTarget(baseUrl: string, key: string, agent: Agent): Promise<WriteTarget> {
  const todos = await getJson(`${baseUrl}/v1/todos?per_page=1`, key, agent)
  const users = await getJson(`${baseUrl}/v1/users?per_page=1`, key, agent)
  const listId = todos.data?.[0]?.list_id
  const userId = users.data?.[0]?.id
  if (typeof listId !== 'number' || typeof userId !== 'number') throw new Error('seed has no to-do list or member for a company')
  return { key, body: JSON.stringify({ title: 'fairness bench', list_id: listId, assigned_to: userId }) }
}

/**
 * `POST /v1/todos` at `rate` per second for `totalS` seconds, open loop: each write is sent at
 * its scheduled time whether or not earlier ones have been answered, so a slow API cannot lower
 * the offered load (no coordinated omission). Writes from `measureFromS` on are measured.
 */
async function drive(baseUrl: string, targets: Map<number, WriteTarget>, agent: Agent, rate: number, totalS: number, measureFromS: number) {
  const samples: WriteSample[] = []
  const pending = new Set<Promise<void>>()
  let skipped = 0
  const total = Math.round(rate * totalS)
  const start = performance.now()
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    if (pending.size >= MAX_IN_FLIGHT) {
      skipped++
      continue
    }
    const companyId = COMPANIES[i % COMPANIES.length] as number
    const target = targets.get(companyId) as WriteTarget
    const measured = i >= rate * measureFromS
    const sent = performance.now()
    const one = request(`${baseUrl}/v1/todos`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'x-api-key': target.key, 'content-type': 'application/json' },
      body: target.body,
      headersTimeout: POST_TIMEOUT_MS,
      bodyTimeout: POST_TIMEOUT_MS,
    })
      .then(async (res) => {
        const text = await res.body.text()
        const sample: WriteSample = { companyId, measured, status: res.statusCode, latencyMs: performance.now() - sent }
        if (res.statusCode !== 201 && res.statusCode !== 200) sample.failure = `${res.statusCode} ${text.slice(0, 160)}`
        if (res.statusCode === 201 || res.statusCode === 200) {
          const parsed = JSON.parse(text)
          const todo = parsed.data ?? parsed
          sample.todoId = todo.id
          sample.createdAtMs = Date.parse(todo.created_at)
        }
        samples.push(sample)
      })
      .catch((error: unknown) => {
        samples.push({ companyId, measured, status: 0, latencyMs: performance.now() - sent, failure: String(error) })
      })
      .finally(() => pending.delete(one))
    pending.add(one)
  }
  const writesEnded = performance.now()
  await Promise.all(pending)
  return { samples, skipped, writesEnded }
}

// ---------------------------------------------------------------------------------------------
// One mode

interface Latency {
  count: number
  p50: number
  p99: number
  max: number
}

export interface ModeResult {
  backend: string
  mode: string
  load1m: number
  writes: { measured: number; ok: number; failed: number; skipped: number; latency: Latency; firstFailure?: string }
  healthy: {
    expected: number
    delivered: number
    duplicates: number
    perSecond: number
    latency: Latency
    perCompany: Record<number, { expected: number; delivered: number; perSecond: number; latency: Latency }>
  }
  bad: { endpoints: number; requests: number; openAtEnd: number }
  server: { gcMinor: number; gcMajor: number; gcIncremental: number; rssMiB: number; cpuShare: number }
  measuredS: number
}

/** Nearest-rank percentiles; `Infinity` stands for a delivery that never arrived. */
function latency(values: number[]): Latency {
  const sorted = Float64Array.from(values).sort()
  const at = (fraction: number) => (sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] as number))
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: at(1) }
}

async function runMode(backend: 'sqlite' | 'postgres', mode: Mode, index: number, options: FairnessOptions, log: (line: string) => void): Promise<ModeResult> {
  const receivers: Receiver[] = []
  for (const companyId of COMPANIES) {
    for (let i = 0; i < HEALTHY_PER_COMPANY; i++) receivers.push(await startReceiver(companyId, 'healthy', `c${companyId}-healthy-${i}`))
  }
  for (let i = 0; i < mode.bad; i++) receivers.push(await startReceiver(BAD_COMPANY, mode.behaviour, `c${BAD_COMPANY}-${mode.behaviour}-${i}`))

  let config: FairnessServerConfig
  let dropStore: () => Promise<void>
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'wfa-bench-fairness-'))
    config = { backend, target: join(dir, 'bench.db'), endpoints: [] }
    dropStore = async () => rmSync(dir, { recursive: true, force: true })
  } else {
    const schema = `wfa_bench_fair_${process.pid}_${index}`
    config = { backend, target: options.pg, schema, endpoints: [] }
    dropStore = async () => {
      const admin = new pg.Client({ connectionString: options.pg })
      await admin.connect()
      try {
        await admin.query(`drop schema if exists ${schema} cascade`)
      } finally {
        await admin.end()
      }
    }
  }
  config.endpoints = receivers.map((r) => ({ companyId: r.companyId, url: r.url }))
  if (options.timeoutMs !== undefined) config.timeoutMs = options.timeoutMs
  cleanups.add(dropStore)

  const agent = new Agent({ connections: 256, keepAliveTimeout: 30_000 })
  let server: ServerHandle | undefined
  try {
    server = await startServer(config)
    const targets = new Map<number, WriteTarget>()
    for (const companyId of COMPANIES) targets.set(companyId, await writeTarget(server.baseUrl, server.keys[companyId] as string, agent))

    const load1m = loadavg()[0] as number
    const totalS = options.warmupS + options.durationS
    const startEpoch = epochNow()
    const measureFromEpoch = startEpoch + options.warmupS * 1000
    const measureToEpoch = startEpoch + totalS * 1000
    // Server statistics at the measured window's edges, taken while the writes run.
    const statsAtStart = new Promise<ServerStats>((resolve, reject) => setTimeout(() => server!.stats().then(resolve, reject), options.warmupS * 1000))
    const { samples, skipped } = await drive(server.baseUrl, targets, agent, options.rate, totalS, options.warmupS)
    const statsAtEnd = await server.stats()
    const before = await statsAtStart

    // Every measured write's deliveries to the healthy endpoints of its company.
    const measured = samples.filter((s) => s.measured)
    const written = measured.filter((s) => s.todoId !== undefined)
    const healthy = receivers.filter((r) => r.behaviour === 'healthy')
    const expected = written.reduce((n, s) => n + healthy.filter((r) => r.companyId === s.companyId).length, 0)
    const arrivedFor = () => written.reduce((n, s) => n + healthy.filter((r) => r.companyId === s.companyId && r.arrivals.has(s.todoId as number)).length, 0)
    const graceEnd = measureToEpoch + options.graceS * 1000
    while (epochNow() < graceEnd && arrivedFor() < expected) await new Promise((resolve) => setTimeout(resolve, 100))

    const perCompany: ModeResult['healthy']['perCompany'] = {}
    const all: number[] = []
    for (const companyId of COMPANIES) {
      const own = healthy.filter((r) => r.companyId === companyId)
      const values: number[] = []
      for (const s of written.filter((w) => w.companyId === companyId)) {
        for (const r of own) {
          const at = r.arrivals.get(s.todoId as number)
          values.push(at === undefined ? Number.POSITIVE_INFINITY : at - (s.createdAtMs as number))
        }
      }
      const inWindow = own.reduce((n, r) => n + [...r.arrivals.values()].filter((at) => at >= measureFromEpoch && at < measureToEpoch).length, 0)
      perCompany[companyId] = {
        expected: values.length,
        delivered: values.filter(Number.isFinite).length,
        perSecond: inWindow / options.durationS,
        latency: latency(values),
      }
      all.push(...values)
    }
    const bad = receivers.filter((r) => r.behaviour !== 'healthy')
    const failures = measured.filter((s) => s.todoId === undefined)
    const cpuShare = (statsAtEnd.cpuMicros - before.cpuMicros) / 1e6 / options.durationS
    const result: ModeResult = {
      backend,
      mode: mode.name,
      load1m,
      writes: {
        measured: measured.length,
        ok: written.length,
        failed: failures.length,
        skipped,
        latency: latency(measured.map((s) => s.latencyMs)),
        ...(failures[0]?.failure === undefined ? {} : { firstFailure: failures[0].failure }),
      },
      healthy: {
        expected,
        delivered: all.filter(Number.isFinite).length,
        duplicates: healthy.reduce((n, r) => n + r.duplicates, 0),
        perSecond: Object.values(perCompany).reduce((n, c) => n + c.perSecond, 0),
        latency: latency(all),
        perCompany,
      },
      bad: { endpoints: bad.length, requests: bad.reduce((n, r) => n + r.requests, 0), openAtEnd: bad.reduce((n, r) => n + r.open.size, 0) },
      server: {
        gcMinor: statsAtEnd.gc.minor - before.gc.minor,
        gcMajor: statsAtEnd.gc.major - before.gc.major,
        gcIncremental: statsAtEnd.gc.incremental - before.gc.incremental,
        rssMiB: statsAtEnd.rssMiB,
        cpuShare,
      },
      measuredS: options.durationS,
    }
    log(
      `fairness: ${backend} ${mode.name.padEnd(10)} healthy ${result.healthy.delivered}/${expected} delivered, ${result.healthy.perSecond.toFixed(1)}/s, ` +
        `p50 ${ms(result.healthy.latency.p50)} p99 ${ms(result.healthy.latency.p99)}; POST p50 ${ms(result.writes.latency.p50)} p99 ${ms(result.writes.latency.p99)} ` +
        `(${result.writes.failed} failed${result.writes.firstFailure === undefined ? '' : `, the first: ${result.writes.firstFailure}`}, ${skipped} skipped); bad endpoints: ${result.bad.requests} requests, ${result.bad.openAtEnd} open at end; ` +
        `GCs ${result.server.gcMinor} minor / ${result.server.gcMajor} major; load ${load1m.toFixed(2)}`,
    )
    return result
  } finally {
    for (const receiver of receivers) await stopReceiver(receiver)
    if (server !== undefined) await server.close()
    await agent.close()
    await dropStore()
    cleanups.delete(dropStore)
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function ms(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? '–' : 'never'
  return value >= 1_000 ? `${(value / 1_000).toFixed(1)} s` : `${value.toFixed(value < 10 ? 1 : 0)} ms`
}

function ratio(value: number, base: number | undefined): string {
  if (base === undefined || !Number.isFinite(base) || base <= 0) return '–'
  if (!Number.isFinite(value)) return '∞'
  return `${(value / base).toFixed(2)}×`
}

/** The healthy figures a row is judged against: an average of the `healthy` runs around it. */
interface Baseline {
  label: string
  p50: number
  p99: number
  perSecond: number
  postP50: number
  postP99: number
}

/**
 * The baseline of `rows[index]`: for a degraded mode, the mean of the nearest `healthy` run before
 * it and the nearest after it (one of them when only one exists), so that a run interleaving
 * `healthy` between the degraded modes (`healthy,hanging-5,healthy,failing-5,healthy`) judges each
 * against what the machine did just then; for a repeated `healthy`, the one before it (its noise).
 */
export function baselineOf(rows: readonly ModeResult[], index: number): Baseline | undefined {
  const healthy = rows.map((row, at) => ({ row, at })).filter(({ row }) => row.mode === 'healthy')
  const before = healthy.filter(({ at }) => at < index).at(-1)
  const after = rows[index]?.mode === 'healthy' ? undefined : healthy.find(({ at }) => at > index)
  const around = [before, after].filter((entry) => entry !== undefined)
  if (around.length === 0) return undefined
  const mean = (pick: (row: ModeResult) => number) => around.reduce((sum, { row }) => sum + pick(row), 0) / around.length
  return {
    label: around.map(({ at }) => `#${at + 1}`).join('+'),
    p50: mean((row) => row.healthy.latency.p50),
    p99: mean((row) => row.healthy.latency.p99),
    perSecond: mean((row) => row.healthy.perSecond),
    postP50: mean((row) => row.writes.latency.p50),
    postP99: mean((row) => row.writes.latency.p99),
  }
}

export function fairnessTable(results: ModeResult[]): string {
  const lines: string[] = []
  for (const backend of [...new Set(results.map((r) => r.backend))]) {
    const rows = results.filter((r) => r.backend === backend)
    lines.push(
      '',
      `**${backend}**`,
      '',
      '| # | mode | judged against | healthy delivered / expected | deliveries/s (× healthy) | p50 commit → arrival (×) | p99 (×) | p99 company 1 / company 2 | POST /v1/todos p50 (×) | p99 (×) | POST failed | attempts at the bad endpoints (open at end) | server GCs minor / major | goals |',
      '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    )
    rows.forEach((r, index) => {
      const h = r.healthy
      const base = baselineOf(rows, index)
      // A goal against a baseline that is itself unmeasured (a delivery never arrived) is not judged.
      const judge = (name: string, met: boolean, baseline: number) => (Number.isFinite(baseline) ? `${name} ${met ? '✓' : '✗'}` : `${name} –`)
      // A repeated `healthy` mode shows how far the machine's noise alone moves the figures: not judged.
      const goals =
        base === undefined || r.mode === 'healthy'
          ? ''
          : [
              judge('p99', h.latency.p99 <= 2 * base.p99, base.p99),
              judge('rate', h.perSecond >= 0.8 * base.perSecond, base.perSecond),
              judge('POST', r.writes.latency.p99 <= 1.5 * base.postP99, base.postP99),
            ].join(', ')
      lines.push(
        `| ${index + 1} | ${r.mode} | ${base?.label ?? '–'} | ${h.delivered.toLocaleString('en')} / ${h.expected.toLocaleString('en')} | ${h.perSecond.toFixed(1)} (${ratio(h.perSecond, base?.perSecond)}) | ` +
          `${ms(h.latency.p50)} (${ratio(h.latency.p50, base?.p50)}) | ${ms(h.latency.p99)} (${ratio(h.latency.p99, base?.p99)}) | ` +
          `${ms(h.perCompany[1]?.latency.p99 ?? Number.NaN)} / ${ms(h.perCompany[2]?.latency.p99 ?? Number.NaN)} | ` +
          `${ms(r.writes.latency.p50)} (${ratio(r.writes.latency.p50, base?.postP50)}) | ${ms(r.writes.latency.p99)} (${ratio(r.writes.latency.p99, base?.postP99)}) | ` +
          `${r.writes.failed + r.writes.skipped} / ${r.writes.measured} | ${r.bad.endpoints === 0 ? '–' : `${r.bad.requests.toLocaleString('en')} (${r.bad.openAtEnd})`} | ` +
          `${r.server.gcMinor} / ${r.server.gcMajor} | ${goals} |`,
      )
    })
  }
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------

export async function runFairnessBench(options: FairnessOptions, log: (line: string) => void): Promise<ModeResult[]> {
  const results: ModeResult[] = []
  let index = 0
  for (const backend of options.backends) {
    for (const mode of options.modes) results.push(await runMode(backend, mode, index++, options, log))
  }
  return results
}

async function main(): Promise<void> {
  let options: FairnessOptions
  try {
    options = parseFairnessOptions(process.argv.slice(2))
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${FAIRNESS_USAGE}`)
    process.exitCode = 1
    return
  }
  if (options.help) {
    console.log(FAIRNESS_USAGE)
    return
  }
  const log = (line: string) => console.error(line)
  const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`
  const settings =
    `${options.rate} POST /v1/todos per second alternating companies ${COMPANIES.join(' and ')}, ${HEALTHY_PER_COMPANY} healthy endpoints each; ` +
    `bad endpoints belong to company ${BAD_COMPANY}; ${options.warmupS} s warm-up + ${options.durationS} s measured + up to ${options.graceS} s grace per mode; ` +
    `attempt timeout ${options.timeoutMs === undefined ? 'the plugin default' : `${options.timeoutMs} ms`}`
  log(`fairness: ${machine}\nfairness: ${settings}`)
  const started = new Date().toISOString()
  const results = await runFairnessBench(options, log)
  console.log(`\n${machine}; started ${started}\n${settings}\n${fairnessTable(results)}`)
  if (options.json !== undefined) {
    writeFileSync(options.json, `${JSON.stringify({ machine, started, options, results }, null, 2)}\n`)
    log(`fairness: figures written to ${options.json}`)
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exitCode = 1
})
