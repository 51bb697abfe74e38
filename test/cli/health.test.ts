import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import type { Storage } from '../../src/ports/storage.js'
import { registerHealthRoutes, workforceReadiness } from '../../src/server/health.js'

function storageWhoseCompany(company: Storage['company']): Storage {
  return { ...createMemoryAdapter().storage, company } as Storage
}

describe('health routes and the exported readiness check', () => {
  it('live is 200; ready is 200 while the database answers', async () => {
    const app = Fastify()
    const { storage } = createMemoryAdapter()
    registerHealthRoutes(app, () => workforceReadiness({ storage }))
    expect((await app.inject('/health/live')).json()).toEqual({ status: 'ok' })
    const ready = await app.inject('/health/ready')
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toEqual({ status: 'ready', storage: 'ok' })
    expect(ready.headers['cache-control']).toBe('no-store')
    await app.close()
  })

  it.each([
    ['a database that does not answer within the timeout', () => new Promise<never>(() => {}), 'timeout'],
    ['a database that refuses', async () => Promise.reject(new Error('connection refused')), 'error'],
  ] as const)('ready is 503 in the envelope for %s', async (_label, company, outcome) => {
    const app = Fastify()
    const storage = storageWhoseCompany(company as Storage['company'])
    registerHealthRoutes(app, () => workforceReadiness({ storage }, 200))
    const started = Date.now()
    const response = await app.inject('/health/ready')
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(response.statusCode).toBe(503)
    expect(response.headers['retry-after']).toBe('1')
    expect(response.json()).toEqual({ error: { code: 'service_unavailable', message: `Not ready: storage ${outcome}`, status: 503 } })
    expect((await app.inject('/health/live')).statusCode).toBe(200)
    await app.close()
  })
})
