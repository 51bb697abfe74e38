import pg from 'pg'
import { openPostgresAdapter } from '../adapters/postgres/index.js'
import { generateDataset } from '../src/seed/generate.js'

/** Bump when the seed or the schema changes in a way that makes an old database measure something else. */
const FIXTURE_VERSION = 1

export interface PostgresFixtureOptions {
  /** An admin connection (it creates databases), e.g. postgres://postgres@127.0.0.1:5432/postgres. */
  adminUrl: string
  scale: number
  log: (line: string) => void
}

/**
 * The URL of a Postgres database seeded at `scale` (the seed's company 1 has `scale` rows of
 * every resource, company 2 has 45), created on first use. It is seeded under a temporary name
 * and renamed only when complete, so an interrupted seed is never mistaken for a finished one.
 */
export async function ensurePostgresFixture(options: PostgresFixtureOptions): Promise<string> {
  const name = `wfa_bench_contention_${options.scale}_v${FIXTURE_VERSION}`
  const admin = new pg.Client({ connectionString: options.adminUrl })
  await admin.connect()
  try {
    if ((await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1) {
      options.log(`fixture: cached postgres database ${name}`)
      return databaseUrl(options.adminUrl, name)
    }
    const building = `${name}_building_${process.pid}`
    await admin.query(`drop database if exists ${pg.escapeIdentifier(building)}`)
    await admin.query(`create database ${pg.escapeIdentifier(building)}`)
    const started = performance.now()
    options.log(`fixture: seeding scale ${options.scale} into postgres database ${name} (first run only)`)
    try {
      const adapter = await openPostgresAdapter({ connectionString: databaseUrl(options.adminUrl, building) })
      try {
        await adapter.loadDataset(generateDataset({ scale: options.scale }))
      } finally {
        await adapter.close()
      }
      // Planner statistics, on a connection without the adapter's 1 s query bound.
      const seeded = new pg.Client({ connectionString: databaseUrl(options.adminUrl, building) })
      await seeded.connect()
      await seeded.query('analyze').finally(() => seeded.end())
      await admin.query(`alter database ${pg.escapeIdentifier(building)} rename to ${pg.escapeIdentifier(name)}`)
    } catch (error) {
      await admin.query(`drop database if exists ${pg.escapeIdentifier(building)}`)
      throw error
    }
    options.log(`fixture: seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    return databaseUrl(options.adminUrl, name)
  } finally {
    await admin.end()
  }
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}
