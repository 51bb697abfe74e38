/**
 * Child-process entry of bench/rate-limit.ts: the plugin over a SQLite file with rate limiting
 * off, on with the local store, or on with the Redis store (a budget no run reaches), on
 * 127.0.0.1. Prints `{"url","key"}` on its first stdout line; exits on SIGTERM.
 *
 * argv: <off|local|redis> <sqlite file> <company id> [redis url]
 */
import Fastify from 'fastify'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { workforceApi } from '../src/plugin.js'
import { portsOf } from '../src/ports/index.js'

const [mode, filename, companyArg, redisUrl] = process.argv.slice(2) as [string, string, string, string | undefined]
/** Far above what a run sends: the benchmark measures counting, never a 429. */
const BUDGET = 1_000_000_000

const adapter = await openSqliteAdapter({ filename, migrate: false })
const app = Fastify({ logger: false })
const rateLimit = mode === 'off' ? false : mode === 'local' ? { max: BUDGET } : mode === 'redis' ? { max: BUDGET, redis: redisUrl as string } : undefined
if (rateLimit === undefined) throw new Error(`unknown mode ${mode}`)
await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter), rateLimit })
const { key } = await app.workforceApi.keys.create({ companyId: Number(companyArg), scopes: ['all'], name: `bench ${mode}` })
const url = await app.listen({ host: '127.0.0.1', port: 0 })
process.stdout.write(`${JSON.stringify({ url, key })}\n`)
process.once('SIGTERM', () => {
  void app
    .close()
    .then(() => adapter.close())
    .then(() => process.exit(0))
})
