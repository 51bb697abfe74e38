import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { killed } from '../helpers/child-process.js'

const FIXTURE = join(import.meta.dirname, 'fixtures/full-wake-process.ts')

let child: ChildProcess | undefined
afterEach(async () => {
  // A blocked loop never exits on its own: the test ends it, whatever happened.
  if (child !== undefined) await killed(child)
  child = undefined
})

/** The fixture's JSON line, or a failure once it exits without one or `ms` pass. */
function lineOf(spawned: ChildProcess, ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: the fixture's event loop is blocked (${output})`)), ms)
    spawned.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const line = /^\{.*\}$/m.exec(output)
      if (line !== null) {
        clearTimeout(timer)
        resolve(line[0])
      }
    })
    spawned.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    spawned.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the fixture exited with ${code}: ${output}`))
    })
  })
}

// A wake-up (an event committed) while every place of the dispatcher is taken must wait for a
// place, not turn the loop again at once: each turn then found no room, claimed nothing, and
// turned again without yielding, so nothing else in the process ever ran again (found in the
// spread drain of bench/webhooks.ts, at 100 % CPU). In a process of its own, so a blocked loop
// fails this test instead of blocking the test runner. The fixture answers in 3 s on a quiet
// machine and 5 s beside six CPU burners; 20 s leaves room for a loaded CI.
it('a wake-up while every place is taken waits for a place, and the process keeps running', async () => {
  child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env })
  const { received, claimsAfterWake } = JSON.parse(await lineOf(child, 20_000)) as { received: number; claimsAfterWake: number }
  expect(received, 'attempts on the wire: the concurrency').toBe(4)
  expect(claimsAfterWake, 'claims with no place free').toBe(0)
}, 30_000)
