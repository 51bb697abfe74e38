import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { runFuzz, type FuzzReport, type FuzzSettings } from './fuzz-run.js'
import { fuzzSeed, startServer, type AttackServer } from './harness.js'

/**
 * Issue 8: the fuzz campaign of fuzz.test.ts on Postgres. With memory and SQLite it makes over
 * 10,000 generated requests per CI run. Replay a run with WORKFORCE_FUZZ_SEED=<seed>.
 */
const { seed, origin } = fuzzSeed()
const SETTINGS: FuzzSettings = { target: 3_000, batchSize: 50, readConcurrency: 3 }

describePostgres('fuzzing every route over HTTP (postgres)', () => {
  const database = useTestDatabase()
  let server: AttackServer
  let report: FuzzReport | undefined
  beforeAll(async () => {
    console.log(`[attack] fuzz seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}`)
    server = await startServer(await openPostgresAdapter({ connectionString: database.current.url }))
  })
  afterAll(async () => {
    await server?.close()
  })

  it('answers every generated request without a 5xx, in the envelope, within 2 s, and writes nothing half-way', async () => {
    const started = performance.now()
    try {
      report = await runFuzz(server, seed, SETTINGS)
    } catch (error) {
      throw new Error(`[attack postgres] fuzz seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}\n${(error as Error).message}`, { cause: error })
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    console.log(
      `[attack postgres] ${report.generated} generated + ${report.verification} checking requests in ${seconds} s; ` +
        `statuses ${JSON.stringify(report.byStatus)}; 2xx writes ${JSON.stringify(report.writes)}; slowest ${report.slowestMs.toFixed(0)} ms`,
    )
    expect(report.generated).toBeGreaterThanOrEqual(SETTINGS.target)
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
