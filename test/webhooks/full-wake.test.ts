import { join } from 'node:path'
import { expect, it } from 'vitest'
import { killed, spawnUntil } from '../helpers/child-process.js'

const FIXTURE = join(import.meta.dirname, 'fixtures/full-wake-process.ts')

// A wake-up (an event committed) while every place of the dispatcher is taken must wait for a
// place, not turn the loop again at once: each turn then found no room, claimed nothing, and
// turned again without yielding, so nothing else in the process ever ran again (found in the
// spread drain of bench/webhooks.ts, at 100 % CPU). In a process of its own, so a blocked loop
// fails this test instead of blocking the test runner. The fixture answers in 3 s on a quiet
// machine and 5 s beside six CPU burners; 20 s leaves room for a loaded CI, after which the
// fixture is killed and the test fails.
it('a wake-up while every place is taken waits for a place, and the process keeps running', async () => {
  const { child, match } = await spawnUntil('full-wake', process.execPath, ['--import', 'tsx', FIXTURE], {
    env: process.env,
    until: /^\{.*\}$/m,
    withinMs: 20_000,
  })
  await killed(child)
  const { received, claimsAfterWake } = JSON.parse(match[0]) as { received: number; claimsAfterWake: number }
  expect(received, 'attempts on the wire: the concurrency').toBe(4)
  expect(claimsAfterWake, 'claims with no place free').toBe(0)
}, 30_000)
