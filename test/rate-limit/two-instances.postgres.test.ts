import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { workforceApi } from '../../src/plugin.js'
import { portsOf } from '../../src/ports/index.js'
import { generateDataset } from '../../src/seed/generate.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { describeRedis, redisUrl } from '../helpers/redis.js'
import { withResponseChecks } from '../helpers/response-checks.js'

// Issue 9: N instances on one Postgres and one Redis keep one budget per key.
describePostgres('two instances, separate pools and Redis clients', () => {
  describeRedis('share one rate budget per key', () => {
    const database = useTestDatabase()
    const instances: Array<{ app: FastifyInstance; adapter: PostgresAdapter; url: string }> = []

    beforeAll(async () => {
      for (let index = 0; index < 2; index++) {
        const adapter = await openPostgresAdapter({ connectionString: database.current.url })
        if (index === 0) await adapter.loadDataset(generateDataset())
        const app = withResponseChecks(Fastify())
        await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter), rateLimit: { max: 10, redis: redisUrl as string } })
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

    it('with max 10, exactly 10 of 20 requests spread over both instances succeed', async () => {
      const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]]
      const { key } = await a.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'] })
      const statuses: number[] = []
      const remaining: string[] = []
      const refusals: Array<{ retryAfter: number; body: unknown }> = []
      for (let i = 0; i < 20; i++) {
        const target = i % 2 === 0 ? a : b
        const response = await fetch(`${target.url}/users?per_page=1`, { headers: { 'x-api-key': key } })
        statuses.push(response.status)
        if (response.status === 200) remaining.push(response.headers.get('x-ratelimit-remaining') as string)
        if (response.status === 429) refusals.push({ retryAfter: Number(response.headers.get('retry-after')), body: await response.json() })
        else await response.arrayBuffer()
      }
      for (const refusal of refusals) {
        expect(refusal.retryAfter >= 1 && refusal.retryAfter <= 60).toBe(true)
        expect(refusal.body).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining('10 requests per 60 s'), status: 429 } })
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(10)
      expect(statuses.slice(10).every((status) => status === 429)).toBe(true)
      expect(remaining).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0'])
    })

    it('304s on either instance spend nothing of the shared budget (issue 25)', async () => {
      const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]]
      const { key } = await a.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'] })
      const first = await fetch(`${a.url}/users?per_page=1`, { headers: { 'x-api-key': key } })
      await first.arrayBuffer()
      const tag = first.headers.get('etag') as string
      for (let i = 0; i < 20; i++) {
        const response = await fetch(`${(i % 2 === 0 ? b : a).url}/users?per_page=1`, { headers: { 'x-api-key': key, 'if-none-match': tag } })
        expect(response.status).toBe(304)
        expect(response.headers.get('x-ratelimit-remaining')).toBe('9')
      }
      const counted = await fetch(`${b.url}/users?per_page=2`, { headers: { 'x-api-key': key, 'if-none-match': tag } })
      expect(counted.status).toBe(200)
      expect(counted.headers.get('x-ratelimit-remaining')).toBe('8')
      await counted.arrayBuffer()
    })
  })
})
