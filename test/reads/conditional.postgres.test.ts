import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { workforceApi } from '../../src/index.js'
import { portsOf } from '../../src/ports/index.js'
import { generateDataset } from '../../src/seed/generate.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { withResponseChecks } from '../helpers/response-checks.js'

/**
 * Issue 25 on the deployment it must scale to: two instances, each with its own pool and its
 * own kept answers, on one Postgres. A tag is the same on both; a change through either, or by
 * SQL outside the API, changes the tags of the answers it changes on both at once.
 */
describePostgres('conditional reads on two Postgres instances', () => {
  const database = useTestDatabase()
  const instances: Array<{ app: FastifyInstance; adapter: PostgresAdapter; url: string }> = []
  let key = ''

  beforeAll(async () => {
    for (const index of [0, 1]) {
      const adapter = await openPostgresAdapter({ connectionString: database.current.url })
      if (index === 0) await adapter.loadDataset(generateDataset())
      const app = withResponseChecks(Fastify())
      await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter) })
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      instances.push({ app, adapter, url: `${url}/api/public` })
    }
    key = (await instances[0]?.app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] }))?.key as string
  })

  afterAll(async () => {
    for (const { app, adapter } of instances.splice(0)) {
      await app.close()
      await adapter.close()
    }
  })

  const at = (index: number) => instances[index] as { app: FastifyInstance; adapter: PostgresAdapter; url: string }
  const get = (index: number, path: string, tag?: string) =>
    fetch(`${at(index).url}${path}`, { headers: { 'x-api-key': key, ...(tag === undefined ? {} : { 'if-none-match': tag }) } })

  it('both instances give the same tag, and a write through one changes the answers it changes on the other at once', async () => {
    const a = await get(0, '/v1/todos?per_page=5')
    const b = await get(1, '/v1/todos?per_page=5')
    const tag = a.headers.get('etag') as string
    expect(b.headers.get('etag')).toBe(tag)
    expect(await a.text()).toBe(await b.text())
    expect((await get(1, '/v1/todos?per_page=5', tag)).status).toBe(304)
    const users = (await get(0, '/v1/users')).headers.get('etag') as string

    const first = ((await (await get(0, '/v1/todos?per_page=1')).json()) as { data: Array<{ id: number }> }).data[0] as { id: number }
    const patched = await fetch(`${at(1).url}/v1/todos/${first.id}`, {
      method: 'PATCH',
      headers: { 'x-api-key': key, 'idempotency-key': 'conditional-pg-1', 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Changed on instance b' }),
    })
    expect(patched.status).toBe(200)
    const changed = await get(0, '/v1/todos?per_page=5', tag)
    expect(changed.status).toBe(200)
    expect(await changed.text()).toContain('Changed on instance b')
    expect((await get(0, '/v1/users', users)).status).toBe(304)
  })

  it("a person's rename by SQL changes the user list's tag on both instances; a change no answer shows changes none", async () => {
    const list = await get(0, '/v1/users')
    const tag = list.headers.get('etag') as string
    expect((await get(1, '/v1/users', tag)).status).toBe(304)
    const accepted = ((await list.json()) as { data: Array<{ email: string; invitation_status: string }> }).data.find((user) => user.invitation_status === 'accepted') as {
      email: string
    }
    const db = at(0).adapter.db
    await db.updateTable('wfa_users').set({ password_hash: 'not shown anywhere' }).where('email', '=', accepted.email).execute()
    expect((await get(0, '/v1/users', tag)).status).toBe(304)
    expect((await get(1, '/v1/users', tag)).status).toBe(304)
    await db.updateTable('wfa_users').set({ last_name: 'Renamed-in-SQL' }).where('email', '=', accepted.email).execute()
    for (const index of [0, 1]) {
      const renamed = await get(index, '/v1/users', tag)
      expect(renamed.status).toBe(200)
      expect(await renamed.text()).toContain('Renamed-in-SQL')
    }
  })
})
