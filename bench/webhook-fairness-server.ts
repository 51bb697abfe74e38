/**
 * Child-process entry of the delivery-fairness benchmark (bench/webhook-fairness.ts): the plugin
 * over a fresh SQLite file or a fresh Postgres schema, seeded with the two seed companies, one
 * key per company and the webhook endpoints the parent names, served on 127.0.0.1 with this
 * instance's dispatcher running. Talks to the parent over IPC; counts its own garbage
 * collections so the report can show that they happened while receivers hung.
 *
 * argv: a JSON `FairnessServerConfig`
 */
import { constants, PerformanceObserver } from 'node:perf_hooks'
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import { openPostgresAdapter } from '../adapters/postgres/index.js'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { portsOf } from '../src/ports/index.js'
import { workforceApi } from '../src/plugin.js'
import { generateDataset } from '../src/seed/generate.js'

export const FAIRNESS_PREFIX = '/api/public'

export interface FairnessServerConfig {
  backend: 'sqlite' | 'postgres'
  /** SQLite: the file (created here); Postgres: the server's URL. */
  target: string
  /** Postgres: the schema of this server's own, created here (the parent drops it). */
  schema?: string
  /** Endpoints to create, in order: company and receiver URL; each subscribes to `*`. */
  endpoints: Array<{ companyId: number; url: string }>
  /** `webhookOptions.timeoutMs`; absent: the plugin's default (15 s). */
  timeoutMs?: number
}

export interface ServerStats {
  /** Garbage collections so far, by kind. */
  gc: { minor: number; major: number; incremental: number; weak: number }
  rssMiB: number
  cpuMicros: number
}

/** Server → parent. */
export type FairnessServerMessage =
  | { type: 'ready'; baseUrl: string; keys: Record<number, string>; endpointIds: string[] }
  | { type: 'stats'; stats: ServerStats }
  | { type: 'failed'; message: string }

/** Parent → server. */
export type FairnessParentMessage = { type: 'stats' } | { type: 'close' }

const config = JSON.parse(process.argv[2] as string) as FairnessServerConfig
const gc = { minor: 0, major: 0, incremental: 0, weak: 0 }

async function start(): Promise<void> {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++
      else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gc.minor++
      else if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) gc.incremental++
      else gc.weak++
    }
  }).observe({ entryTypes: ['gc'] })

  const adapter =
    config.backend === 'sqlite'
      ? await openSqliteAdapter({ filename: config.target })
      : await openPostgresAdapter({ connectionString: config.target }, { schema: config.schema as string })
  await adapter.loadDataset(generateDataset({ scale: 100 }))
  const app = Fastify({ logger: false })
  // Options every plugin version under comparison knows (unknown options are refused):
  // a fixed load of 50 writes/s with one key per company must not meet a rate limit.
  await app.register(workforceApi, {
    ...portsOf(adapter),
    prefix: FAIRNESS_PREFIX,
    rateLimit: false,
    webhookOptions: {
      secretKey: randomBytes(32).toString('base64'),
      allowPrivateDestinations: true,
      ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
    },
  })
  await app.ready()
  const keys: Record<number, string> = {}
  for (const companyId of new Set(config.endpoints.map((e) => e.companyId))) {
    keys[companyId] = (await app.workforceApi.keys.create({ companyId, scopes: ['all'], name: `fairness ${companyId}` })).key
  }
  const endpointIds: string[] = []
  for (const { companyId, url } of config.endpoints) {
    const { endpoint } = await app.workforceApi.webhooks.create({ companyId, url, events: ['*'] })
    endpointIds.push(String(endpoint.id))
  }
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  process.on('message', (message: FairnessParentMessage) => {
    if (message.type === 'stats') {
      const cpu = process.cpuUsage()
      send({ type: 'stats', stats: { gc: { ...gc }, rssMiB: process.memoryUsage.rss() / 2 ** 20, cpuMicros: cpu.user + cpu.system } })
    } else if (message.type === 'close') {
      app
        .close()
        .then(() => adapter.close())
        .then(() => process.exit(0), fail)
    }
  })
  send({ type: 'ready', baseUrl: `${address}${FAIRNESS_PREFIX}`, keys, endpointIds })
}

function send(message: FairnessServerMessage): void {
  process.send?.(message)
}

function fail(error: unknown): void {
  send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) })
  process.exit(1)
}

start().catch(fail)
