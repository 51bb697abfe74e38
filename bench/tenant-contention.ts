/**
 * One tenant loops a valid query four at a time; another tenant's cheap GET is timed alone and
 * under that load, in one run, on SQLite (read workers on, the default) and Postgres (issue 21,
 * item 5). Figures are reported, never asserted.
 *
 *   npx tsx bench/tenant-contention.ts                               # both backends, every case
 *   npx tsx bench/tenant-contention.ts --backend sqlite --cases moderate,expensive --duration 15
 *   npx tsx bench/tenant-contention.ts --modes in-process,off-loop   # SQLite without read workers too
 *
 * The SQLite file is `npm run bench`'s cached fixture (built on first use; `--cache-dir`); the
 * Postgres database `wfa_bench_contention_<scale>_v1` on WORKFORCE_TEST_PG_URL's server, seeded on
 * first use. Each run's servers read a copy, migrated to the schema of the tree under test, so
 * one fixture serves "before" and "after" trees alike: seed it with the older tree.
 */
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { existsSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import type { ReadMode } from './contention-server.js'
import { ensureFixture } from './fixture.js'
import { ensurePostgresFixture } from './postgres-fixture.js'
import { CONTENTION_CASES, contentionTable, runContentionBench, type ContentionCase } from './sqlite-contention.js'

/** `bench/fixture.ts`'s version of its cached SQLite file. */
const FIXTURE_VERSION = 1
const ADMIN_URL = process.env.WORKFORCE_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres'

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      backend: { type: 'string', default: 'both' },
      modes: { type: 'string' },
      cases: { type: 'string', default: Object.keys(CONTENTION_CASES).join(',') },
      duration: { type: 'string', default: '10' },
      scale: { type: 'string', default: '100000' },
      'cache-dir': { type: 'string', default: join(tmpdir(), 'fastify-workforce-api-bench') },
      json: { type: 'string' },
    },
  })
  const log = (line: string) => console.error(line)
  const scale = Number(values.scale)
  const durationS = Number(values.duration)
  const backend = values.backend as string
  const modes = (values.modes?.split(',') ??
    [...(backend === 'postgres' ? [] : ['off-loop']), ...(backend === 'sqlite' ? [] : ['postgres'])]) as ReadMode[]
  const cases = (values.cases as string).split(',') as ContentionCase[]
  for (const name of cases) if (!(name in CONTENTION_CASES)) throw new TypeError(`--cases: unknown case "${name}"`)
  const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`
  log(`bench: ${machine}`)
  // A cached file is used as it is: `ensureFixture` would open it, and so migrate it to this
  // tree's schema, which an older tree's run could then not open.
  const cached = join(values['cache-dir'] as string, `workforce-scale-${scale}-v${FIXTURE_VERSION}.db`)
  const filename = existsSync(cached) ? cached : await ensureFixture({ scale, cacheDir: values['cache-dir'] as string, rebuild: false, log })
  const postgresUrl = modes.includes('postgres') ? await ensurePostgresFixture({ adminUrl: ADMIN_URL, scale, log }) : undefined
  const results = await runContentionBench({ filename, ...(postgresUrl === undefined ? {} : { postgresUrl }), durationS, modes, cases, log })
  console.log(`\n${machine}\n${contentionTable(results, { scale, durationS })}`)
  if (values.json !== undefined) {
    writeFileSync(values.json, `${JSON.stringify({ machine, results }, null, 2)}\n`)
    log(`bench: figures written to ${values.json}`)
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
