/**
 * `npm run example`: a SQLite-backed API server with demo data and working keys.
 * Seeds `.example/workforce-demo.db` on first run, listens, then creates fresh demo keys.
 * `PORT` (default 3000) and `HOST` (default 127.0.0.1) choose where: `PORT=3001 npm run example`.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { LOG_REDACT_PATHS, portsOf, workforceAdmin, workforceApi, workforceFrameworkErrors } from '../../src/index.js'
import { generateDataset, SEED_COMPANIES } from '../../src/seed/generate.js'

const DEFAULT_PORT = 3000
const directory = join(process.cwd(), '.example')
const host = process.env.HOST || '127.0.0.1'
const port = portFrom(process.env.PORT)

/** `PORT`, checked: a typo is one line, not Node's RangeError. */
function portFrom(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_PORT
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) fail(`PORT must be a port number from 0 to 65535, got "${value}" (PORT=3001 npm run example)`, 2)
  return Number(value)
}

/** The example's failures: one line, what to change, a non-zero exit; never a stack trace. */
function fail(message: string, exitCode = 1): never {
  console.error(`example: ${message}`)
  process.exit(exitCode)
}

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

// Listen first: a port in use stops the example here, before it makes keys nobody can use.
try {
  await app.listen({ port, host })
} catch (error) {
  await app.close()
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE') fail(`port ${port} on ${host} is already in use (another example or server?): stop it, or pick another port: PORT=${port === 65_535 ? 3001 : port + 1} npm run example`)
  if (code === 'EACCES') fail(`port ${port} on ${host}: permission denied (ports below 1024 need privileges): pick another: PORT=3001 npm run example`)
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') fail(`HOST=${host} is not an address of this machine: leave HOST unset (127.0.0.1), or use 0.0.0.0 for every interface`, 2)
  throw error
}

const full = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'], name: 'demo: everything' })
const readOnlyUsers = await app.workforceApi.keys.create({ companyId: 2, scopes: ['users:read', 'company:read'], name: 'demo: users only' })

const address = app.server.address()
const listening = typeof address === 'object' && address !== null ? address.port : port
const origin = `http://${host.includes(':') ? `[${host}]` : host}:${listening}`
const base = `${origin}/api/public/v1`
console.log(`
fastify-workforce-api example listening on ${origin}
(PORT and HOST choose the port and address: PORT=3001 npm run example, HOST=0.0.0.0 for every interface)

API reference: ${origin}/api/public/docs  (OpenAPI document: ${origin}/api/public/openapi.json)
Integrations portal (keys, webhooks, deliveries, audit; demo sign-in as company 1):
               ${origin}/settings/integrations/api/portal/

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
