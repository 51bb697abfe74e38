import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { workforceApi } from '../../src/plugin.js'
import { portsOf } from '../../src/ports/index.js'
import { generateDataset } from '../../src/seed/generate.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { describeRedis, redisUrl } from '../helpers/redis.js'
import { withResponseChecks } from '../helpers/response-checks.js'
import { countLookups, sharedAddressSuite, type SharedAddressInstance } from './shared-address-suite.js'

// Issue 21, item 2, over real HTTP on two instances with separate pools and Redis clients,
// one Postgres and one Redis: the address budget, its allowance and the vouches are shared.
describePostgres('a shared address never locks out a valid key (Postgres, two instances)', () => {
  describeRedis('with Redis counters', () => {
    const database = useTestDatabase()
    beforeAll(async () => {
      const adapter = await openPostgresAdapter({ connectionString: database.current.url })
      await adapter.loadDataset(generateDataset())
      await adapter.close()
    })
    // Every test counts from 127.0.0.1 in a Redis others use too: each cluster gets a key
    // prefix of its own (ioredis adds it to the library's script keys), removed afterwards.
    const prefixes: string[] = []
    afterAll(async () => {
      const redis = new Redis(redisUrl as string)
      for (const prefix of prefixes) {
        const keys = await redis.keys(`${prefix}*`)
        if (keys.length > 0) await redis.del(...keys)
      }
      redis.disconnect()
    })

    sharedAddressSuite(async ({ rateLimit, keyCacheTtlMs }) => {
      const prefix = `wfa-test-${randomBytes(6).toString('hex')}:`
      prefixes.push(prefix)
      const parts: Array<{ app: FastifyInstance; adapter: PostgresAdapter; redis: Redis }> = []
      const instances: SharedAddressInstance[] = []
      for (let index = 0; index < 2; index++) {
        const adapter = await openPostgresAdapter({ connectionString: database.current.url })
        const lookups = countLookups(adapter.keyStore)
        const redis = new Redis(redisUrl as string, { keyPrefix: prefix })
        const app = withResponseChecks(Fastify())
        await app.register(workforceApi, {
          prefix: '/api/public',
          ...portsOf(adapter),
          rateLimit: { ...rateLimit, redis },
          ...(keyCacheTtlMs === undefined ? {} : { keyCache: { ttlMs: keyCacheTtlMs } }),
        })
        const url = await app.listen({ port: 0, host: '127.0.0.1' })
        parts.push({ app, adapter, redis })
        instances.push({ url: `${url}/api/public/v1`, lookups })
      }
      const owner = parts[0] as (typeof parts)[0]
      return {
        instances,
        async createKey(rateLimitOfKey) {
          const created = await owner.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'], ...(rateLimitOfKey === undefined ? {} : { rateLimit: rateLimitOfKey }) })
          return { key: created.key, keyId: created.info.key_id }
        },
        async close() {
          for (const { app, adapter, redis } of parts) {
            await app.close()
            await adapter.close()
            redis.disconnect()
          }
        },
      }
    }, 1)
  })
})
