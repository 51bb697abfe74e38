/**
 * Child-process entry of the contention benchmark: the plugin over the SQLite or the Postgres
 * adapter on 127.0.0.1, with the adapter's and the plugin's default settings (but rate
 * limiting), and one key per company. Talks to the parent over IPC.
 *
 * argv: <in-process|off-loop|postgres> <sqlite file | postgres URL> <company ids, comma-separated>
 * (a copy of the fixture: the server migrates it to its own schema)
 */
import Fastify from 'fastify'
import { openPostgresAdapter } from '../adapters/postgres/index.js'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { workforceApi } from '../src/plugin.js'
import { PLUGIN_PREFIX } from './plugin-app.js'

/**
 * How the server reads: on SQLite everything on the event loop (`in-process`, as before read
 * workers) or with read workers (`off-loop`, the default for a file); or on Postgres.
 */
export type ReadMode = 'in-process' | 'off-loop' | 'postgres'

/** Server → parent. */
export type ContentionServerMessage =
  | { type: 'ready'; baseUrl: string; keys: Record<number, string>; readWorkers: number }
  | { type: 'failed'; message: string }

const [mode, target, companiesArg] = process.argv.slice(2) as [ReadMode, string, string]

async function open() {
  // `target` is the benchmark's own copy of the fixture: migrated to this tree's schema.
  if (mode === 'postgres') return { adapter: await openPostgresAdapter({ connectionString: target }), readWorkers: 0 }
  if (mode !== 'in-process' && mode !== 'off-loop') throw new Error(`unknown read mode ${String(mode)}`)
  const readWorkers = mode === 'in-process' ? 0 : 2
  return { adapter: await openSqliteAdapter({ filename: target, readWorkers }), readWorkers }
}

async function start(): Promise<void> {
  const { adapter, readWorkers } = await open()
  const app = Fastify({ logger: false })
  const { storage, keyStore, modules } = adapter
  // The clients here send thousands of requests a minute with one key each: a per-key rate
  // limit (where the plugin has one) would answer 429 and measure the limiter, not the reads.
  // Spread untyped, so the option may be absent from the plugin version under test.
  const unlimited: object = { rateLimit: false }
  await app.register(workforceApi, { prefix: PLUGIN_PREFIX, storage, keyStore, modules, ...unlimited })
  await app.ready()
  const keys: Record<number, string> = {}
  for (const companyId of companiesArg.split(',').map(Number)) {
    keys[companyId] = (await app.workforceApi.keys.create({ companyId, scopes: ['all'], name: `contention ${companyId}` })).key
  }
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  process.on('message', (message: { type: string }) => {
    if (message.type === 'close') {
      app
        .close()
        .then(() => adapter.close())
        .then(() => process.exit(0), fail)
    }
  })
  send({ type: 'ready', baseUrl: `${address}${PLUGIN_PREFIX}`, keys, readWorkers })
}

function send(message: ContentionServerMessage): void {
  process.send?.(message)
}

function fail(error: unknown): void {
  send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) })
  process.exit(1)
}

start().catch(fail)
