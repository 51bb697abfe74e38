import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runFuzz, type FuzzReport, type FuzzSettings } from './fuzz-run.js'
import { fuzzSeed, MEMORY, SQLITE, startServer, type AttackBackend, type AttackServer } from './harness.js'

/**
 * Issue 8: property-based fuzzing of every route over real HTTP, on memory and SQLite
 * (Postgres: fuzz.postgres.test.ts). Replay a run with WORKFORCE_FUZZ_SEED=<seed>.
 */
const { seed, origin } = fuzzSeed()
console.log(`[attack] fuzz seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}`)

/** Per backend; with Postgres's 3,000 (fuzz.postgres.test.ts), over 10,000 generated requests per CI run. */
const SETTINGS: Record<string, FuzzSettings> = {
  memory: { target: 4_000, batchSize: 50, readConcurrency: 3 },
  sqlite: { target: 3_500, batchSize: 50, readConcurrency: 3 },
}

describe.each([MEMORY, SQLITE])('fuzzing every route over HTTP ($name)', (backend: AttackBackend) => {
  let server: AttackServer
  let report: FuzzReport | undefined
  beforeAll(async () => {
    server = await startServer(backend)
  })
  afterAll(async () => {
    await server?.close()
  })

  it('answers every generated request without a 5xx, in the envelope, within 2 s, and writes nothing half-way', async () => {
    const settings = SETTINGS[backend.name] as FuzzSettings
    const started = performance.now()
    try {
      report = await runFuzz(server, seed, settings)
    } catch (error) {
      throw new Error(`[attack ${backend.name}] fuzz seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}\n${(error as Error).message}`, { cause: error })
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    console.log(
      `[attack ${backend.name}] ${report.generated} generated + ${report.verification} checking requests in ${seconds} s; ` +
        `statuses ${JSON.stringify(report.byStatus)}; 2xx writes ${JSON.stringify(report.writes)}; ` +
        `slowest ${report.slowestMs.toFixed(0)} ms`,
    )
    if (process.env.WORKFORCE_FUZZ_VERBOSE) console.log(JSON.stringify({ msByStatus: report.msByStatus, slowest: report.slowest }, null, 1))
    expect(report.generated).toBeGreaterThanOrEqual(settings.target)
  }, 120_000)

  it('sends Cache-Control: no-store and X-Content-Type-Options: nosniff on every response (docs/decisions.md)', () => {
    expect(report, 'the fuzz run above did not finish').toBeDefined()
    expect(report?.findings.headers ?? [], `seed ${seed}: responses without the headers`).toEqual([])
  })

  it('never sends a body in answer to HEAD (RFC 9110 9.3.2), even to a request it cannot parse', () => {
    expect(report, 'the fuzz run above did not finish').toBeDefined()
    expect(report?.findings.headBody ?? [], `seed ${seed}: HEAD requests answered with a body`).toEqual([])
  })
})
