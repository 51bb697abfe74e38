// A host that installed pg, and not better-sqlite3: the Postgres adapter loads in both formats,
// the SQLite adapter says what to install.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const outcome = (load) => {
  try {
    return typeof load().openPostgresAdapter
  } catch (error) {
    return error.message
  }
}
const esm = await import('fastify-workforce-api/postgres')
const sqlite = await import('fastify-workforce-api/sqlite').then(() => 'loaded', (error) => error.message)
console.log(
  JSON.stringify({
    postgresEsm: typeof esm.openPostgresAdapter,
    postgresCjs: outcome(() => require('fastify-workforce-api/postgres')),
    sqlite,
    sqliteCjs: outcome(() => require('fastify-workforce-api/sqlite')),
  }),
)
