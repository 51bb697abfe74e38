import Fastify, { type FastifyInstance } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { workforceApi } from '../../src/index.js'
import { portsOf } from '../../src/ports/index.js'
import { generateDataset } from '../../src/seed/generate.js'
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js'
import { describePostgres } from '../helpers/postgres.js'
import { createUntilSucceeded, outageAnswers, recoveredAt, startLoad, startWriters, type Answer, type Load, type RetriedCreate, type WriterResult } from './outage-load.js'
import { withResponseChecks } from '../helpers/response-checks.js'

/** Issue 8: every request answers within this long of the database going away. */
const ANSWER_WITHIN_MS = 2_000
/** …and the API serves 200s again within this long of the database coming back, by itself. */
const RECOVER_WITHIN_MS = 3_000
const OUTAGE_MS = 3_000
/** A request that starts this long after the outage began cannot have reached the database in time. */
const SETTLE_MS = 50
const LOAD = { concurrency: 30, pauseMs: 20, maxRequests: 15_000 } as const
/** Clients creating to-dos back to back across each outage. */
const WRITERS = 4

/** Times in ms of the load's clock. */
interface Outage {
  /** SIGSTOP sent, or fast shutdown begun. */
  start: number
  /** From here on no request can reach the database: every answer must be a 503. */
  settled: number
  /** SIGCONT sent, or the server started again. */
  back: number
  /** The server accepts queries again (the same as `back` for a freeze). */
  up: number
}

/**
 * Issue 8, gaps 2 and 3: a frozen (SIGSTOP) or stopped Postgres under concurrent load, over
 * real HTTP to an app listening on loopback. The cluster is the test's own (never the shared
 * server), started, frozen, stopped and removed by this file, by PID.
 */
describePostgres('an unreachable Postgres: 503 within 2 s, recovery without a restart', () => {
  let own: OwnPostgres | undefined
  let adapter: PostgresAdapter | undefined
  let app: FastifyInstance | undefined
  let api = ''
  let apiKey = ''

  beforeAll(async () => {
    own = await startOwnPostgres()
    adapter = await openPostgresAdapter({ connectionString: own.url })
    await adapter.loadDataset(generateDataset())
    app = withResponseChecks(Fastify())
    // The load is one key at hundreds of requests a second: the rate limit is not under test.
    await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter), rateLimit: false })
    api = `${await app.listen({ port: 0, host: '127.0.0.1' })}/api/public/v1`
    apiKey = (await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })).key
  }, 60_000)

  afterAll(async () => {
    // A frozen server would hold `close()` forever: wake it first, whatever failed.
    own?.thaw()
    await withinMs(5_000, app?.close())
    await withinMs(5_000, adapter?.close())
    await own?.destroy()
  }, 30_000)

  const cluster = () => {
    if (own === undefined) throw new Error('the cluster did not start')
    return own
  }

  const loadOn = (path: string, durationMs: number): Load =>
    startLoad({ url: `${api}${path}`, headers: { authorization: `Bearer ${apiKey}` }, durationMs, ...LOAD })

  const createDuring = (load: Load, title: string, deadlineMs: number): Promise<RetriedCreate> =>
    createUntilSucceeded({
      url: `${api}/todos`,
      apiKey,
      idempotencyKey: `outage-${title}`,
      body: { title, list_id: 1, assignee_group_id: 1 },
      now: load.now,
      deadlineMs,
      maxAttempts: 200,
      pauseMs: 300,
    })

  /** Writers that run as long as the load, and finish their last write after it. */
  const writersOn = (load: Load, label: string) =>
    startWriters({ count: WRITERS, url: `${api}/todos`, apiKey, prefix: `${label}-writer`, now: load.now, untilMs: 1_000 + OUTAGE_MS + RECOVER_WITHIN_MS + 6_000, maxPerWriter: 200 })

  const todosTitled = async (title: string) => {
    const rows = await adapter!.db.selectFrom('wfa_todos').select('id').where('title', '=', title).execute()
    return rows.map((row) => Number(row.id))
  }

  /** The outage assertions shared by both faults; prints the measured worst case. */
  const expectOutageHandled = (label: string, answers: Answer[], outage: Outage) => {
    const met = outageAnswers(answers, outage.start, outage.up)
    const worst = Math.max(...met.map((answer) => answer.wait))
    const statuses = countBy(met.map((answer) => answer.status))
    const recovered = recoveredAt(answers, outage.back)
    console.log(
      `[faults] ${label}: ${answers.length} requests, ${met.length} met the outage (${JSON.stringify(statuses)}); ` +
        `worst answer ${worst.toFixed(0)} ms after the outage began; ` +
        `server answering again ${(outage.up - outage.back).toFixed(0)} ms after SIGCONT/start; ` +
        `steady 200s ${recovered === null ? 'never' : `${(recovered - outage.back).toFixed(0)} ms`} after SIGCONT/start`,
    )
    expect(met.length, 'requests that met the outage').toBeGreaterThan(LOAD.concurrency)
    expect(met.filter((answer) => answer.status === 0), 'requests that hung or lost their socket').toEqual([])
    expect(worst, `worst answer time during the ${label} (ms)`).toBeLessThanOrEqual(ANSWER_WITHIN_MS)
    const inside = met.filter((answer) => answer.start >= outage.settled && answer.end <= outage.back)
    expect(inside.length, 'requests started and answered inside the outage').toBeGreaterThan(0)
    const notUnavailable = inside.filter((answer) => answer.status !== 503 || answer.code !== 'service_unavailable' || answer.retryAfter !== '1')
    expect(notUnavailable, 'answers inside the outage other than 503 service_unavailable with Retry-After: 1').toEqual([])
    expect(met.filter((answer) => answer.status !== 200 && answer.status !== 503), 'answers neither 200 nor 503').toEqual([])
    expect(recovered, `200s again after the ${label}`).not.toBeNull()
    expect(recovered! - outage.back, 'ms from SIGCONT/start to steady 200s').toBeLessThanOrEqual(RECOVER_WITHIN_MS)
  }

  /** The retried POST: answered within 2 s each time, created once, replayed after. */
  const expectCreatedOnce = async (label: string, title: string, retried: RetriedCreate) => {
    const attempts = retried.attempts.map((answer) => `${answer.status} in ${(answer.end - answer.start).toFixed(0)} ms`)
    console.log(`[faults] ${label}: idempotent POST attempts: ${attempts.join(', ')}`)
    expect(retried.success, `a 201 among ${attempts.join(', ')}`).not.toBeNull()
    expect(retried.attempts.filter((answer) => answer.end - answer.start > ANSWER_WITHIN_MS), 'POST attempts slower than 2 s').toEqual([])
    expect(retried.attempts.filter((answer) => ![201, 409, 503].includes(answer.status)), 'POST attempts neither 201, 409 nor 503').toEqual([])
    const created = JSON.parse(retried.body!).data as { id: number; title: string }
    expect(await todosTitled(title), `to-dos titled "${title}"`).toEqual([created.id])
    const replay = await fetch(`${api}/todos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': `outage-${title}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title, list_id: 1, assignee_group_id: 1 }),
    })
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replay')).toBe('true')
    expect(JSON.parse(await replay.text()).data.id).toBe(created.id)
    expect(await todosTitled(title), `to-dos titled "${title}" after a replay`).toEqual([created.id])
  }

  /**
   * Writers that ran across the outage: each title exists exactly once if its client saw a
   * 201, at most once if it gave up at the deadline (its key's in-flight lease outlived the
   * test) — never twice; and every attempt answered within 2 s of the outage.
   */
  const expectNoDuplicateWrites = async (label: string, writers: WriterResult[], outage: Outage) => {
    const counts = new Map<string, number>()
    const rows = await adapter!.db
      .selectFrom('wfa_todos')
      .select(['title'])
      .select((eb) => eb.fn.countAll().as('n'))
      .where('title', 'like', `${label}-writer-%`)
      .groupBy('title')
      .execute()
    for (const row of rows) counts.set(row.title as string, Number(row.n))
    const attempts = writers.flatMap((writer) => writer.retried.attempts)
    const met = outageAnswers(attempts, outage.start, outage.up)
    const retriedThrough = writers.filter((writer) => writer.retried.success !== null && writer.retried.attempts.length > 1)
    const unfinished = writers.filter((writer) => writer.retried.success === null)
    console.log(
      `[faults] ${label}: writers created ${writers.length - unfinished.length} to-dos (${retriedThrough.length} only after retries), ` +
        `${unfinished.length} unfinished at the deadline (${JSON.stringify(unfinished.map((w) => countBy(w.retried.attempts.map((a) => a.status))))}); ` +
        `worst write answer ${Math.max(0, ...met.map((answer) => answer.wait)).toFixed(0)} ms after the outage began`,
    )
    expect(met.filter((answer) => answer.wait > ANSWER_WITHIN_MS || answer.status === 0), 'write attempts slower than 2 s or hung').toEqual([])
    expect(retriedThrough.length, 'writes that succeeded only after a retry across the outage').toBeGreaterThan(0)
    const wrong = writers
      .map((writer) => ({ title: writer.title, succeeded: writer.retried.success !== null, rows: counts.get(writer.title) ?? 0 }))
      .filter((found) => (found.succeeded ? found.rows !== 1 : found.rows > 1))
    expect(wrong, 'titles written other than once (or more than once, for an unfinished client)').toEqual([])
  }

  it('frozen (SIGSTOP on every process of the cluster): 503 with Retry-After within 2 s; after SIGCONT, 200s again by itself', async () => {
    expect((await fetch(`${api}/todos?per_page=5`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200)
    const load = loadOn('/todos?per_page=5', 1_000 + OUTAGE_MS + RECOVER_WITHIN_MS + 2_000)
    const writing = writersOn(load, 'freeze')
    await sleep(1_000)
    const start = load.now()
    cluster().freeze()
    const title = 'Written while the database was frozen'
    const creating = sleep(100).then(() => createDuring(load, title, start + OUTAGE_MS + RECOVER_WITHIN_MS + 5_000))
    await sleep(OUTAGE_MS)
    const back = load.now()
    cluster().thaw()
    const answers = await load.done
    const outage = { start, settled: start + SETTLE_MS, back, up: back }
    expectOutageHandled('freeze', answers, outage)
    await expectCreatedOnce('freeze', title, await creating)
    await expectNoDuplicateWrites('freeze', await writing, outage)
  }, 30_000)

  it('stopped (fast shutdown) and started again: 503 with Retry-After within 2 s; 200s again without restarting the app', async () => {
    expect((await fetch(`${api}/todos?per_page=5`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200)
    const load = loadOn('/todos?per_page=5', 1_000 + OUTAGE_MS + RECOVER_WITHIN_MS + 2_000)
    const writing = writersOn(load, 'stop')
    await sleep(1_000)
    const start = load.now()
    await cluster().stop()
    const settled = load.now()
    const title = 'Written while the database was stopped'
    const creating = createDuring(load, title, start + OUTAGE_MS + RECOVER_WITHIN_MS + 8_000)
    await sleep(Math.max(0, start + OUTAGE_MS - load.now()))
    const back = load.now()
    await cluster().start()
    const up = load.now()
    const answers = await load.done
    const outage = { start, settled, back, up }
    expectOutageHandled('stop', answers, outage)
    await expectCreatedOnce('stop', title, await creating)
    await expectNoDuplicateWrites('stop', await writing, outage)
  }, 40_000)
})

function countBy(values: number[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1
  return counts
}

async function withinMs(ms: number, work: Promise<unknown> | undefined): Promise<void> {
  if (work === undefined) return
  await Promise.race([work.catch(() => {}), sleep(ms)])
}
