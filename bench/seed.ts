/**
 * `workforce-api seed` timed as a user runs it: the built CLI (`npx tsup` first), a fresh
 * SQLite file or a Postgres database of its own each run, wall time and the machine's load.
 *
 *   npx tsx bench/seed.ts --scale 1000000 --runs 3
 *   npx tsx bench/seed.ts --scale 1000000 --postgres postgres://postgres@127.0.0.1:5432/postgres
 *
 * With `--postgres`, each run creates `wfa_seed_bench_<pid>` through that URL and drops it
 * afterwards; the URL's own database is never touched. `--cli` times another build (a copy of
 * `dist/` from before a change, say).
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '1' },
    postgres: { type: 'string' },
    cli: { type: 'string', default: join(import.meta.dirname, '../dist/cli.js') },
  },
})
const scale = Number(values.scale)
const runs = Number(values.runs)
if (!existsSync(values.cli)) throw new Error(`${values.cli} not found: build first (npx tsup)`)

/** Runs the CLI's seed and resolves with its wall time in seconds and its summary line. */
function seed(db: string): Promise<{ seconds: number; summary: string }> {
  const started = performance.now()
  const child = spawn(process.execPath, [values.cli, 'seed', '--db', db, '--scale', String(scale)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let stdout = ''
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`seed exited with ${code}`))
      else resolve({ seconds: (performance.now() - started) / 1000, summary: stdout.trim().split('\n').pop() ?? '' })
    })
  })
}

/** A database of this run's own on the server `url` names, dropped by the returned function. */
async function postgresDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `wfa_seed_bench_${process.pid}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${name}`)
  await admin.query(`CREATE DATABASE ${name}`)
  const target = new URL(url)
  target.pathname = `/${name}`
  return {
    url: target.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`)
      await admin.end()
    },
  }
}

const load = () => loadavg().map((value) => value.toFixed(2)).join(' ')
for (let run = 1; run <= runs; run++) {
  const before = load()
  let result: { seconds: number; summary: string }
  if (values.postgres !== undefined) {
    const database = await postgresDatabase(values.postgres)
    try {
      result = await seed(database.url)
    } finally {
      await database.drop()
    }
  } else {
    const directory = mkdtempSync(join(tmpdir(), 'wfa-seed-bench-'))
    try {
      result = await seed(join(directory, 'seed.db'))
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  }
  const backend = values.postgres === undefined ? 'sqlite' : 'postgres'
  console.log(`${backend} scale ${scale} run ${run}: ${result.seconds.toFixed(1)} s wall (load ${before} → ${load()}); ${result.summary}`)
}
