/**
 * `npm run example`: a SQLite-backed API server with demo data and working keys.
 * Seeds `.example/workforce-demo.db` on first run, creates fresh demo keys, then serves.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { LOG_REDACT_PATHS, portsOf, workforceAdmin, workforceApi, workforceFrameworkErrors } from '../../src/index.js'
import { generateDataset, SEED_COMPANIES } from '../../src/seed/generate.js'

const directory = join(process.cwd(), '.example')
const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'

mkdirSync(directory, { recursive: true })
const adapter = await openSqliteAdapter({ filename: join(directory, 'workforce-demo.db') })
if ((await adapter.storage.company(SEED_COMPANIES[0]!.id)) === null) {
  await adapter.loadDataset(generateDataset())
  console.log(`Seeded ${join(directory, 'workforce-demo.db')} with demo data`)
}

// Seals webhook signing secrets at rest; a real host keeps it in its secret manager.
const secretKeyFile = join(directory, 'webhook-secret-key')
if (!existsSync(secretKeyFile)) writeFileSync(secretKeyFile, randomBytes(32).toString('base64'), { mode: 0o600 })
const secretKey = readFileSync(secretKeyFile, 'utf8').trim()

const app = Fastify({ logger: { level: 'warn', redact: LOG_REDACT_PATHS }, frameworkErrors: workforceFrameworkErrors })
await app.register(workforceApi, {
  prefix: '/api/public',
  ...portsOf(adapter),
  // The reference page at /api/public/docs, rendered from /api/public/openapi.json.
  openapi: { referencePage: true },
  // The host sends invitation emails; the example prints them.
  invites: { sendInvite: async (invitation) => console.log(`[invite] would email ${invitation.email} (user ${invitation.userId}, company ${invitation.companyId})`) },
  // Demo only: allows webhook endpoints on this machine (http://127.0.0.1/…) so you can try them.
  webhookOptions: { secretKey, allowPrivateDestinations: true },
})
// The integrations portal and its admin API. DEMO ONLY: this `authorize` lets anyone who can
// reach the port in as an admin of company 1 (or the company of the `demo_company` cookie). A
// host checks its own session here.
await app.register(workforceAdmin, {
  prefix: '/settings/integrations/api',
  portal: true,
  authorize: (request) => {
    const cookie = /(?:^|;\s*)demo_company=(\d+)/.exec(request.headers.cookie ?? '')
    return { companyId: Number(cookie?.[1] ?? 1), actor: { id: 'demo-admin', name: 'Demo admin' } }
  },
  onAudit: (entry) => console.log(`[audit] ${entry.actor_name} ${entry.action} ${entry.target_id}`),
})
app.addHook('onClose', () => adapter.close())

const full = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'], name: 'demo: everything' })
const readOnlyUsers = await app.workforceApi.keys.create({ companyId: 2, scopes: ['users:read', 'company:read'], name: 'demo: users only' })

await app.listen({ port, host })
const base = `http://${host}:${port}/api/public/v1`
console.log(`
fastify-workforce-api example listening on http://${host}:${port}

API reference: http://${host}:${port}/api/public/docs  (OpenAPI document: http://${host}:${port}/api/public/openapi.json)
Integrations portal (keys, webhooks, deliveries, audit; demo sign-in as company 1):
               http://${host}:${port}/settings/integrations/api/portal/

Demo API keys (new ones are made on every start; each is shown only here):
  company 1 (${SEED_COMPANIES[0]!.name}), all scopes:   ${full.key}
  company 2 (${SEED_COMPANIES[1]!.name}), users + company: ${readOnlyUsers.key}

Try:
  curl -H "X-Api-Key: ${full.key}" "${base}/users?per_page=5"
  curl -H "Authorization: Bearer ${full.key}" "${base}/shifts?date_from=2026-03-29&date_to=2026-03-29"
  curl -H "X-Api-Key: ${readOnlyUsers.key}" "${base}/company"
  curl -X POST -H "Authorization: Bearer ${full.key}" -H "Idempotency-Key: demo-1" -H "Content-Type: application/json" \
       -d '{"title":"Check the crane","list_id":1,"assigned_to":1,"due_date":"2026-03-20","due_is_all_day":true}' "${base}/todos"
`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.close().then(() => process.exit(0))
  })
}
