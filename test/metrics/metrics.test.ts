import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { Counter, register as globalRegistry, Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { StatementTimeout, StorageUnavailable } from '../../src/ports/errors.js'
import type { Storage } from '../../src/ports/storage.js'
import { build, PREFIX, type TestApp } from '../helpers/build.js'
import { eventually } from '../helpers/eventually.js'
import { freePort } from '../helpers/free-port.js'
import { exclusiveMemberIds, listIds } from '../helpers/seed-facts.js'
import { buildWriteApp, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'
import { parseExposition, sampleValue, type Sample } from './exposition.js'

const REQUESTS = 'workforce_http_requests_total'
const DURATION = 'workforce_http_request_duration_seconds'
const SECRET_KEY = randomBytes(32).toString('base64')

async function scrape(t: { app: TestApp['app'] }): Promise<{ text: string; samples: Sample[] }> {
  const registry = t.app.workforceApi.metricsRegistry
  if (registry === null) throw new Error('metrics are off')
  const text = await registry.metrics()
  return { text, samples: parseExposition(text) }
}

/** Every label value is a route template, a method, a status or an outcome: none carries an id, a key or a company. */
function expectBoundedLabels(samples: readonly Sample[]): void {
  const allowed: Record<string, RegExp> = {
    route: /^(\/api\/public(\/v1)?(\/(:?[a-z_.-]+))*|<unmatched>)$/,
    method: /^(GET|POST|PATCH|PUT|DELETE|HEAD|OPTIONS)$/,
    status: /^[1-5]\d\d$/,
    le: /^([\d.e+-]+|\+Inf)$/,
    outcome: /^(delivered|retry|failed)$/,
    kind: /^(statement_timeout|unavailable)$/,
  }
  for (const sample of samples) {
    for (const [name, value] of Object.entries(sample.labels)) {
      expect(allowed[name], `label ${name} of ${sample.name}`).toBeDefined()
      expect(value, `label ${name} of ${sample.name}`).toMatch(allowed[name] as RegExp)
    }
  }
}

describe('metrics of the request path', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('counts 401s under the route template, with their duration, and no key, company or id in any label', async () => {
    t = await build({ options: { metrics: true } })
    const badKey = 'owk_' + 'a'.repeat(12) + '_' + 'b'.repeat(32)
    for (let i = 0; i < 3; i += 1) expect((await t.get('/v1/users', badKey)).statusCode).toBe(401)
    const key = await t.keyFor(1)
    const user = (await t.get('/v1/users', key)).json().data[0]
    expect((await t.get(`/v1/users/${user.id}`, key)).statusCode).toBe(200)
    const { text, samples } = await scrape(t)

    const users = { route: `${PREFIX}/v1/users`, method: 'GET' }
    expect(sampleValue(samples, REQUESTS, { ...users, status: '401' })).toBe(3)
    expect(sampleValue(samples, `${DURATION}_count`, { ...users, status: '401' })).toBe(3)
    expect(sampleValue(samples, `${DURATION}_bucket`, { ...users, status: '401', le: '+Inf' })).toBe(3)
    expect(sampleValue(samples, `${DURATION}_sum`, { ...users, status: '401' })).toBeGreaterThan(0)
    expect(sampleValue(samples, REQUESTS, { ...users, status: '200' })).toBe(1)
    expect(sampleValue(samples, REQUESTS, { route: `${PREFIX}/v1/users/:id`, method: 'GET', status: '200' })).toBe(1)

    expectBoundedLabels(samples)
    expect(text).not.toContain(badKey)
    expect(text).not.toContain(key)
    expect(text).not.toContain(key.split('_')[1])
    expect(text).not.toContain(`/v1/users/${user.id}`)
  })

  it('counts 403 and 429 refusals of the corridor under their route template, and 404s as <unmatched>', async () => {
    t = await build({ options: { metrics: true, rateLimit: { max: 2 } } })
    const narrow = await t.keyFor(1, ['shifts:read'])
    expect((await t.get('/v1/users', narrow)).statusCode).toBe(403)
    expect((await t.get('/v1/users', narrow)).statusCode).toBe(403)
    // The third request of the window is over the budget of 2.
    expect((await t.get('/v1/users', narrow)).statusCode).toBe(429)
    const key = await t.keyFor(1)
    expect((await t.get('/v1/no-such-thing/12345', key)).statusCode).toBe(404)
    const { text, samples } = await scrape(t)

    const users = { route: `${PREFIX}/v1/users`, method: 'GET' }
    expect(sampleValue(samples, REQUESTS, { ...users, status: '403' })).toBe(2)
    expect(sampleValue(samples, REQUESTS, { ...users, status: '429' })).toBe(1)
    expect(sampleValue(samples, REQUESTS, { route: '<unmatched>', method: 'GET', status: '404' })).toBe(1)
    expect(text).not.toContain('no-such-thing')
    expect(text).not.toContain('12345')
    expectBoundedLabels(samples)
  })

  it('counts statement timeouts and unavailable storage by route template', async () => {
    let failure: () => Error = () => new StatementTimeout('stopped', { cause: Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }) })
    t = await build({ options: (opened) => ({ metrics: true, storage: failingUsers(opened.storage, () => failure()) }) })
    const key = await t.keyFor(1)
    expect((await t.get('/v1/users', key)).statusCode).toBe(504)
    expect((await t.get('/v1/users', key)).statusCode).toBe(504)
    failure = () => new StorageUnavailable('down')
    expect((await t.get('/v1/users', key)).statusCode).toBe(503)
    const { samples } = await scrape(t)
    expect(sampleValue(samples, 'workforce_storage_errors_total', { route: `${PREFIX}/v1/users`, kind: 'statement_timeout' })).toBe(2)
    expect(sampleValue(samples, 'workforce_storage_errors_total', { route: `${PREFIX}/v1/users`, kind: 'unavailable' })).toBe(1)
    expect(sampleValue(samples, REQUESTS, { route: `${PREFIX}/v1/users`, method: 'GET', status: '504' })).toBe(2)
  })

  it('counts rate-limit store errors while Redis is away, serving the requests uncounted', async () => {
    const nobody = await freePort()
    t = await build({ options: { metrics: true, rateLimit: { max: 1, redis: `redis://127.0.0.1:${nobody}` } } })
    const key = await t.keyFor(1)
    // A budget of 1, yet every request is served: counting fails open.
    for (let i = 0; i < 3; i += 1) expect((await t.get('/v1/users', key)).statusCode).toBe(200)
    const { samples } = await scrape(t)
    // At least the per-key count of each request failed (the failed-auth gate reads too).
    expect(sampleValue(samples, 'workforce_rate_limit_store_errors_total')).toBeGreaterThanOrEqual(3)
  })

  it('with a local rate-limit store, no store error is counted', async () => {
    t = await build({ options: { metrics: true } })
    const key = await t.keyFor(1)
    expect((await t.get('/v1/users', key)).statusCode).toBe(200)
    expect(sampleValue((await scrape(t)).samples, 'workforce_rate_limit_store_errors_total')).toBe(0)
  })
})

describe('the metrics option', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('is off by default: no registry, and nothing on prom-client\'s global registry', async () => {
    t = await build()
    expect(t.app.workforceApi.metricsRegistry).toBeNull()
    expect(await globalRegistry.getSingleMetric(REQUESTS)).toBeUndefined()
  })

  it('puts our metrics on the host\'s registry when given, which merges with its own; never on the global one', async () => {
    const ours = new Registry()
    t = await build({ options: { metrics: { registry: ours } } })
    expect(t.app.workforceApi.metricsRegistry).toBe(ours)
    expect((await t.get('/v1/users', 'nope')).statusCode).toBe(401)
    expect(globalRegistry.getSingleMetric(REQUESTS)).toBeUndefined()

    const hosts = new Registry()
    new Counter({ name: 'host_jobs_total', help: 'the host\'s own', registers: [hosts] }).inc(2)
    const merged = Registry.merge([hosts, t.app.workforceApi.metricsRegistry as Registry])
    const samples = parseExposition(await merged.metrics())
    expect(sampleValue(samples, 'host_jobs_total')).toBe(2)
    expect(sampleValue(samples, REQUESTS, { route: `${PREFIX}/v1/users`, status: '401' })).toBe(1)
  })

  it('with processMetrics, adds Node\'s process metrics under our prefix', async () => {
    t = await build({ options: { metrics: { processMetrics: true } } })
    const { samples } = await scrape(t)
    expect(samples.some((sample) => sample.name === 'workforce_process_cpu_user_seconds_total')).toBe(true)
    expect(samples.some((sample) => sample.name === 'process_cpu_user_seconds_total')).toBe(false)
  })

  it('reads a pg pool\'s connections and the SQLite read workers\' queue on each scrape', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 3 })
    const dir = await mkdtemp(join(tmpdir(), 'wfa-metrics-'))
    const sqlite = await openSqliteAdapter({ filename: join(dir, 'app.db'), readWorkers: 1 })
    try {
      await sqlite.warmUp()
      t = await build({ options: { metrics: { pool, readPool: sqlite.readPool } } })
      const { samples } = await scrape(t)
      expect(sampleValue(samples, 'workforce_db_pool_connections')).toBe(0)
      expect(sampleValue(samples, 'workforce_db_pool_idle_connections')).toBe(0)
      expect(sampleValue(samples, 'workforce_db_pool_waiting_requests')).toBe(0)
      expect(sampleValue(samples, 'workforce_sqlite_read_workers')).toBe(1)
      expect(sampleValue(samples, 'workforce_sqlite_read_queue_depth')).toBe(0)
      expect(sampleValue(samples, 'workforce_sqlite_read_running')).toBe(0)
    } finally {
      await pool.end()
      await sqlite.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it.each([
    [{ metrics: 'yes' }, 'metrics', /must be a boolean or an object/],
    [{ metrics: { registy: new Registry() } }, 'metrics.registy', /did you mean "metrics.registry"/],
    [{ metrics: { registry: {} } }, 'metrics.registry', /prom-client Registry/],
    [{ metrics: { processMetrics: 1 } }, 'metrics.processMetrics', /boolean/],
    [{ metrics: { pool: { totalCount: 1 } } }, 'metrics.pool', /pg Pool/],
    [{ metrics: { readPool: 3 } }, 'metrics.readPool', /readPool/],
  ])('refuses %j, naming %s', async (options, option, problem) => {
    const failed = await build({ options: options as never }).then(
      async (built) => {
        await built.close()
        return undefined
      },
      (error: unknown) => error as { name: string; option: string; message: string },
    )
    expect(failed?.name).toBe('WorkforceOptionError')
    expect(failed?.option).toBe(option)
    expect(failed?.message).toMatch(problem)
  })

  it('refuses a registry that already holds our metrics (two apps on one registry would collide); once the first closes, it takes the next', async () => {
    const shared = new Registry()
    new Counter({ name: 'host_jobs_total', help: 'the host\'s own', registers: [shared] })
    t = await build({ options: { metrics: { registry: shared } } })
    const second = await build({ options: { metrics: { registry: shared } } }).catch((error: unknown) => error as { option: string })
    expect((second as { option?: string }).option).toBe('metrics.registry')
    await t.close()
    // Ours are gone with the app; the host's own stay.
    expect(shared.getMetricsAsArray().map(({ name }) => name)).toEqual(['host_jobs_total'])
    t = await build({ options: { metrics: { registry: shared } } })
    expect((await t.get('/v1/users', 'nope')).statusCode).toBe(401)
    expect(sampleValue(parseExposition(await shared.metrics()), REQUESTS, { status: '401' })).toBe(1)
  })
})

describe.each(WRITE_ADAPTERS)('webhook metrics ($name)', (adapter) => {
  let t: WriteTestApp | undefined
  let receiver: Receiver | undefined
  afterEach(async () => {
    await t?.close()
    await receiver?.close()
    t = undefined
    receiver = undefined
  })

  const todo = () => ({ title: 'Inspect crane', list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] })

  it('counts delivered, retried and failed attempts and times commit to delivery', async () => {
    receiver = await startReceiver()
    t = await buildWriteApp({
      adapter,
      options: { metrics: true, webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, pollIntervalMs: 20, retrySchedule: [10] } },
    })
    await t.app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['*'] })
    const key = await t.keyFor(1)
    expect((await t.post('/v1/todos', todo(), key)).statusCode).toBe(201)
    await receiver.waitFor(1)
    const delivered = await eventually(async () => {
      const { samples } = await scrape(t as WriteTestApp)
      return sampleValue(samples, 'workforce_webhook_deliveries_total', { outcome: 'delivered' }) === 1 ? samples : undefined
    })
    expect(sampleValue(delivered, 'workforce_webhook_commit_to_delivery_seconds_count')).toBe(1)
    expect(sampleValue(delivered, 'workforce_webhook_deliveries_total', { outcome: 'failed' })).toBe(0)

    // Two failed attempts: the first is retried (a schedule of one retry), the second fails the delivery.
    receiver.answer = () => ({ status: 500 })
    expect((await t.post('/v1/todos', todo(), key)).statusCode).toBe(201)
    // The fake clock stands still: move it past the retry's delay once the first attempt is recorded.
    await eventually(async () => sampleValue((await scrape(t as WriteTestApp)).samples, 'workforce_webhook_deliveries_total', { outcome: 'retry' }) === 1)
    // Waiting for its retry: in the backlog, not due.
    const waiting = (await scrape(t)).samples
    expect(sampleValue(waiting, 'workforce_webhook_backlog_deliveries')).toBe(1)
    expect(sampleValue(waiting, 'workforce_webhook_due_deliveries')).toBe(0)
    expect(sampleValue(waiting, 'workforce_webhook_oldest_due_age_seconds')).toBe(0)
    t.clock.advance(1_000)
    const failed = await eventually(async () => {
      const { samples } = await scrape(t as WriteTestApp)
      return sampleValue(samples, 'workforce_webhook_deliveries_total', { outcome: 'failed' }) === 1 ? samples : undefined
    })
    expect(sampleValue(failed, 'workforce_webhook_deliveries_total', { outcome: 'delivered' })).toBe(1)
    expect(sampleValue(failed, 'workforce_webhook_commit_to_delivery_seconds_count')).toBe(1)
    expectBoundedLabels(failed)
  })

  it('reports the backlog the store holds: pending and due deliveries and how long the oldest has waited', async () => {
    t = await buildWriteApp({
      adapter,
      options: { metrics: true, webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, dispatcher: false } },
    })
    await t.app.workforceApi.webhooks.create({ companyId: 1, url: 'http://127.0.0.1:9/hooks', events: ['*'] })
    const key = await t.keyFor(1)
    let samples = (await scrape(t)).samples
    expect(sampleValue(samples, 'workforce_webhook_backlog_deliveries')).toBe(0)
    expect(sampleValue(samples, 'workforce_webhook_oldest_due_age_seconds')).toBe(0)
    for (let i = 0; i < 3; i += 1) expect((await t.post('/v1/todos', todo(), key)).statusCode).toBe(201)
    t.clock.advance(90_000)
    samples = (await scrape(t)).samples
    expect(sampleValue(samples, 'workforce_webhook_backlog_deliveries')).toBe(3)
    expect(sampleValue(samples, 'workforce_webhook_due_deliveries')).toBe(3)
    expect(sampleValue(samples, 'workforce_webhook_oldest_due_age_seconds')).toBe(90)
  })
})

/** `storage` whose users reader fails with `error()`. */
function failingUsers(storage: Storage, error: () => Error): Storage {
  const fail = async (): Promise<never> => {
    throw error()
  }
  const users = { list: fail, get: fail }
  return new Proxy(storage, {
    get(target, name) {
      if (name === 'users') return users
      const value = Reflect.get(target, name, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
