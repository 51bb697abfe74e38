/**
 * `npm run bench`: the plugin's `GET /v1/users` against a bare Fastify route over the same
 * SQLite file, `KeyVerifier` micro-benchmarks, and one tenant's expensive reads against
 * another's cheap ones on SQLite (`--only contention`), and lists at 1,000,000 rows on SQLite and
 * Postgres (`--only lists`, bench/scale.ts), and every list and by-id route through the built CLI's `serve` against
 * hand-written routes, with the 304 path, on SQLite and Postgres (`--only pages`, bench/pages.ts; a plain run
 * measures users and company only), and `serve`'s memory under a 10-minute mixed load on
 * both (`--only soak`, bench/soak.ts; never part of a plain run), and webhook deliveries to
 * healthy endpoints beside one company's hanging or failing ones (`--only deliveries`,
 * bench/webhook-fairness.ts; never part of a plain run either), and writes to a fresh `serve` on
 * Postgres against an unwarmed pool (`--only cold-start`, bench/cold-start.ts; opt-in too). Figures are reported, never asserted: the
 * exit code is non-zero only when something fails (a server, a request, a mismatch).
 * Method and recorded figures: docs/benchmarks.md.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readSelfTimes } from './cpu-profile.js'
import { ensureFixture } from './fixture.js'
import { runHttpUsersBench, type HttpBenchResult } from './http-users.js'
import { runKeyVerificationBench, type KeyBenchRow } from './key-verification.js'
import { parseBenchOptions, USAGE, type BenchOptions } from './options.js'
import { compare, httpTable, keyTable, profileTable, type Comparison, type ProfiledTarget } from './report.js'
import { contentionTable, runContentionBench, type ContentionResult } from './sqlite-contention.js'
import type { TargetKind } from './server-protocol.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

async function main(): Promise<void> {
  let options: BenchOptions
  try {
    options = parseBenchOptions(process.argv.slice(2))
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`)
    process.exitCode = 1
    return
  }
  if (options.help) {
    console.log(USAGE)
    return
  }
  const log = (line: string) => console.error(line)
  const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`
  log(`bench: ${machine}`)

  const http: Array<{ result: HttpBenchResult; comparison: Comparison }> = []
  const profiles: Array<{ companyId: number; plugin: ProfiledTarget; bare: ProfiledTarget }> = []
  if (options.http) {
    const filename = await ensureFixture({ scale: options.scale, cacheDir: options.cacheDir, rebuild: options.rebuild, log })
    for (const companyId of options.companies) {
      const profileDir = options.profile ? mkdtempSync(join(tmpdir(), 'wfa-bench-profile-')) : undefined
      const result = await runHttpUsersBench({
        filename,
        companyId,
        perPage: options.perPage,
        connections: options.connections,
        durationS: options.durationS,
        warmupS: options.warmupS,
        rounds: options.rounds,
        log,
        ...(profileDir === undefined ? {} : { profileDir }),
      })
      http.push({ result, comparison: compare(result) })
      if (profileDir !== undefined) {
        const profiled = (kind: TargetKind): ProfiledTarget => {
          const rounds = result.measurements.filter((m) => m.target === kind)
          const paths = rounds.map((m) => m.profilePath as string)
          const requests = rounds.reduce((n, m) => n + m.requests, 0)
          const cpu = rounds.reduce((n, m) => n + m.serverCpuMicrosPerRequest * m.requests, 0)
          return { times: readSelfTimes(paths, ROOT), cpuMicrosPerRequest: cpu / requests }
        }
        profiles.push({ companyId, plugin: profiled('plugin'), bare: profiled('bare') })
        log(`bench: CPU profiles in ${profileDir}`)
      }
    }
  }

  let keys: KeyBenchRow[] | undefined
  if (options.keys) {
    mkdirSync(options.cacheDir, { recursive: true })
    keys = await runKeyVerificationBench({ dir: options.cacheDir, timeMs: options.keyTimeMs, log })
  }

  let contention: ContentionResult[] | undefined
  if (options.contention) {
    const filename = await ensureFixture({ scale: options.scale, cacheDir: options.cacheDir, rebuild: options.rebuild && !options.http, log })
    contention = await runContentionBench({ filename, durationS: options.durationS, log })
  }

  if (options.lists) {
    // Its own process and its own seeded databases (1,000,000 rows): it prints its own table.
    log('bench: lists at scale (bench/scale.ts)')
    execFileSync(join(ROOT, 'node_modules', '.bin', 'tsx'), ['bench/scale.ts'], { cwd: ROOT, stdio: 'inherit' })
  }

  if (options.pages) {
    // Its own process, with serve and the baseline as children; it prints its own table.
    log('bench: pages through serve against hand-written routes (bench/pages.ts)')
    const quick = options.pagesQuick ? ['--routes', 'users,company'] : []
    const profile = options.profile ? ['--profile'] : []
    execFileSync(join(ROOT, 'node_modules', '.bin', 'tsx'), ['bench/pages.ts', '--backends', options.backends, ...quick, ...profile], {
      cwd: ROOT,
      stdio: 'inherit',
    })
  }

  if (options.soak) {
    // Its own process: the built CLI's `serve` as a child, RSS sampled; it prints its own table.
    log('bench: memory soak (bench/soak.ts)')
    execFileSync(join(ROOT, 'node_modules', '.bin', 'tsx'), ['bench/soak.ts', '--minutes', String(options.soakMinutes)], { cwd: ROOT, stdio: 'inherit' })
  }

  if (options.deliveries) {
    // Its own process, with a server process per mode and backend; it prints its own table.
    log('bench: delivery fairness (bench/webhook-fairness.ts)')
    execFileSync(join(ROOT, 'node_modules', '.bin', 'tsx'), ['bench/webhook-fairness.ts'], { cwd: ROOT, stdio: 'inherit' })
  }

  if (options.coldStart) {
    // Its own process, with fresh server processes per round and mode; it prints its own table.
    log('bench: cold start on Postgres (bench/cold-start.ts)')
    execFileSync(join(ROOT, 'node_modules', '.bin', 'tsx'), ['bench/cold-start.ts'], { cwd: ROOT, stdio: 'inherit' })
  }

  const settings =
    `scale ${options.scale}, per_page ${options.perPage}, ${options.connections} connections, ` +
    `${options.rounds} rounds × (${options.warmupS} s warm-up + ${options.durationS} s) per target`
  const sections = [`${machine}\n${settings}`]
  for (const { result, comparison } of http) sections.push(httpTable(result, comparison))
  if (keys !== undefined) sections.push(keyTable(keys))
  if (contention !== undefined) sections.push(contentionTable(contention, { scale: options.scale, durationS: options.durationS }))
  for (const { companyId, plugin, bare } of profiles) sections.push(profileTable(companyId, plugin, bare))
  console.log(`\n${sections.join('\n\n')}`)

  if (options.json !== undefined) {
    writeFileSync(options.json, `${JSON.stringify({ machine, options, http, keys, contention }, null, 2)}\n`)
    log(`bench: figures written to ${options.json}`)
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exitCode = 1
})
