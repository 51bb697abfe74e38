import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { workforceApi } from '../../src/index.js'
import { generateDataset } from '../../src/seed/generate.js'
import { describePostgres, readChangeEvents, useTestDatabase } from '../helpers/postgres.js'
import { portsOf } from '../../src/ports/index.js'
import { withResponseChecks } from '../helpers/response-checks.js'

/**
 * Two app instances, each with its own pool, on one Postgres database, over real HTTP: the
 * deployment the project must scale to. Keys and idempotency records are shared state.
 */
describePostgres('two app instances on one Postgres', () => {
  const database = useTestDatabase()
  const instances: Array<{ app: FastifyInstance; adapter: PostgresAdapter; url: string }> = []

  beforeAll(async () => {
    for (const [index, keyCacheTtlMs] of [30_000, 0].entries()) {
      const adapter = await openPostgresAdapter({ connectionString: database.current.url })
      if (index === 0) await adapter.loadDataset(generateDataset())
      const app = withResponseChecks(Fastify())
      await app.register(workforceApi, {
        prefix: '/api/public',
        ...portsOf(adapter),
        keyCache: { ttlMs: keyCacheTtlMs },
      })
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      instances.push({ app, adapter, url: `${url}/api/public/v1` })
    }
  })

  afterAll(async () => {
    for (const { app, adapter } of instances.splice(0)) {
      await app.close()
      await adapter.close()
    }
  })

  const totalTodos = async (url: string, key: string) => {
    const body = (await (await fetch(`${url}/todos?per_page=1`, { headers: { 'x-api-key': key } })).json()) as { pagination: { total: number } }
    return body.pagination.total
  }

  const instance = (index: number) => {
    const found = instances[index]
    if (found === undefined) throw new Error(`instance ${index} did not start`)
    return found
  }

  it('runs identical requests spread over both instances exactly once', async () => {
    const [a, b] = [instance(0), instance(1)]
    const { key } = await a.app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })
    const headers = { authorization: `Bearer ${key}`, 'idempotency-key': 'two-instances-1', 'content-type': 'application/json' }
    const body = JSON.stringify({ title: 'Inspect the crane', list_id: 1, assignee_group_id: 1 })
    const totalBefore = await totalTodos(b.url, key)

    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) => fetch(`${(i % 2 === 0 ? a : b).url}/todos`, { method: 'POST', headers, body })),
    )
    const results = await Promise.all(responses.map(async (res) => ({ status: res.status, replay: res.headers.get('idempotent-replay'), body: await res.text() })))
    const executed = results.filter((r) => r.status === 201 && r.replay === null)
    expect(executed, JSON.stringify(results.map((r) => [r.status, r.replay]))).toHaveLength(1)
    for (const result of results) {
      expect([201, 409]).toContain(result.status)
      if (result.status === 201) expect(result.body).toBe(executed[0]?.body)
      if (result.status === 409) expect(JSON.parse(result.body).error.code).toBe('conflict')
    }

    const created = JSON.parse(executed[0]?.body as string).data
    const retry = await fetch(`${b.url}/todos`, { method: 'POST', headers, body })
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replay')).toBe('true')
    expect(await retry.text()).toBe(executed[0]?.body)

    const totalAfter = await totalTodos(a.url, key)
    expect(totalAfter).toBe(totalBefore + 1)
    const events = (await readChangeEvents(a.adapter)).filter((event) => event.type === 'todos.created' && event.resource_id === created.id)
    expect(events).toHaveLength(1)
  })

  it('sees a key revoked through the other instance (no key cache on the second)', async () => {
    const [a, b] = [instance(0), instance(1)]
    const { key, info } = await a.app.workforceApi.keys.create({ companyId: 2, scopes: ['users:read'] })
    expect((await fetch(`${b.url}/users?per_page=1`, { headers: { 'x-api-key': key } })).status).toBe(200)
    await a.app.workforceApi.keys.revoke(info.key_id)
    const refused = await fetch(`${b.url}/users?per_page=1`, { headers: { 'x-api-key': key } })
    expect(refused.status).toBe(401)
    expect(await refused.text()).toBe('{"error":{"code":"unauthorized","message":"Invalid or missing API key","status":401}}')
  })
})
