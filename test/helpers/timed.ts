import { performance } from 'node:perf_hooks'

/**
 * Runs `work` and tells how long it took and how it ended: its value, or what it threw (never
 * rethrown), so a test can assert both the outcome and the time to it.
 *
 * @example
 * const { ms, outcome } = await timed(() => sql`select pg_sleep(3)`.execute(adapter.db))
 * expect(outcome).toBeInstanceOf(StatementTimeout)
 */
export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; outcome: T | unknown }> {
  const started = performance.now()
  let outcome: T | unknown
  try {
    outcome = await work()
  } catch (error) {
    outcome = error
  }
  return { ms: performance.now() - started, outcome }
}
