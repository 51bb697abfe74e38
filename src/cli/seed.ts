import { SEED_COMPANIES, seedRowCount } from '../seed/generate.js'
import { DB_FLAG, JSON_FLAG, parseFlags, positiveInteger, required } from './flags.js'
import { jsonOnlyFlag, usageText, type HelpTopic } from './help-format.js'
import { CliError, describeDb, migrateDatabase, withAdapter } from './open-adapter.js'
import { jsonOnly, type CliOutput } from './output.js'
import { seedProgress } from './progress.js'

/** The smallest `--scale`: the generator's special rows (DST edges, special amounts) need room. */
const MIN_SCALE = 40

const DB_CREATED_FLAG: readonly [string, string] = ['--db <file|postgres-url>', 'a SQLite file (created if missing) or a postgres:// URL of an existing database']

export const SEED_HELP: HelpTopic = {
  usage: ['workforce-api seed --db <file|postgres-url> [--scale N] [--json]'],
  summary:
    'Migrates the database (creating a SQLite file if needed) and loads the demo data set: three companies, ' +
    'company 1 with N records of every list resource, company 2 with 45, company 3 empty. ' +
    'One transaction: if it fails, no data is left behind.',
  flags: [
    DB_CREATED_FLAG,
    ['--scale <n>', `records of every list resource for company 1; at least ${MIN_SCALE} (default ${MIN_SCALE})`],
    jsonOnlyFlag('{"companies":[…]}; no progress bar'),
  ],
  sections: [
    {
      heading: 'notes',
      lines: [
        'On a terminal a progress bar shows rows per second. Rows are made as they are written, so memory',
        'stays flat at any scale (--scale 1000000 writes about 9 million rows).',
        'A database that already holds the seed data is refused.',
      ],
    },
  ],
  examples: ['workforce-api seed --db demo.db', 'workforce-api seed --db postgres://app@localhost/workforce --scale 100000'],
}

export const MIGRATE_HELP: HelpTopic = {
  usage: ['workforce-api migrate --db <file|postgres-url> [--json]'],
  summary:
    'Creates the schema, or brings it to the latest version, and loads no data. Run it on a new database before ' +
    'serve, keys, modules and webhooks (they refuse a database that is not migrated), and after upgrading.',
  flags: [DB_CREATED_FLAG, jsonOnlyFlag('{"applied":[…]}')],
  examples: ['workforce-api migrate --db workforce.db', 'workforce-api migrate --db postgres://app@localhost/workforce'],
}

/** `workforce-api seed`: migrate, then stream the demo data set into the database in one transaction. */
export async function seed(args: string[], output: CliOutput): Promise<void> {
  const usage = usageText('seed', SEED_HELP)
  const flags = parseFlags(args, { ...DB_FLAG, ...JSON_FLAG, scale: { type: 'string' } }, usage)
  const out = jsonOnly(output, flags.json)
  const db = required(flags.db, 'db', usage)
  const scale = flags.scale === undefined ? undefined : positiveInteger(flags.scale, 'scale')
  if (scale !== undefined && scale < MIN_SCALE) throw new CliError(`--scale must be at least ${MIN_SCALE}`, 2)
  const options = scale === undefined ? {} : { scale }
  await withAdapter(
    db,
    async (adapter) => {
      if ((await adapter.storage.company(SEED_COMPANIES[0]!.id)) !== null) {
        throw new CliError(`${describeDb(db)} already holds seed data; seed an empty database`)
      }
      const total = seedRowCount(options)
      const progress = seedProgress(total, { enabled: out.interactive === true && flags.json !== true })
      const started = Date.now()
      try {
        await adapter.loadSeed(options, progress)
      } finally {
        progress.stop()
      }
      const seconds = (Date.now() - started) / 1000
      const companies = SEED_COMPANIES.map(({ id, name, timezone }) => ({ id, name, timezone }))
      for (const company of companies) out.line(`company ${company.id}: ${company.name} (${company.timezone})`)
      out.line(`${total.toLocaleString('en-US')} rows in ${seconds.toFixed(1)} s (${Math.round(total / Math.max(seconds, 0.001)).toLocaleString('en-US')} rows/s)`)
      if (flags.json) out.json({ companies })
    },
    { create: true },
  )
}

/** `workforce-api migrate`: the schema only. */
export async function migrate(args: string[], output: CliOutput): Promise<void> {
  const usage = usageText('migrate', MIGRATE_HELP)
  const flags = parseFlags(args, { ...DB_FLAG, ...JSON_FLAG }, usage)
  const out = jsonOnly(output, flags.json)
  const db = required(flags.db, 'db', usage)
  const applied = await migrateDatabase(db)
  if (applied.length === 0) out.line(`${describeDb(db)} is at the latest schema; nothing to do`)
  else out.line(`${describeDb(db)}: applied ${applied.length} migration(s): ${applied.join(', ')}`)
  if (flags.json) out.json({ applied })
}
