// A TypeScript host that installed the drivers' types (@types/better-sqlite3, @types/pg): the
// adapter subpaths compile, under nodenext, bundler and (adapters.cts) node10 resolution.
import type * as Database from 'better-sqlite3'
import Fastify from 'fastify'
import type * as pg from 'pg'
import workforceApi, { portsOf } from 'fastify-workforce-api'
import { openPostgresAdapter, type PostgresAdapter, type PostgresConnection } from 'fastify-workforce-api/postgres'
import { openSqliteAdapter, type SqliteAdapter, type SqliteAdapterOptions } from 'fastify-workforce-api/sqlite'

declare const database: Database.Database
declare const pool: pg.Pool

const sqliteOptions: SqliteAdapterOptions = { database, readWorkers: 0 }
const connection: PostgresConnection = { pool }

export async function start(): Promise<[SqliteAdapter, PostgresAdapter]> {
  const sqlite = await openSqliteAdapter(sqliteOptions)
  const postgres = await openPostgresAdapter(connection, { schema: 'public' })
  const app = Fastify()
  await app.register(workforceApi, { prefix: '/api/public', ...portsOf(postgres) })
  return [sqlite, postgres]
}
