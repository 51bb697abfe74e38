import type { ConformanceGroup } from './group.js'
import { CONFORMANCE_GROUPS } from './groups/index.js'
import { NotApplicable } from './harness.js'
import { planConformance } from './plan.js'
import type { ConformanceOptions } from './subject.js'

/** A test that did not pass: where, and the error (an `AssertionError`, usually) it ended with. */
export interface ConformanceFailure {
  /** The planned group's title, ` (TZ=…)` included. */
  group: string
  test: string
  error: unknown
}

export interface RunOptions {
  /** Only the groups with these titles (without the ` (TZ=…)` suffix); default: every group. */
  groups?: readonly string[]
  /** Stop at the first failure. Default `false`. */
  bail?: boolean
  /** A test (with its subject's creation, fixture load and close) that takes longer fails. Default 10 s. */
  timeoutMs?: number
}

/** A test that does not apply to the subject (it lacks an optional capability), and why. */
export interface ConformanceNotApplicable {
  group: string
  test: string
  reason: string
}

export interface RunResult {
  /** Tests run, failed and not applicable ones included. */
  ran: number
  failures: ConformanceFailure[]
  notApplicable: ConformanceNotApplicable[]
}

class TestTimeout extends Error {
  constructor(ms: number) {
    super(`conformance suite: the test did not finish within ${ms} ms`)
    this.name = 'TestTimeout'
  }
}

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TestTimeout(ms)), ms)
  })
  // A test that times out keeps running in the background; its late failure is not a new one.
  work.catch(() => {})
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

/**
 * Runs the suite's tests as plain async functions, one after another, each on a fresh subject
 * (and in its group's process time zone), and returns the failures instead of reporting them.
 * It needs vitest's `expect` but not its runner, so it can run many subjects inside one vitest
 * test: the catalogue of broken adapters (test/conformance/broken-adapters) proves with it that
 * the suite catches each of them.
 */
export async function runConformance(options: ConformanceOptions, run: RunOptions = {}): Promise<RunResult> {
  const wanted = run.groups
  if (wanted !== undefined) {
    const known = new Set(CONFORMANCE_GROUPS.map((group) => group.title))
    const unknown = wanted.filter((title) => !known.has(title))
    if (unknown.length > 0) throw new TypeError(`runConformance: unknown group ${unknown.map((title) => JSON.stringify(title)).join(', ')}`)
  }
  const groups: readonly ConformanceGroup[] = wanted === undefined ? CONFORMANCE_GROUPS : CONFORMANCE_GROUPS.filter((group) => wanted.includes(group.title))
  const plan = planConformance(options, groups)
  const timeoutMs = run.timeoutMs ?? 10_000
  const failures: ConformanceFailure[] = []
  const notApplicable: ConformanceNotApplicable[] = []
  let ran = 0
  for (const group of plan.groups) {
    for (const test of group.tests) {
      ran++
      let close: (() => Promise<void>) | undefined
      const attempt = (async () => {
        close = await plan.open(group.timeZone)
        await test.body()
      })()
      let failed = false
      try {
        await withTimeout(attempt, timeoutMs)
      } catch (error) {
        if (error instanceof NotApplicable) {
          notApplicable.push({ group: group.title, test: test.title, reason: error.message })
        } else {
          failed = true
          failures.push({ group: group.title, test: test.title, error })
        }
      } finally {
        // The subject this test opened (a timed-out test's too), whatever `current` is by now.
        await (close ?? (() => plan.close()))()
      }
      if (failed && run.bail === true) return { ran, failures, notApplicable }
    }
  }
  return { ran, failures, notApplicable }
}
