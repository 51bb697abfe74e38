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
 * Usage: npx tsx bench/webhooks.ts [--rate 1000] [--slow-rate 300] [--duration 10] [--backlog 10000] [--backends sqlite,postgres] [--pg postgres://…]
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
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

const { values } = parseArgs({
  options: {
    rate: { type: 'string' },
    'slow-rate': { type: 'string' },
    duration: { type: 'string' },
    backlog: { type: 'string' },
    backends: { type: 'string' },
    pg: { type: 'string' },
  },
})
const RATE = Number(values.rate ?? 1_000)
/** A second steady phase at this rate (0: none): SQLite must keep p99 commit→arrival under 100 ms at 300/s (issue 25). */
const SLOW_RATE = Number(values['slow-rate'] ?? 300)
const DURATION_S = Number(values.duration ?? 10)
const BACKLOG = Number(values.backlog ?? 10_000)
const BACKENDS = (values.backends ?? 'sqlite,postgres').split(',')
const PG_ADMIN = values.pg ?? process.env.WORKFORCE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const BATCH = 10
const CONCURRENCY = 64
if (!(RATE >= 10 && RATE <= 20_000) || !(DURATION_S >= 1 && DURATION_S <= 120)) throw new Error('--rate 10..20000, --duration 1..120')
if (!(SLOW_RATE === 0 || (SLOW_RATE >= 10 && SLOW_RATE <= 20_000))) throw new Error('--slow-rate 0 or 10..20000')

const COMPANY: CompanyRecord = { id: 1, name: 'Bench', timezone: 'Europe/Berlin', country: 'DE', created_at: new Date(0), updated_at: new Date(0) }

interface Receiver {
  url: string
  arrivals: Map<string, number>
  server: Server
}

async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>()
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const id = req.headers['webhook-id']
      if (typeof id === 'string') arrivals.set(id, performance.now())
      res.writeHead(204).end()
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, arrivals, server }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN

/** Plain undici POSTs of a delivery-sized body with CONCURRENCY in flight for `seconds`: the HTTP ceiling. */
async function baseline(receiver: Receiver, seconds: number): Promise<number> {
  const agent = new Agent({ connections: 32, keepAliveTimeout: 30_000 })
  const body = JSON.stringify({ id: 'evt_x', type: 'company.updated', created_at: new Date().toISOString(), company_id: 1, data: COMPANY })
  let sent = 0
  const end = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
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
  baselinePerS: number
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

const inputs = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ type: 'company.updated' as const, companyId: 1, record: { ...COMPANY, name: `Bench ${from + i}` } }))

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
  const latencies = [...commits].map(([id, at]) => (receiver.arrivals.get(id) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b)
  console.error(`bench: ${label}: ${published} published at ${rate}/s in ${producedFor.toFixed(1)} s, ${delivered} delivered`)
  return { rate, published, delivered, deliveriesPerS: delivered / ((end - start) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), pendingSamples }
}

/** Fails what a phase left pending, so the next phase measures only its own deliveries. @returns how many. */
async function failLeftOvers(adapter: Opened['adapter']): Promise<number> {
  const left = await sql<{ n: number }>`select count(*) as n from wfa_webhook_deliveries where status = 'pending'`.execute(adapter.db)
  await sql`update wfa_webhook_deliveries set status = 'failed', next_attempt_at = null, lease = null where status = 'pending'`.execute(adapter.db)
  return Number(left.rows[0]?.n ?? 0)
}

async function run(backend: string): Promise<Result> {
  const receiver = await startReceiver()
  const opened = await open(backend)
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
  receiver.arrivals.clear()
  const publisher = await appOver(adapter, secretKey, false)
  const backlog = new Set<string>()
  for (let from = 0; from < BACKLOG; from += 500) {
    const ids = await transact((trx) => publisher.workforceApi.events.publish(trx, inputs(from, Math.min(500, BACKLOG - from))))
    for (const id of ids) backlog.add(id)
  }
  await publisher.close()
  const drainStart = performance.now()
  const drainer = await appOver(adapter, secretKey, true)
  const drainDeadline = performance.now() + 120_000
  while (receiver.arrivals.size < BACKLOG && performance.now() < drainDeadline) await new Promise((resolve) => setTimeout(resolve, 20))
  const drainedIds = [...receiver.arrivals.keys()].filter((id) => backlog.has(id))
  const drained = drainedIds.length
  const drainS = (Math.max(...drainedIds.map((id) => receiver.arrivals.get(id) ?? 0)) - drainStart) / 1000
  await drainer.close()
  console.error(`bench: ${backend}: backlog of ${BACKLOG} drained: ${drained} in ${drainS.toFixed(1)} s`)

  const baselinePerS = await baseline(receiver, 5)
  await opened.close()
  receiver.server.closeAllConnections()
  receiver.server.close()
  return { backend, steady: fast, slow, leftOver, drained, drainPerS: drained / drainS, baselinePerS }
}

const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`
console.error(`bench: ${machine}; ${RATE} events/s for ${DURATION_S} s, ${BATCH} per transaction, ${CONCURRENCY} attempts in flight`)
const results: Result[] = []
for (const backend of BACKENDS) results.push(await run(backend))
const ms = (value: number) => `${value.toFixed(1)} ms`
console.log(
  `\n${machine}\nphase 1: ${RATE} events/s offered for ${DURATION_S} s${SLOW_RATE > 0 ? `, then ${SLOW_RATE} events/s` : ''}, ${BATCH} per host transaction; phase 2: a backlog of ${BACKLOG}; ${CONCURRENCY} attempts in flight; one endpoint (default caps: 4 in flight)\n`,
)
console.log(`| backend | steady ${RATE}/s: delivered / published | p50 commit→arrival | p99 | pending, sampled each second |${SLOW_RATE > 0 ? ` ${SLOW_RATE}/s: delivered, p50, p99 |` : ''} backlog drain deliveries/s | HTTP baseline req/s | drain / baseline |`)
console.log(`|---|---:|---:|---:|---|${SLOW_RATE > 0 ? '---:|' : ''}---:|---:|---:|`)
for (const r of results) {
  const slow = r.slow === undefined ? '' : ` ${r.slow.delivered} / ${r.slow.published}, ${ms(r.slow.p50)}, ${ms(r.slow.p99)} |`
  console.log(
    `| ${r.backend} | ${r.steady.delivered} / ${r.steady.published} | ${ms(r.steady.p50)} | ${ms(r.steady.p99)} | ${r.steady.pendingSamples.join(', ')} |${slow} ${Math.round(r.drainPerS).toLocaleString('en')} (${r.drained} / ${BACKLOG}) | ${Math.round(r.baselinePerS).toLocaleString('en')} | ${((100 * r.drainPerS) / r.baselinePerS).toFixed(1)} % |`,
  )
}
if (results.some((r) => r.leftOver > 0)) console.log(`\nleft pending by the steady phases (failed before the drain): ${results.map((r) => `${r.backend} ${r.leftOver}`).join(', ')}`)
if (results.some((r) => r.steady.delivered < r.steady.published || (r.slow !== undefined && r.slow.delivered < r.slow.published) || r.drained < BACKLOG)) process.exitCode = 1
