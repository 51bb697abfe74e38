import { afterAll, beforeAll, expect, it } from 'vitest'
import { runFuzz, type FuzzReport, type FuzzSettings } from './fuzz-run.js'
import { fuzzSeed, type AttackServer } from './harness.js'

const { seed, origin } = fuzzSeed()

/**
 * The fuzz campaign's tests for one backend, defined inside that backend's `describe`: the run
 * itself, then each defect reported apart so one does not hide the others.
 */
export function defineFuzzTests(name: string, settings: FuzzSettings, open: () => Promise<AttackServer>): void {
  let server: AttackServer
  let report: FuzzReport | undefined
  beforeAll(async () => {
    console.log(`[attack] fuzz seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}`)
    server = await open()
  })
  afterAll(async () => {
    await server?.close()
  })

  it('answers every generated request without a 5xx, in the envelope, within 2 s, and writes nothing half-way', async () => {
    const started = performance.now()
    try {
      report = await runFuzz(server, seed, settings)
    } catch (error) {
      throw new Error(`[attack ${name}] fuzz seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}\n${(error as Error).message}`, { cause: error })
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    console.log(
      `[attack ${name}] ${report.generated} generated + ${report.verification} checking requests in ${seconds} s; ` +
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
}
