import { join } from 'node:path'
import { expect, it } from 'vitest'
import { spawnUntil } from '../helpers/child-process.js'

const FIXTURE = join(import.meta.dirname, 'fixtures/gc-deadline-process.ts')
const TIMEOUT_MS = 1_000
/** What an attempt may take beyond its timeout: recording it, and a loaded machine. */
const SLACK_MS = 1_000

// Issue 21: `AbortSignal.any([AbortSignal.timeout(ms), …])` can be collected before it fires
// (nodejs/node#57736), and hanging attempts then never end. The fixture forces a full GC every
// 50 ms in a process of its own (`--expose-gc`; vitest's workers run without it).
it('every attempt to a receiver that never answers ends at its timeout while the garbage collector runs', async () => {
  const env = { ...process.env, TIMEOUT_MS: String(TIMEOUT_MS), WAIT_MS: String(6 * TIMEOUT_MS) }
  const { child, match } = await spawnUntil('gc-deadline', process.execPath, ['--expose-gc', '--import', 'tsx', FIXTURE], { env, until: /^\{.*\}$/m })
  const { received, settled } = JSON.parse(match[0]) as { received: number; settled: Array<{ durationMs: number; error: string | null }> }
  child.kill()
  expect(received, 'requests the hanging receiver got').toBe(20)
  expect(settled, 'attempts recorded (an attempt whose deadline was collected never is)').toHaveLength(20)
  for (const attempt of settled) {
    expect(attempt.error).toBe(`timed out: no response within ${TIMEOUT_MS} ms`)
    expect(attempt.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5)
    expect(attempt.durationMs).toBeLessThanOrEqual(TIMEOUT_MS + SLACK_MS)
  }
}, 30_000)
