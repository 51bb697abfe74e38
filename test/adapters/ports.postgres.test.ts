import Fastify from 'fastify'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, statementName, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { FIXED_TEXT } from '../../adapters/sql/prepared.js'
import { attemptRecord, changeEvent, endpointRecord, outcome } from '../../src/conformance/webhook-facts.js'
import { afterNow } from '../../src/conformance/write-facts.js'
import { KeyManager, workforceApi } from '../../src/index.js'
import type { Dataset } from '../../src/ports/dataset.js'
import { generateDataset } from '../../src/seed/generate.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { withResponseChecks } from '../helpers/response-checks.js'

/** A clock the test moves by hand. */
function manualClock(start: number) {
  let now = start
  return { now: () => now, set: (ms: number) => void (now = ms) }
}

const maxId = (rows: Array<{ id: number }>) => Math.max(...rows.map((row) => row.id))

describePostgres('Postgres ports', () => {
  const database = useTestDatabase()
  const data: Dataset = generateDataset()
  let adapter: PostgresAdapter
  let scoped: PostgresAdapter
  let pool: pg.Pool

  beforeAll(async () => {
    // One connection, so pg_prepared_statements shows every statement the adapter prepared.
    pool = new pg.Pool({ connectionString: database.current.url, max: 1 })
    adapter = await openPostgresAdapter({ pool })
    await adapter.loadDataset(data)
    scoped = await openPostgresAdapter({ connectionString: database.current.url }, { schema: 'scoped' })
    await scoped.loadDataset(data)
  })

  afterAll(async () => {
    await adapter?.close()
    await scoped?.close()
    await pool?.end()
  })

  it('continues every identity after the largest loaded id, so new rows keep ids monotonic', async () => {
    for (const subject of [adapter, scoped]) {
      const shift = await subject.db
        .insertInto('wfa_shifts')
        .values({
          company_id: 1,
          employee_id: 1,
          status: 'scheduled',
          starts_at: new Date(),
          ends_at: new Date(),
          break_minutes: 0,
          created_at: new Date(),
          updated_at: new Date(),
        })
        .returning('id')
        .executeTakeFirstOrThrow()
      expect(shift.id).toBe(maxId(data.shifts) + 1)

      const list = await subject.db.insertInto('wfa_todo_lists').values({ company_id: 2, name: 'Later' }).returning('id').executeTakeFirstOrThrow()
      expect(list.id).toBe(maxId(data.todoLists) + 1)
      const company = await subject.db
        .insertInto('wfa_companies')
        .values({ name: 'New Co', timezone: 'UTC', country: 'DE', created_at: new Date(), updated_at: new Date() })
        .returning('id')
        .executeTakeFirstOrThrow()
      expect(company.id).toBe(maxId(data.companies) + 1)
    }
  })

  it('runs the hot path as named prepared statements whose name is the hash of their SQL', async () => {
    await adapter.storage.todos.list(1, { status: 'open', important: true }, { limit: 5, offset: 0 })
    await adapter.storage.todos.list(1, { status: 'done', important: false }, { limit: 5, offset: 5 })
    await adapter.storage.todos.get(1, 1)
    const { rows } = await pool.query(`select name, statement from pg_prepared_statements where statement like '%wfa_todos%'`)
    expect(rows.length).toBe(3) // page, count and get: the second list reused the first one's statements
    for (const row of rows) expect(row.name).toBe(statementName(row.statement))
  })

  it('runs the webhook claim and the record of successes as named prepared statements too', async () => {
    const endpoint = endpointRecord('named: endpoint', 1, ['*'])
    await adapter.webhooks.createEndpoint(endpoint)
    await adapter.writes.transaction((tx) => tx.recordEvent(changeEvent('named: event', 1, 'todos.created', 1)))
    const [claim] = await adapter.webhooks.claimDue(afterNow(1_000), afterNow(60_000), 4)
    expect(claim).toBeDefined()
    await adapter.webhooks.finishAttempts!([{ claim: claim!, outcome: outcome.delivered(attemptRecord(1, 1_100, 204)), now: afterNow(1_100) }])
    const { rows } = await pool.query(`select name, statement from pg_prepared_statements where statement like $1`, [`${FIXED_TEXT}%`])
    expect(rows.map((row) => (row.statement.includes('with claimed as') ? 'claim' : row.statement.includes('unnest') ? 'record' : 'other')).sort()).toEqual(['claim', 'record'])
    for (const row of rows) expect(row.name).toBe(statementName(row.statement))
  })

  it('plans the webhook claim for its values until the deliveries table has statistics, then once per connection', async () => {
    // A second schema on a pool of one connection too: the check names the table with its schema.
    const scopedPool = new pg.Pool({ connectionString: database.current.url, max: 1 })
    const scopedOnOne = await openPostgresAdapter({ pool: scopedPool }, { schema: 'scoped' })
    try {
      for (const [subject, subjectPool, table] of [
        [adapter, pool, 'public.wfa_webhook_deliveries'],
        [scopedOnOne, scopedPool, 'scoped.wfa_webhook_deliveries'],
      ] as const) {
        await subject.webhooks.createEndpoint(endpointRecord(`plans: ${table}`, 1, ['*']))
        const plans = async () => {
          const { rows } = await subjectPool.query(`select generic_plans, custom_plans from pg_prepared_statements where statement like $1`, [`${FIXED_TEXT}%with claimed as%`])
          expect(rows).toHaveLength(1)
          return { generic: Number(rows[0].generic_plans), custom: Number(rows[0].custom_plans) }
        }
        let events = 0
        const claimTwice = async () => {
          for (const _ of [1, 2]) {
            events += 1
            await subject.writes.transaction((tx) => tx.recordEvent(changeEvent(`plans: ${table} ${events}`, 1, 'todos.created', 1)))
            expect((await subject.webhooks.claimDue(afterNow(1_000), afterNow(60_000), 4)).length).toBeGreaterThan(0)
          }
        }
        const analyzed = await subjectPool.query(`select coalesce(last_analyze, last_autoanalyze) as at from pg_stat_all_tables where relid = $1::regclass`, [table])
        expect(analyzed.rows[0].at).toBeNull() // the premise: nothing analyzed this table yet
        await claimTwice()
        const before = await plans()
        await claimTwice()
        const unanalyzed = await plans()
        expect(unanalyzed).toEqual({ generic: before.generic, custom: before.custom + 2 })

        await subjectPool.query(`analyze ${table}`)
        await claimTwice()
        const analyzedPlans = await plans()
        expect(analyzedPlans).toEqual({ generic: unanalyzed.generic + 2, custom: unanalyzed.custom })
        // The setting ended with the claim's transaction.
        expect((await subjectPool.query(`show plan_cache_mode`)).rows[0].plan_cache_mode).toBe('auto')
      }
    } finally {
      await scopedOnOne.close()
      await scopedPool.end()
    }
  })

  it('refuses an int8 beyond 2^53 rather than rounding it', async () => {
    const setAmount = (cents: string) => scoped.db.updateTable('wfa_expenses').set({ amount_cents: cents }).where('id', '=', 1).execute()
    await setAmount('9007199254740993')
    await expect(scoped.storage.expenses.get(1, 1)).rejects.toThrow(RangeError)
    await setAmount('1234')
    expect(await scoped.storage.expenses.get(1, 1)).toMatchObject({ id: 1, amount_cents: 1234 })
  })

  it('stores keys and applies only the transitions the key manager allows', async () => {
    const clock = manualClock(Date.UTC(2026, 5, 1))
    const keys = new KeyManager(adapter.keyStore, clock)
    const expiresAt = new Date(Date.UTC(2026, 5, 2, 12, 30, 15, 123))
    const { info } = await keys.create({ companyId: 2, scopes: ['shifts:read', 'users:read'], expiresAt, name: 'Payroll sync' })

    const stored = await adapter.keyStore.find(info.key_id)
    expect(stored).toMatchObject({ company_id: 2, scopes: ['users:read', 'shifts:read'], state: 'active', name: 'Payroll sync', last_used_at: null })
    expect(stored?.expires_at?.toISOString()).toBe('2026-06-02T12:30:15.123Z')
    expect(stored?.secret_hash).toMatch(/^[0-9a-f]{64}$/)

    expect((await keys.disable(info.key_id)).state).toBe('disabled')
    expect((await keys.enable(info.key_id)).state).toBe('active')
    clock.set(expiresAt.getTime())
    expect((await keys.list({ companyId: 2 })).find((k) => k.key_id === info.key_id)?.state).toBe('expired')
    expect((await keys.revoke(info.key_id)).state).toBe('revoked')
    await expect(keys.enable(info.key_id)).rejects.toMatchObject({ reason: 'invalid_transition' })
    expect(await adapter.keyStore.setState(info.key_id, 'active', ['disabled'])).toBeNull()
    expect(await adapter.keyStore.find('0000000000000000')).toBeNull()

    await adapter.keyStore.touchLastUsed?.(info.key_id, new Date('2026-06-03T00:00:00.001Z'))
    expect((await adapter.keyStore.find(info.key_id))?.last_used_at?.toISOString()).toBe('2026-06-03T00:00:00.001Z')
    await expect(adapter.keyStore.create({ ...(stored as NonNullable<typeof stored>) })).rejects.toThrow()
  })

  it('turns a key away over HTTP once it is disabled, and back in once enabled', async () => {
    const app = withResponseChecks(Fastify())
    await app.register(workforceApi, { storage: adapter.storage, keyStore: adapter.keyStore, modules: adapter.modules, keyCache: { ttlMs: 0 } })
    try {
      const { key, info } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'] })
      const users = () => app.inject({ url: '/v1/users?per_page=1', headers: { authorization: `Bearer ${key}` } })
      expect((await users()).statusCode).toBe(200)
      await app.workforceApi.keys.disable(info.key_id)
      expect((await users()).json()).toMatchObject({ error: { code: 'unauthorized', status: 401 } })
      await app.workforceApi.keys.enable(info.key_id)
      expect((await users()).statusCode).toBe(200)
    } finally {
      await app.close()
    }
  })

  it('answers module state from its table, core on by default, and upserts changes', async () => {
    const modules = adapter.modules
    expect(await modules.isActive(3, 'core')).toBe(true)
    expect(await modules.isActive(3, 'projects')).toBe(false)
    expect(await modules.isActive(99, 'core')).toBe(true)
    expect(await modules.isActive(99, 'todo')).toBe(false)
    await modules.setActive(3, 'projects', true)
    expect(await modules.isActive(3, 'projects')).toBe(true)
    await modules.setActive(3, 'projects', false)
    expect(await modules.isActive(3, 'projects')).toBe(false)

    const app = withResponseChecks(Fastify())
    await app.register(workforceApi, { storage: adapter.storage, keyStore: adapter.keyStore, modules, moduleCacheTtlMs: 0 })
    try {
      const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['shifts:read'] })
      const shifts = () => app.inject({ url: '/v1/shifts?per_page=1', headers: { 'x-api-key': key } })
      expect((await shifts()).statusCode).toBe(200)
      await modules.setActive(1, 'projects', false)
      expect((await shifts()).json()).toMatchObject({ error: { code: 'forbidden', status: 403 } })
      await modules.setActive(1, 'projects', true)
      expect((await shifts()).statusCode).toBe(200)
    } finally {
      await app.close()
    }
  })
})
