import Fastify, { type FastifyInstance } from 'fastify'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { workforceApi } from '../src/plugin.js'

export const PLUGIN_PREFIX = '/api/public'
export const PLUGIN_USERS_PATH = `${PLUGIN_PREFIX}/v1/users`

export interface PluginApp {
  app: FastifyInstance
  /** Headers every benchmark request sends: a freshly created key of `companyId`, scope `all`. */
  headers: Record<string, string>
  close(): Promise<void>
}

/**
 * The plugin as a host would mount it over the SQLite adapter (key cache on, module cache on,
 * rate limiting off), plus one key for the benchmark.
 */
export async function buildPluginApp(filename: string, companyId: number, probeUrl: string): Promise<PluginApp> {
  const adapter = await openSqliteAdapter({ filename, migrate: false })
  const app = Fastify({ logger: false })
  const { storage, keyStore, modules } = adapter
  // The bare route has no rate limit, and a budget would turn the load into 429s: compare like with
  // like. What rate limiting costs is measured on its own by bench/rate-limit.ts.
  await app.register(workforceApi, { prefix: PLUGIN_PREFIX, storage, keyStore, modules, rateLimit: false })
  await app.ready()
  const { key } = await app.workforceApi.keys.create({ companyId, scopes: ['all'], name: 'benchmark' })
  const headers = { 'x-api-key': key }

  const response = await app.inject({ method: 'GET', url: probeUrl, headers })
  if (response.statusCode !== 200) throw new Error(`plugin probe ${probeUrl} answered ${response.statusCode}: ${response.body}`)

  return {
    app,
    headers,
    async close() {
      await app.close()
      await adapter.close()
    },
  }
}
