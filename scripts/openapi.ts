/**
 * `npm run openapi`: records an example of every operation by calling the API over the seed
 * data (`src/openapi/examples.generated.ts`), then writes the OpenAPI document the plugin
 * serves to `docs/openapi.json`, and the admin API's document (`workforceAdmin`) to
 * `docs/admin-openapi.json`; openapi-typescript turns them into the sync client's and the
 * portal's types. Run it after changing a route, a schema or the seed; a test fails while any
 * of these files is stale.
 *
 *   npm run openapi                                write every file
 *   tsx scripts/openapi.ts [--document|--admin] --check   exit 1 if that file differs from what would be written
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { createMemoryAdapter } from '../adapters/memory/index.js'
import type { OperationExample } from '../src/openapi/example-types.js'
import { workforceAdmin } from '../src/admin/plugin.js'
import { workforceApi } from '../src/plugin.js'
import type { Dataset } from '../src/ports/dataset.js'
import { generateDataset } from '../src/seed/generate.js'

export const EXAMPLES_FILE = fileURLToPath(new URL('../src/openapi/examples.generated.ts', import.meta.url))
export const DOCUMENT_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url))
export const ADMIN_DOCUMENT_FILE = fileURLToPath(new URL('../docs/admin-openapi.json', import.meta.url))
/** openapi-typescript's output for the admin document: the portal's wire types derive from it. */
export const ADMIN_TYPES_FILE = fileURLToPath(new URL('../portal/src/api/admin-api-types.ts', import.meta.url))

const PREFIX = '/api/public'
/** Examples are recorded at a fixed instant, so the generated file only changes with the code. */
const EXAMPLE_NOW = Date.parse('2026-10-01T09:30:00.000Z')
const COMPANY = 1

interface ExampleRequest {
  method: 'GET' | 'POST' | 'PATCH'
  path: string
  query?: Record<string, string | number | boolean>
  body?: unknown
}

/** The request each operation's example makes, in an order where each finds what it needs. */
function exampleRequests(data: Dataset): Record<string, ExampleRequest> {
  const first = <T extends { company_id: number; id: number }>(rows: readonly T[]) => rows.find((row) => row.company_id === COMPANY) as T
  const exclusive = data.memberships.find(
    (membership) =>
      membership.company_id === COMPANY &&
      membership.invitation_status === 'accepted' &&
      data.memberships.filter((other) => other.user_id === membership.user_id).length === 1,
  )
  if (exclusive === undefined) throw new Error('the seed has no user exclusive to company 1')
  const user = data.memberships.find((membership) => membership.company_id === COMPANY) as Dataset['memberships'][number]
  const role = first(data.roles)
  const todo = first(data.todos)
  const list = first(data.todoLists)
  const shift = first(data.shifts)
  const day = shift.starts_at.toISOString().slice(0, 10)
  return {
    listUsers: { method: 'GET', path: '/v1/users', query: { per_page: 2 } },
    getUser: { method: 'GET', path: `/v1/users/${user.user_id}` },
    createUser: {
      method: 'POST',
      path: '/v1/users',
      body: { email: 'ada.lovelace@example.com', first_name: 'Ada', last_name: 'Lovelace', role_ids: [role.id], send_invite: true },
    },
    deactivateUser: { method: 'POST', path: `/v1/users/${exclusive.user_id}/deactivate` },
    activateUser: { method: 'POST', path: `/v1/users/${exclusive.user_id}/activate` },
    listEmployees: { method: 'GET', path: '/v1/employees', query: { per_page: 2, updated_since: '2026-01-01T00:00:00.000Z' } },
    getEmployee: { method: 'GET', path: `/v1/employees/${first(data.employees).id}` },
    listRoles: { method: 'GET', path: '/v1/roles', query: { per_page: 2 } },
    getRole: { method: 'GET', path: `/v1/roles/${role.id}` },
    getCompany: { method: 'GET', path: '/v1/company' },
    listProjects: { method: 'GET', path: '/v1/projects', query: { per_page: 2, status: first(data.projects).status } },
    getProject: { method: 'GET', path: `/v1/projects/${first(data.projects).id}` },
    listShifts: { method: 'GET', path: '/v1/shifts', query: { per_page: 2, date_from: day, date_to: day } },
    getShift: { method: 'GET', path: `/v1/shifts/${shift.id}` },
    listAbsences: { method: 'GET', path: '/v1/absences', query: { per_page: 2 } },
    getAbsence: { method: 'GET', path: `/v1/absences/${first(data.absences).id}` },
    listExpenses: { method: 'GET', path: '/v1/expenses', query: { per_page: 2 } },
    getExpense: { method: 'GET', path: `/v1/expenses/${first(data.expenses).id}` },
    listTodos: { method: 'GET', path: '/v1/todos', query: { per_page: 2, status: todo.status } },
    getTodo: { method: 'GET', path: `/v1/todos/${todo.id}` },
    createTodo: {
      method: 'POST',
      path: '/v1/todos',
      body: {
        title: 'Renew the forklift certificate',
        list_id: list.id,
        assigned_to: user.user_id,
        notes: 'The certificate expires at the end of the month.',
        priority: 'high',
        important: true,
        due_date: '2026-10-30',
        due_is_all_day: true,
      },
    },
    updateTodo: { method: 'PATCH', path: `/v1/todos/${todo.id}`, body: { status: 'done' } },
  }
}

async function exampleApp(data: Dataset, openapi: boolean): Promise<FastifyInstance> {
  const adapter = createMemoryAdapter(data)
  const app = Fastify()
  await app.register(workforceApi, {
    prefix: PREFIX,
    storage: adapter.storage,
    keyStore: adapter.keyStore,
    modules: adapter.modules,
    writes: adapter.writes,
    idempotency: adapter.idempotency,
    webhooks: adapter.webhooks,
    clock: { now: () => EXAMPLE_NOW },
    rateLimit: false,
    openapi,
  })
  await app.ready()
  return app
}

/** Calls every operation once over the seed data; the answers are its examples. */
export async function recordExamples(): Promise<Record<string, OperationExample>> {
  const data = generateDataset()
  const app = await exampleApp(data, false)
  try {
    const { key } = await app.workforceApi.keys.create({ companyId: COMPANY, scopes: ['all'], expiresAt: null, name: 'examples' })
    const examples: Record<string, OperationExample> = {}
    for (const [operationId, request] of Object.entries(exampleRequests(data))) {
      const query = request.query === undefined ? '' : `?${new URLSearchParams(Object.entries(request.query).map(([name, value]): [string, string] => [name, String(value)]))}`
      const response = await app.inject({
        method: request.method,
        url: `${PREFIX}${request.path}${query}`,
        headers: { 'x-api-key': key },
        ...(request.body === undefined ? {} : { payload: request.body as object }),
      })
      if (response.statusCode >= 300) throw new Error(`example of ${operationId} answered ${response.statusCode}: ${response.body}`)
      examples[operationId] = {
        ...(request.query === undefined ? {} : { query: request.query }),
        ...(request.body === undefined ? {} : { body: request.body }),
        status: response.statusCode,
        response: response.json(),
      }
    }
    return examples
  } finally {
    await app.close()
  }
}

export function examplesModule(examples: Record<string, OperationExample>): string {
  return [
    '// Generated by `npm run openapi` from the seed data; do not edit.',
    "import type { OperationExample } from './example-types.js'",
    '',
    `export const OPERATION_EXAMPLES: Readonly<Record<string, OperationExample>> = ${JSON.stringify(examples, null, 2)}`,
    '',
  ].join('\n')
}

/** The document exactly as the plugin serves it, over an empty adapter with writes and webhooks. */
export async function buildDocument(): Promise<string> {
  const app = await exampleApp(generateDataset({ scale: 40 }), true)
  try {
    const response = await app.inject(`${PREFIX}/openapi.json`)
    return `${JSON.stringify(response.json(), null, 2)}\n`
  } finally {
    await app.close()
  }
}

/** Where the committed admin document says the admin API is mounted: the prefix docs/admin-api.md uses. */
const ADMIN_PREFIX = '/settings/integrations/api'

/**
 * The admin API's document exactly as `workforceAdmin` serves it, over an adapter with every
 * port the admin API reads (webhooks and audit included), so every route is described.
 */
export async function buildAdminDocument(): Promise<string> {
  const adapter = createMemoryAdapter()
  const app = Fastify()
  try {
    await app.register(workforceApi, {
      prefix: PREFIX,
      storage: adapter.storage,
      keyStore: adapter.keyStore,
      modules: adapter.modules,
      writes: adapter.writes,
      idempotency: adapter.idempotency,
      webhooks: adapter.webhooks,
      audit: adapter.audit,
      usage: adapter.usage,
      webhookOptions: { secretKey: Buffer.alloc(32).toString('base64'), dispatcher: false },
      clock: { now: () => EXAMPLE_NOW },
      rateLimit: false,
      openapi: false,
    })
    await app.register(workforceAdmin, { prefix: ADMIN_PREFIX, authorize: () => null })
    const response = await app.inject(`${ADMIN_PREFIX}/openapi.json`)
    return `${JSON.stringify(response.json(), null, 2)}\n`
  } finally {
    await app.close()
  }
}

function differs(file: string, content: string): boolean {
  try {
    return readFileSync(file, 'utf8') !== content
  } catch {
    return true
  }
}

/** Writes `content` to `file`; with `--check`, fails instead when the committed `file` (named `name`) differs. */
function writeOrCheck(file: string, name: string, content: string, check: boolean): void {
  if (check) {
    if (differs(file, content)) throw new Error(`${name} is stale: run npm run openapi`)
    return
  }
  writeFileSync(file, content)
  console.log(`wrote ${file}`)
}

async function main(argv: readonly string[]): Promise<void> {
  const check = argv.includes('--check')
  if (argv.includes('--admin')) {
    writeOrCheck(ADMIN_DOCUMENT_FILE, 'docs/admin-openapi.json', await buildAdminDocument(), check)
  } else if (argv.includes('--document')) {
    // The second step runs in a fresh process, which loads the examples just written.
    writeOrCheck(DOCUMENT_FILE, 'docs/openapi.json', await buildDocument(), check)
  } else {
    writeOrCheck(EXAMPLES_FILE, 'src/openapi/examples.generated.ts', examplesModule(await recordExamples()), check)
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exitCode = 1
  })
}
