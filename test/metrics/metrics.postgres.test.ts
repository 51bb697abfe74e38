import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterEach, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { describePostgres, readChangeEvents, useTestDatabase } from '../helpers/postgres.js'
import { exclusiveMemberIds, listIds } from '../helpers/seed-facts.js'
import { buildWriteApp, PREFIX, type WriteTestApp } from '../helpers/write-app.js'
import { parseExposition, sampleValue } from './exposition.js'

const SECRET_KEY = randomBytes(32).toString('base64')

describePostgres('metrics on Postgres', () => {
  const database = useTestDatabase()
  let schemas = 0
  let t: WriteTestApp | undefined
  let locker: pg.Client | undefined
  afterEach(async () => {
    await locker?.end()
    locker = undefined
    await t?.close()
    t = undefined
  })

  /** A write app over a fresh schema, with the adapter's pool in its metrics. */
  async function start(): Promise<{ t: WriteTestApp; adapter: PostgresAdapter }> {
    const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema: `metrics_${++schemas}` })
    t = await buildWriteApp({
      adapter: { name: 'postgres', open: async () => ({ adapter, events: () => readChangeEvents(adapter), idempotencyRecords: async () => [] }) },
      options: { metrics: { pool: adapter.pool }, webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, dispatcher: false } },
    })
    return { t, adapter }
  }

  const scrape = async (app: WriteTestApp) => parseExposition(await (app.app.workforceApi.metricsRegistry as NonNullable<typeof app.app.workforceApi.metricsRegistry>).metrics())

  it('reads the pool\'s connections on each scrape, and the backlog from the deliveries table', async () => {
    const { t, adapter } = await start()
    await t.app.workforceApi.webhooks.create({ companyId: 1, url: 'http://127.0.0.1:9/hooks', events: ['*'] })
    const key = await t.keyFor(1)
    for (let i = 0; i < 2; i += 1) {
      expect((await t.post('/v1/todos', { title: `Metrics ${i}`, list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] }, key)).statusCode).toBe(201)
    }
    t.clock.advance(30_000)
    const samples = await scrape(t)
    expect(sampleValue(samples, 'workforce_db_pool_connections')).toBe(adapter.pool.totalCount)
    expect(adapter.pool.totalCount).toBeGreaterThan(0)
    expect(sampleValue(samples, 'workforce_db_pool_idle_connections')).toBe(adapter.pool.idleCount)
    expect(sampleValue(samples, 'workforce_db_pool_waiting_requests')).toBe(0)
    expect(sampleValue(samples, 'workforce_webhook_backlog_deliveries')).toBe(2)
    expect(sampleValue(samples, 'workforce_webhook_due_deliveries')).toBe(2)
    expect(sampleValue(samples, 'workforce_webhook_oldest_due_age_seconds')).toBe(30)
  })

  it('counts a statement Postgres stopped at statement_timeout under its route template', async () => {
    const { t } = await start()
    const key = await t.keyFor(1)
    locker = new pg.Client({ connectionString: database.current.url })
    await locker.connect()
    await locker.query('begin')
    await locker.query(`lock table metrics_${schemas}.wfa_todos in access exclusive mode`)
    expect((await t.get('/v1/todos', key)).statusCode).toBe(504)
    await locker.query('rollback')
    const samples = await scrape(t)
    expect(sampleValue(samples, 'workforce_storage_errors_total', { route: `${PREFIX}/v1/todos`, kind: 'statement_timeout' })).toBe(1)
    expect(sampleValue(samples, 'workforce_http_requests_total', { route: `${PREFIX}/v1/todos`, method: 'GET', status: '504' })).toBe(1)
  })
})
