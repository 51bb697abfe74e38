/**
 * Webhook delivery throughput and latency (issue 10): events published by the host at a steady
 * rate, in transactions of 10, delivered by the plugin's dispatcher to a keep-alive receiver on
 * loopback. Reports deliveries per second, commit-to-arrival latency (p50, p99) and the number
 * of pending deliveries sampled every second (the outbox must stay flat). The baseline, in the
 * same run, is the same receiver loaded by plain undici POSTs with the same concurrency: what
 * the HTTP path alone allows on this machine.
 *
 * A second phase measures the dispatcher's ceiling: `--backlog` events are published with no
 * dispatcher running, then one instance's dispatcher drains them (deliveries per second).
 *
 * A steady phase at `--slow-rate` (300 by default; 0 skips it) follows the first: the rate at
 * which SQLite must keep p99 commit→arrival under 100 ms (issue 25). What a steady phase leaves
 * pending is failed before the next phase, and each phase counts only its own events.
 *
 * The drain is compared with plain POSTs at the same number in flight (issue 25, the fair
 * comparison), run just before and just after it and averaged (this machine's speed moves within
 * minutes; both are printed): a backlog to one endpoint, which its cap keeps at 4 in flight, against POSTs 4 at
 * a time; and a backlog spread over `--endpoints` endpoints in `--companies` companies (each
 * event goes to each endpoint of its company), few enough per endpoint and company that only the
 * dispatcher's `concurrency` binds, against POSTs with that many in flight. A drain's rate runs
 * from its first arrival to its last. The one-endpoint
 * drain against the full concurrency (the figure before) is printed too.
 *
 * On Postgres, each backlog is followed by `analyze` of its tables before the drain, as
 * autovacuum keeps statistics on a database that has been running: the claim's plan depends on
 * them, and the bench's tables are minutes old (`--fresh-statistics` leaves them as they are,
 * the case of a burst into a young table; docs/benchmarks.md).
 *
 * `--profile DIR` samples this process's CPU during each drain only (node:inspector; the receiver
 * shares the process) into `DIR/<backend>-<drain>.cpuprofile`, and prints the main thread's busy
 * time per delivery by place and the heaviest functions.
 *
 * Usage: npx tsx bench/webhooks.ts [--rate 1000] [--slow-rate 300] [--duration 10] [--backlog 10000] [--endpoints 32] [--companies 8] [--baseline-s 5] [--backends sqlite,postgres] [--pg postgres://…] [--profile DIR] [--fresh-statistics]
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { Agent, request } from 'undici'
import { openPostgresAdapter } from '../adapters/postgres/index.js'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import type { ReferenceAdapterPorts } from '../src/ports/index.js'
import { portsOf } from '../src/ports/index.js'
import type { CompanyRecord } from '../src/ports/records.js'
import { workforceApi } from '../src/plugin.js'
import { CpuSampler, readSelfTimes } from './cpu-profile.js'

const { values } = parseArgs({
  options: {
    rate: { type: 'string' },
    'slow-rate': { type: 'string' },
    duration: { type: 'string' },
    backlog: { type: 'string' },
    endpoints: { type: 'string' },
    companies: { type: 'string' },
    'baseline-s': { type: 'string' },
    backends: { type: 'string' },
    pg: { type: 'string' },
    profile: { type: 'string' },
    'fresh-statistics': { type: 'boolean' },
  },
})
const RATE = Number(values.rate ?? 1_000)
/** A second steady phase at this rate (0: none): SQLite must keep p99 commit→arrival under 100 ms at 300/s (issue 25). */
const SLOW_RATE = Number(values['slow-rate'] ?? 300)
const DURATION_S = Number(values.duration ?? 10)
const BACKLOG = Number(values.backlog ?? 10_000)
const BACKENDS = (values.backends ?? 'sqlite,postgres').split(',')
const PG_ADMIN = values.pg ?? process.env.WORKFORCE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
/** Endpoints (and their companies) of the spread drain: each company gets ENDPOINTS / COMPANIES of them. */
const ENDPOINTS = Number(values.endpoints ?? 32)
const COMPANIES = Number(values.companies ?? 8)
const BASELINE_S = Number(values['baseline-s'] ?? 5)
const BATCH = 10
const PROFILE_DIR = values.profile
/** Postgres: `analyze` the tables after publishing each backlog (the default), or not. */
const ANALYZE = values['fresh-statistics'] !== true
/** The dispatcher's `concurrency` here (its default): attempts in flight in all. */
const CONCURRENCY = 64
/** The defaults of `endpointConcurrency` and `companyConcurrency` (src/options.ts), which the bench leaves alone. */
const ENDPOINT_CAP = 4
const COMPANY_CAP = 16
const FIRST_SPREAD_COMPANY = 101
if (!(BACKLOG >= 100 && BACKLOG <= 200_000) || !(BASELINE_S >= 1 && BASELINE_S <= 60)) throw new Error('--backlog 100..200000, --baseline-s 1..60')
if (!(Number.isInteger(ENDPOINTS) && Number.isInteger(COMPANIES) && COMPANIES >= 1 && ENDPOINTS >= COMPANIES && ENDPOINTS <= 512 && ENDPOINTS % COMPANIES === 0)) {
  throw new Error('--endpoints 1..512, a multiple of --companies')
}
if (ENDPOINTS * ENDPOINT_CAP < CONCURRENCY || COMPANIES * COMPANY_CAP < CONCURRENCY) {
  console.error(`bench: warning: ${ENDPOINTS} endpoints in ${COMPANIES} companies cannot hold ${CONCURRENCY} in flight (caps ${ENDPOINT_CAP} per endpoint, ${COMPANY_CAP} per company): the spread drain is cap-bound`)
}
if (!(RATE >= 10 && RATE <= 20_000) || !(DURATION_S >= 1 && DURATION_S <= 120)) throw new Error('--rate 10..20000, --duration 1..120')
if (!(SLOW_RATE === 0 || (SLOW_RATE >= 10 && SLOW_RATE <= 20_000))) throw new Error('--slow-rate 0 or 10..20000')

const COMPANY: CompanyRecord = { id: 1, name: 'Bench', timezone: 'Europe/Berlin', country: 'DE', created_at: new Date(0), updated_at: new Date(0) }

interface Receiver {
  url: string
  /** When each `webhook-id` last arrived, at any path. */
  arrivals: Map<string, number>
  /** When each delivery arrived, keyed `<path> <webhook-id>`: the spread drain's endpoints share event ids. */
  deliveries: Map<string, number>
  server: Server
}

async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>()
  const deliveries = new Map<string, number>()
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const id = req.headers['webhook-id']
      if (typeof id === 'string') {
        const now = performance.now()
        arrivals.set(id, now)
        deliveries.set(`${req.url} ${id}`, now)
      }
      res.writeHead(204).end()
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, arrivals, deliveries, server }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN

/**
 * Plain undici POSTs of a delivery-sized body, `inFlight` at a time for `seconds`, over at most 32
 * connections (the dispatcher's transport's `connectionsPerOrigin`): what the HTTP path alone allows.
 */
async function baseline(receiver: Receiver, seconds: number, inFlight: number): Promise<number> {
  const agent = new Agent({ connections: Math.min(32, inFlight), keepAliveTimeout: 30_000 })
  const body = JSON.stringify({ id: 'evt_x', type: 'company.updated', created_at: new Date().toISOString(), company_id: 1, data: COMPANY })
  let sent = 0
  const end = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const res = await request(receiver.url, { method: 'POST', body, dispatcher: agent, headers: { 'content-type': 'application/json', 'webhook-id': `base_${sent}` } })
        await res.body.dump()
        sent += 1
      }
    }),
  )
  await agent.close()
  return sent / seconds
}

/** The mean of the plain-POST rates measured just before and just after a drain, both printed. */
function around(backend: string, drain: string, before: number, after: number): number {
  console.error(`bench: ${backend}: plain POSTs around the ${drain} drain: ${Math.round(before)} /s before, ${Math.round(after)} /s after`)
  return (before + after) / 2
}

interface Opened {
  adapter: ReferenceAdapterPorts & { db: Kysely<any> }
  close(): Promise<void>
}

async function open(backend: string): Promise<Opened> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'wfa-bench-webhooks-'))
    const adapter = await openSqliteAdapter({ filename: join(dir, 'bench.db') })
    return { adapter, close: async () => (await adapter.close(), rmSync(dir, { recursive: true, force: true })) }
  }
  const name = `wfa_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_ADMIN })
  await admin.connect()
  await admin.query(`create database ${name}`)
  const url = new URL(PG_ADMIN)
  url.pathname = `/${name}`
  const adapter = await openPostgresAdapter({ connectionString: url.toString() })
  return {
    adapter,
    async close() {
      await adapter.close()
      await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

interface Steady {
  rate: number
  published: number
  delivered: number
  deliveriesPerS: number
  p50: number
  p99: number
  /** p99 of the events committed after the phase's first second: a process's first deliveries pay undici's one-time start (its HTTP parser, about 30 ms here). */
  p99AfterFirstSecond: number
  pendingSamples: number[]
}

interface Result {
  backend: string
  steady: Steady
  slow: Steady | undefined
  /** Pending deliveries a steady phase left behind, failed before the drain so they do not count in it. */
  leftOver: number
  drained: number
  drainPerS: number
  /** Plain POSTs, ENDPOINT_CAP in flight: the one-endpoint drain's fair baseline. */
  baselineCapPerS: number
  /** Plain POSTs, CONCURRENCY in flight: the spread drain's fair baseline (and the one-endpoint's before). */
  baselinePerS: number
  spreadDrained: number
  /** Deliveries the spread backlog made: BACKLOG rounded up to whole events. */
  spreadExpected: number
  spreadDrainPerS: number
}

/** The app with the plugin over `adapter`, its dispatcher on or off. */
async function appOver(adapter: ReferenceAdapterPorts, secretKey: string, dispatcher: boolean) {
  const app = Fastify()
  await app.register(workforceApi, {
    ...portsOf(adapter),
    rateLimit: false,
    webhookOptions: { secretKey, allowPrivateDestinations: true, concurrency: CONCURRENCY, dispatcher },
  })
  await app.ready()
  return app
}

const inputs = (from: number, count: number, companyOf: (i: number) => number = () => 1) =>
  Array.from({ length: count }, (_, i) => {
    const companyId = companyOf(from + i)
    return { type: 'company.updated' as const, companyId, record: { ...COMPANY, id: companyId, name: `Bench ${from + i}` } }
  })

type Transact = <T>(work: (trx: Kysely<any>) => Promise<T>) => Promise<T>

/** `rate` events/s for DURATION_S, BATCH per host transaction; latency from commit to arrival. */
async function steady(app: FastifyInstance, adapter: Opened['adapter'], transact: Transact, receiver: Receiver, rate: number, label: string): Promise<Steady> {
  receiver.arrivals.clear()
  const commits = new Map<string, number>()
  const pendingSamples: number[] = []
  const sampler = setInterval(() => {
    void sql<{ n: number }>`select count(*) as n from wfa_webhook_deliveries where status = 'pending'`
      .execute(adapter.db)
      .then((r) => pendingSamples.push(Number(r.rows[0]?.n ?? 0)))
  }, 1_000)
  const start = performance.now()
  const total = rate * DURATION_S
  let published = 0
  while (published < total) {
    const due = start + (published / rate) * 1000
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    const ids = await transact((trx) => app.workforceApi.events.publish(trx, inputs(published, BATCH)))
    const committed = performance.now()
    for (const id of ids) commits.set(id, committed)
    published += BATCH
  }
  const producedFor = (performance.now() - start) / 1000
  const arrived = () => [...commits.keys()].filter((id) => receiver.arrivals.has(id)).length
  const deadline = performance.now() + 30_000
  while (arrived() < published && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  clearInterval(sampler)
  const delivered = arrived()
  const end = Math.max(...[...commits.keys()].map((id) => receiver.arrivals.get(id) ?? 0))
  const latency = ([id, at]: [string, number]) => (receiver.arrivals.get(id) ?? Number.POSITIVE_INFINITY) - at
  const latencies = [...commits].map(latency).sort((a, b) => a - b)
  const afterFirstSecond = [...commits].filter(([, at]) => at >= start + 1_000).map(latency).sort((a, b) => a - b)
  console.error(`bench: ${label}: ${published} published at ${rate}/s in ${producedFor.toFixed(1)} s, ${delivered} delivered`)
  return { rate, published, delivered, deliveriesPerS: delivered / ((end - start) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), p99AfterFirstSecond: percentile(afterFirstSecond, 99), pendingSamples }
}

/**
 * From the first arrival to the last (s): a drain's rate is (arrivals − 1) / this, which leaves
 * out the app's start (plugin registration, the first claim), a fixed cost that is no part of a
 * delivery's.
 */
const spanS = (arrivals: number[]) => (Math.max(...arrivals) - Math.min(...arrivals)) / 1000

/**
 * Samples this process's CPU while `drain` runs, when `--profile` asked for it: written to
 * `<PROFILE_DIR>/<name>.cpuprofile`, then summed per delivery (busy main-thread time; the
 * receiver's share included, as it runs here too).
 */
async function profiled<T>(name: string, deliveries: () => number, drain: () => Promise<T>): Promise<T> {
  if (PROFILE_DIR === undefined) return drain()
  const sampler = new CpuSampler(200)
  await sampler.start()
  let result: T
  try {
    result = await drain()
  } finally {
    mkdirSync(PROFILE_DIR, { recursive: true })
    const file = join(PROFILE_DIR, `${name}.cpuprofile`)
    await sampler.stop(file)
    sampler.close()
    const times = readSelfTimes([file], join(import.meta.dirname, '..') + '/')
    const count = Math.max(1, deliveries())
    const per = (micros: number) => `${(micros / count).toFixed(1)} µs`
    const top = (map: Map<string, number>, n: number) =>
      [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([key, micros]) => `    ${per(micros).padStart(9)}  ${((100 * micros) / times.busyMicros).toFixed(1).padStart(5)} %  ${key}`)
    console.error(
      [
        `bench: profile ${file}: ${count} deliveries, ${per(times.busyMicros)} of busy main thread each`,
        '  by place:',
        ...top(times.places, 12),
        '  by function:',
        ...top(times.functions, 25),
      ].join('\n'),
    )
  }
  return result
}

/** Fails what a phase left pending, so the next phase measures only its own deliveries. @returns how many. */
async function failLeftOvers(adapter: Opened['adapter']): Promise<number> {
  const left = await sql<{ n: number }>`select count(*) as n from wfa_webhook_deliveries where status = 'pending'`.execute(adapter.db)
  await sql`update wfa_webhook_deliveries set status = 'failed', next_attempt_at = null, lease = null where status = 'pending'`.execute(adapter.db)
  return Number(left.rows[0]?.n ?? 0)
}

/** Postgres: the statistics a running database's autovacuum would keep, before a drain (see the header). */
async function analyzed(backend: string, adapter: Opened['adapter']): Promise<void> {
  if (backend !== 'postgres' || !ANALYZE) return
  await sql`analyze wfa_webhook_deliveries, wfa_webhook_endpoints, wfa_change_events`.execute(adapter.db)
}

/** The three phases on one backend's database; the caller closes it (and drops a Postgres one), also when a phase throws. */
async function run(backend: string, opened: Opened): Promise<Result> {
  const receiver = await startReceiver()
  const { adapter } = opened
  // SQLite's own transactor wakes the dispatcher at commit (docs/webhooks.md); Postgres uses NOTIFY.
  const transact: Transact = <T>(work: (trx: Kysely<any>) => Promise<T>): Promise<T> =>
    'transaction' in adapter && typeof adapter.transaction === 'function'
      ? (adapter.transaction as (w: typeof work) => Promise<T>)(work)
      : adapter.db.transaction().execute(work)
  const secretKey = randomBytes(32).toString('base64')
  const app = await appOver(adapter, secretKey, true)
  await app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['*'] })

  // Phase 1: a steady rate; then, if asked, a slower one (the rate SQLite must keep up with).
  const fast = await steady(app, adapter, transact, receiver, RATE, backend)
  let leftOver = await failLeftOvers(adapter)
  const slow = SLOW_RATE > 0 ? await steady(app, adapter, transact, receiver, SLOW_RATE, backend) : undefined
  await app.close()
  leftOver += await failLeftOvers(adapter)

  // Phase 2: a backlog published with no dispatcher running, then drained by one instance.
  const capBefore = await baseline(receiver, BASELINE_S, ENDPOINT_CAP)
  receiver.arrivals.clear()
  const publisher = await appOver(adapter, secretKey, false)
  const backlog = new Set<string>()
  for (let from = 0; from < BACKLOG; from += 500) {
    const ids = await transact((trx) => publisher.workforceApi.events.publish(trx, inputs(from, Math.min(500, BACKLOG - from))))
    for (const id of ids) backlog.add(id)
  }
  await publisher.close()
  await analyzed(backend, adapter)
  const drainer = await appOver(adapter, secretKey, true)
  const drainDeadline = performance.now() + 120_000
  await profiled(`${backend}-one-endpoint`, () => receiver.arrivals.size, async () => {
    while (receiver.arrivals.size < BACKLOG && performance.now() < drainDeadline) await new Promise((resolve) => setTimeout(resolve, 20))
  })
  const drainedIds = [...receiver.arrivals.keys()].filter((id) => backlog.has(id))
  const drained = drainedIds.length
  const drainS = spanS(drainedIds.map((id) => receiver.arrivals.get(id) ?? 0))
  await drainer.close()
  console.error(`bench: ${backend}: backlog of ${BACKLOG} drained: ${drained} in ${drainS.toFixed(1)} s`)
  const baselineCapPerS = around(backend, 'one endpoint', capBefore, await baseline(receiver, BASELINE_S, ENDPOINT_CAP))

  // Phase 3: a backlog of BACKLOG deliveries spread over ENDPOINTS endpoints in COMPANIES companies
  // (other than company 1), so that only the dispatcher's concurrency binds.
  const perCompany = ENDPOINTS / COMPANIES
  const spreadPublisher = await appOver(adapter, secretKey, false)
  for (let c = 0; c < COMPANIES; c += 1) {
    for (let e = 0; e < perCompany; e += 1) {
      await spreadPublisher.workforceApi.webhooks.create({ companyId: FIRST_SPREAD_COMPANY + c, url: `${receiver.url}/${c}/${e}`, events: ['*'] })
    }
  }
  const events = Math.ceil(BACKLOG / perCompany)
  const expected = new Set<string>()
  for (let from = 0; from < events; from += 500) {
    const ids = await transact((trx) => spreadPublisher.workforceApi.events.publish(trx, inputs(from, Math.min(500, events - from), (i) => FIRST_SPREAD_COMPANY + (i % COMPANIES))))
    ids.forEach((id, i) => {
      const company = (from + i) % COMPANIES
      for (let e = 0; e < perCompany; e += 1) expected.add(`/hooks/${company}/${e} ${id}`)
    })
  }
  await spreadPublisher.close()
  await analyzed(backend, adapter)
  const fullBefore = await baseline(receiver, BASELINE_S, CONCURRENCY)
  receiver.deliveries.clear()
  const spreadDrainer = await appOver(adapter, secretKey, true)
  const spreadDeadline = performance.now() + 120_000
  await profiled(`${backend}-spread`, () => receiver.deliveries.size, async () => {
    while (receiver.deliveries.size < expected.size && performance.now() < spreadDeadline) await new Promise((resolve) => setTimeout(resolve, 20))
  })
  const spreadArrivals = [...receiver.deliveries].filter(([key]) => expected.has(key)).map(([, at]) => at)
  const spreadS = spanS(spreadArrivals)
  await spreadDrainer.close()
  console.error(`bench: ${backend}: backlog of ${expected.size} over ${ENDPOINTS} endpoints in ${COMPANIES} companies drained: ${spreadArrivals.length} in ${spreadS.toFixed(1)} s`)
  const baselinePerS = around(backend, 'spread', fullBefore, await baseline(receiver, BASELINE_S, CONCURRENCY))
  receiver.server.closeAllConnections()
  receiver.server.close()
  return {
    backend,
    steady: fast,
    slow,
    leftOver,
    drained,
    drainPerS: (drained - 1) / drainS,
    baselineCapPerS,
    baselinePerS,
    spreadDrained: spreadArrivals.length,
    spreadExpected: expected.size,
    spreadDrainPerS: (spreadArrivals.length - 1) / spreadS,
  }
}

const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`
console.error(`bench: ${machine}; ${RATE} events/s for ${DURATION_S} s, ${BATCH} per transaction, ${CONCURRENCY} attempts in flight`)
const results: Result[] = []
for (const backend of BACKENDS) {
  const opened = await open(backend)
  try {
    results.push(await run(backend, opened))
  } finally {
    await opened.close()
  }
}
const ms = (value: number) => (Number.isNaN(value) ? '–' : `${value.toFixed(1)} ms`)
const perS = (value: number) => Math.round(value).toLocaleString('en')
const ratio = (drain: number, plain: number) => `${((100 * drain) / plain).toFixed(1)} %`
console.log(
  `\n${machine}\nphase 1: ${RATE} events/s offered for ${DURATION_S} s${SLOW_RATE > 0 ? `, then ${SLOW_RATE} events/s` : ''}, ${BATCH} per host transaction, one endpoint (default caps: ${ENDPOINT_CAP} in flight); phase 2: a backlog of ${BACKLOG} to that endpoint; phase 3: a backlog of ${BACKLOG} deliveries over ${ENDPOINTS} endpoints in ${COMPANIES} companies; dispatcher concurrency ${CONCURRENCY}; plain POSTs for ${BASELINE_S} s just before and just after each drain, averaged${BACKENDS.includes('postgres') ? `; Postgres statistics ${ANALYZE ? 'analyzed after each backlog' : 'left fresh (--fresh-statistics)'}` : ''}\n`,
)
console.log(`| backend | steady ${RATE}/s: delivered / published | p50 commit→arrival | p99 | p99 after its first second | pending, sampled each second |${SLOW_RATE > 0 ? ` ${SLOW_RATE}/s: delivered, p50, p99, p99 after its first second |` : ''}`)
console.log(`|---|---:|---:|---:|---:|---|${SLOW_RATE > 0 ? '---:|' : ''}`)
for (const r of results) {
  const slow = r.slow === undefined ? '' : ` ${r.slow.delivered} / ${r.slow.published}, ${ms(r.slow.p50)}, ${ms(r.slow.p99)}, ${ms(r.slow.p99AfterFirstSecond)} |`
  console.log(`| ${r.backend} | ${r.steady.delivered} / ${r.steady.published} | ${ms(r.steady.p50)} | ${ms(r.steady.p99)} | ${ms(r.steady.p99AfterFirstSecond)} | ${r.steady.pendingSamples.join(', ')} |${slow}`)
}
console.log(`\n| backend | backlog | in flight | drain deliveries/s | plain POSTs/s, same in flight | drain / plain |`)
console.log(`|---|---|---:|---:|---:|---:|`)
for (const r of results) {
  console.log(`| ${r.backend} | one endpoint (${r.drained} / ${BACKLOG}) | ${ENDPOINT_CAP} | ${perS(r.drainPerS)} | ${perS(r.baselineCapPerS)} | **${ratio(r.drainPerS, r.baselineCapPerS)}** |`)
  console.log(`| ${r.backend} | ${ENDPOINTS} endpoints in ${COMPANIES} companies (${r.spreadDrained} / ${r.spreadExpected}) | ${CONCURRENCY} | ${perS(r.spreadDrainPerS)} | ${perS(r.baselinePerS)} | **${ratio(r.spreadDrainPerS, r.baselinePerS)}** |`)
  console.log(`| ${r.backend} | one endpoint, against the full concurrency (the figure before) | ${ENDPOINT_CAP} vs ${CONCURRENCY} | ${perS(r.drainPerS)} | ${perS(r.baselinePerS)} | ${ratio(r.drainPerS, r.baselinePerS)} |`)
}
if (results.some((r) => r.leftOver > 0)) console.log(`\nleft pending by the steady phases (failed before the drain): ${results.map((r) => `${r.backend} ${r.leftOver}`).join(', ')}`)
if (results.some((r) => r.steady.delivered < r.steady.published || (r.slow !== undefined && r.slow.delivered < r.slow.published) || r.drained < BACKLOG || r.spreadDrained < r.spreadExpected)) process.exitCode = 1
