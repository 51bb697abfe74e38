import { existsSync, mkdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { generateDataset } from '../src/seed/generate.js'
import { removeSqliteFiles } from './sqlite-files.js'

/**
 * Bump when the seed generator or the schema changes in a way that makes an old cached file
 * measure something else; `--rebuild` does the same for one run.
 */
const FIXTURE_VERSION = 1

/** The company whose users both routes list: the seed gives company 1 `scale` rows of each resource. */
export const BENCH_COMPANY_ID = 1

export interface FixtureOptions {
  scale: number
  cacheDir: string
  rebuild: boolean
  log: (line: string) => void
}

/**
 * The path of a seeded SQLite file for `scale`, building it on first use.
 *
 * Seeding 100,000 rows of every resource takes a while, so the file is cached under
 * `cacheDir`, keyed by scale and fixture version. It is built under a temporary name and
 * renamed only when complete, so an interrupted build is never mistaken for a cached one.
 */
export async function ensureFixture(options: FixtureOptions): Promise<string> {
  mkdirSync(options.cacheDir, { recursive: true })
  const path = join(options.cacheDir, `workforce-scale-${options.scale}-v${FIXTURE_VERSION}.db`)
  if (options.rebuild) removeSqliteFiles(path)

  if (existsSync(path)) {
    const users = await countUsers(path)
    if (users >= options.scale) {
      options.log(`fixture: cached ${path} (${users} users in company ${BENCH_COMPANY_ID})`)
      return path
    }
    options.log(`fixture: ${path} has ${users} users, expected >= ${options.scale}; rebuilding`)
    removeSqliteFiles(path)
  }

  const building = `${path}.building-${process.pid}`
  removeSqliteFiles(building)
  const started = performance.now()
  options.log(`fixture: seeding scale ${options.scale} into ${path} (first run only; this takes a while)`)
  const adapter = await openSqliteAdapter({ filename: building })
  try {
    await adapter.loadDataset(generateDataset({ scale: options.scale }))
    adapter.database.pragma('wal_checkpoint(TRUNCATE)')
  } finally {
    await adapter.close()
  }
  removeSqliteFiles(building, { keepMain: true })
  renameSync(building, path)
  options.log(`fixture: seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return path
}

/** Opens through the adapter so pending migrations run here, once, not racing in two servers. */
async function countUsers(path: string): Promise<number> {
  const adapter = await openSqliteAdapter({ filename: path })
  try {
    const row = adapter.database
      .prepare('select count(*) as total from wfa_memberships where company_id = ?')
      .get(BENCH_COMPANY_ID) as { total: number }
    return row.total
  } finally {
    await adapter.close()
  }
}
