// An ES module host: registers the plugin over the memory adapter and answers through inject().
import Fastify from 'fastify'
import workforceApi, { emptyDataset, portsOf } from 'fastify-workforce-api'
import { createMemoryAdapter } from 'fastify-workforce-api/memory'

const now = new Date('2026-01-01T00:00:00Z')
const adapter = createMemoryAdapter({
  ...emptyDataset(),
  companies: [{ id: 1, name: 'Acme', timezone: 'Europe/Rome', country: 'IT', created_at: now, updated_at: now }],
  modules: [{ company_id: 1, module: 'core', active: true }],
})
const app = Fastify()
await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter) })
const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['company:read'] })
const response = await app.inject({ url: '/api/public/v1/company', headers: { authorization: `Bearer ${key}` } })
await app.close()

// better-sqlite3 is an optional peer this host did not install.
const sqlite = await import('fastify-workforce-api/sqlite').then(() => 'loaded', (error) => error.message)

console.log(JSON.stringify({ status: response.statusCode, body: response.json(), sqlite }))
