/**
 * Child entry of bench/cold-start.ts: the baseline, `serve` on Postgres as it was before issue
 * 21's fix. The same build of the plugin as the `serve` it is compared with (the parent's copy
 * of dist/, whose directory it is given), registered as src/cli/serve.ts registers it, over a
 * Postgres adapter opened with `minConnections: 0` (pg-pool's `min` 0: connections open on
 * demand and close when idle), and never warmed up: no `warmUp()`, no warmed lists. It listens
 * at once and prints serve's "listening on" line.
 *
 * Left out, as the burst does not use them: /health/live and /health/ready, and webhook
 * delivery (the parent runs `serve --no-dispatcher` without WORKFORCE_WEBHOOK_KEY; events are
 * recorded, not delivered, in both).
 *
 * argv: <dist directory> <postgres url>; LOG_LEVEL as for serve.
 */
import Fastify from 'fastify'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

// Types from the sources, code from the build: what runs is what `serve` runs.
type Library = typeof import('../src/index.js')
type PostgresLibrary = typeof import('../adapters/postgres/index.js')

const [dist, db] = process.argv.slice(2) as [string, string]
const load = <T>(file: string) => import(pathToFileURL(join(dist, file)).href) as Promise<T>
const lib = await load<Library>('index.js')
const { openPostgresAdapter } = await load<PostgresLibrary>('adapters/postgres/index.js')

const adapter = await openPostgresAdapter({ connectionString: db }, { migrate: false, minConnections: 0 })
// serve checks the database's migrations before it serves, which leaves one connection idle in
// the pool (for pg-pool's idle timeout, 10 s): so does this baseline.
await adapter.pool.query('select 1')
const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info', redact: lib.LOG_REDACT_PATHS }, ...lib.workforceServerOptions({}) })
lib.hardenWorkforceServer(app, {})
app.setNotFoundHandler(lib.workforceNotFoundHandler)
app.setErrorHandler(lib.workforceErrorHandler)
await app.register(lib.workforceApi, {
  prefix: '/api/public',
  ...lib.portsOf(adapter),
  rateLimit: { max: 1_000_000 },
  webhookOptions: { allowPrivateDestinations: false, dispatcher: false },
})
await app.ready()
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
console.log(`workforce-api listening on ${url} (API at ${url}/api/public/v1)`)

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    app
      .close()
      .then(() => adapter.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      )
  })
}
