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
import { exampleSeed, type ExampleRequest } from '../src/api/examples.js'
import { CONTRACT_RESOURCES } from '../src/api/index.js'
import { EVENT_FEED_EXAMPLES } from '../src/api/events-feed.js'
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

/**
 * The request each operation's example makes, from the resources' declarations in
 * `CONTRACT_RESOURCES` order, each resource's in its own order: each finds what it needs.
 */
function exampleRequests(data: Dataset): [string, ExampleRequest][] {
  const seed = exampleSeed(data, COMPANY)
  // The feed's last: it shows the events of the resources' example writes.
  const requests = [...CONTRACT_RESOURCES.flatMap((declaration) => Object.entries(declaration.docs.examples?.(seed) ?? {})), ...Object.entries(EVENT_FEED_EXAMPLES)]
  const repeated = requests.find(([operationId], index) => requests.findIndex(([other]) => other === operationId) !== index)
  if (repeated !== undefined) throw new Error(`two resources declare an example of ${repeated[0]}`)
  return requests
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
    for (const [operationId, request] of exampleRequests(data)) {
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
        response: withStableEventIds(response.json()),
      }
    }
    return examples
  } finally {
    await app.close()
  }
}

/**
 * Event ids are random (`evt_` + 24 base32 characters); in a recorded example each becomes a
 * fixed one of the same shape, numbered in order of appearance, so the document is stable.
 */
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

function withStableEventIds(answer: unknown): unknown {
  const ids = new Map<string, string>()
  return JSON.parse(JSON.stringify(answer), (_key, value: unknown) => {
    if (typeof value !== 'string' || !/^evt_[a-z2-7]{24}$/.test(value)) return value
    if (!ids.has(value)) ids.set(value, `evt_example${'a'.repeat(12)}${BASE32[ids.size % 32]}`)
    return ids.get(value)
  })
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
