// A CommonJS host: the same as esm.mjs through require(), plus the ESM-only conformance suite.
const Fastify = require('fastify')
const { default: workforceApi, emptyDataset, portsOf, workforceApi: named } = require('fastify-workforce-api')
const { createMemoryAdapter } = require('fastify-workforce-api/memory')

function messageOf(load) {
  try {
    load()
    return 'loaded'
  } catch (error) {
    return error.message
  }
}

async function main() {
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
  console.log(
    JSON.stringify({
      status: response.statusCode,
      body: response.json(),
      sameExport: workforceApi === named,
      sqlite: messageOf(() => require('fastify-workforce-api/sqlite')),
      conformance: messageOf(() => require('fastify-workforce-api/conformance')),
    }),
  )
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
