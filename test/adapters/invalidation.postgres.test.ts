import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { workforceApi } from '../../src/plugin.js'
import { portsOf } from '../../src/ports/index.js'
import { generateDataset } from '../../src/seed/generate.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { withResponseChecks } from '../helpers/response-checks.js'

const CLI = join(import.meta.dirname, '../../dist/cli.js')
const run = promisify(execFile)
/** Issue 9: a change made through any path is honoured on every instance within this. */
const PROPAGATION_BOUND_MS = 1_000

interface Instance {
  app: FastifyInstance
  adapter: PostgresAdapter
  url: string
}

/** Polls until `check` holds; returns how long it took, or throws after `limitMs`. */
async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now()
  for (;;) {
    if (await check()) return performance.now() - started
    if (performance.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describePostgres('key and module changes reach every instance (LISTEN/NOTIFY)', () => {
  const database = useTestDatabase()
  const instances: Instance[] = []

  beforeAll(async () => {
    for (let index = 0; index < 2; index++) {
      const adapter = await openPostgresAdapter({ connectionString: database.current.url })
      if (index === 0) await adapter.loadDataset(generateDataset())
      const app = withResponseChecks(Fastify())
      // The default caches: 30 s for keys, 5 s for modules. Without the feed a change elsewhere waits that long.
      await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter), rateLimit: false })
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      instances.push({ app, adapter, url: `${url}/api/public/v1` })
    }
  })
  afterAll(async () => {
    for (const { app, adapter } of instances) {
      await app.close()
      await adapter.close()
    }
  })

  const status = async (instance: Instance, key: string, path = '/users?per_page=1') => {
    const response = await fetch(`${instance.url}${path}`, { headers: { 'x-api-key': key } })
    await response.arrayBuffer()
    return response.status
  }
  const both = () => instances as [Instance, Instance]

  it('a key revoked through app.workforceApi.keys on one instance is refused on the other within 1 s', async () => {
    const [a, b] = both()
    const { key, info } = await a.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'] })
    expect([await status(a, key), await status(b, key)]).toEqual([200, 200]) // both have it cached now
    await a.app.workforceApi.keys.revoke(info.key_id)
    const ms = await within(PROPAGATION_BOUND_MS, async () => (await status(b, key)) === 401)
    console.log(`[invalidation] revocation on instance A refused on instance B after ${ms.toFixed(0)} ms`)
  })

  it('a key disabled and re-enabled by the CLI in another process is refused, then accepted, on both within 1 s', async () => {
    const [a, b] = both()
    const { key, info } = await a.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'] })
    expect([await status(a, key), await status(b, key)]).toEqual([200, 200])
    await run(process.execPath, [CLI, 'keys', 'disable', '--db', database.current.url, '--key-id', info.key_id])
    const disabledMs = await within(PROPAGATION_BOUND_MS, async () => (await status(a, key)) === 401 && (await status(b, key)) === 401)
    await run(process.execPath, [CLI, 'keys', 'enable', '--db', database.current.url, '--key-id', info.key_id])
    const enabledMs = await within(PROPAGATION_BOUND_MS, async () => (await status(a, key)) === 200 && (await status(b, key)) === 200)
    console.log(`[invalidation] CLI disable seen by both after ${disabledMs.toFixed(0)} ms, enable after ${enabledMs.toFixed(0)} ms`)
  })

  it('a module switched off by the CLI is refused (403) on both within 1 s, and on again likewise', async () => {
    const [a, b] = both()
    const { key } = await a.app.workforceApi.keys.create({ companyId: 1, scopes: ['todos:read'] })
    expect([await status(a, key, '/todos'), await status(b, key, '/todos')]).toEqual([200, 200])
    const set = (active: boolean) => run(process.execPath, [CLI, 'modules', 'set', '--db', database.current.url, '--company', '1', '--module', 'todo', '--active', String(active)])
    await set(false)
    const offMs = await within(PROPAGATION_BOUND_MS, async () => (await status(a, key, '/todos')) === 403 && (await status(b, key, '/todos')) === 403)
    await set(true)
    await within(PROPAGATION_BOUND_MS, async () => (await status(a, key, '/todos')) === 200 && (await status(b, key, '/todos')) === 200)
    console.log(`[invalidation] module switched off by the CLI refused on both after ${offMs.toFixed(0)} ms`)
  })

  it('when its subscription is lost, an instance listens again and drops every cached key (messages may have been missed)', async () => {
    const [a, b] = both()
    const { key, info } = await a.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'] })
    expect(await status(b, key)).toBe(200)
    // A change no notification announces (straight SQL), then the listeners' connections drop.
    const admin = new pg.Client({ connectionString: database.current.url })
    await admin.connect()
    try {
      await admin.query("update wfa_api_keys set state = 'revoked' where key_id = $1", [info.key_id])
      expect(await status(b, key)).toBe(200) // still cached
      const { rowCount } = await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen %' and pid <> pg_backend_pid()")
      expect(rowCount).toBeGreaterThanOrEqual(2)
    } finally {
      await admin.end()
    }
    const ms = await within(5_000, async () => (await status(b, key)) === 401)
    console.log(`[invalidation] after losing its LISTEN connection, instance B flushed its caches within ${ms.toFixed(0)} ms`)
    // And it listens again: a later revocation through A still reaches B at once.
    const later = await a.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'] })
    expect(await status(b, later.key)).toBe(200)
    await a.app.workforceApi.keys.revoke(later.info.key_id)
    await within(PROPAGATION_BOUND_MS, async () => (await status(b, later.key)) === 401)
  })
})
