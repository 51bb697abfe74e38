import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { planConformance } from '../../src/conformance/plan.js'
import { DAY_TIME_ZONES, useProcessTimeZone } from '../../src/conformance/time-zones.js'
import { VITEST_MISSING, loadVitest } from '../../src/conformance/vitest-api.js'

const source = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))

/** Minutes east of UTC that `Date` uses now, on 2026-01-15. */
const localOffset = () => -new Date(Date.UTC(2026, 0, 15, 12)).getTimezoneOffset()

describe('where the conformance suite can run, and what it says where it cannot', () => {
  it('outside vitest, describeStorageConformance says to run the file with vitest instead of failing inside vitest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfa-conformance-'))
    try {
      const script = join(dir, 'outside-vitest.mts')
      writeFileSync(
        script,
        `import { describeStorageConformance } from ${JSON.stringify(source('src/conformance/index.ts'))}\n` +
          "try { describeStorageConformance({ name: 'plain node', create: async () => { throw new Error('never called') } }) }\n" +
          'catch (error) { console.log(error.message); process.exitCode = 3 }\n',
      )
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST')))
      const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { env, cwd: source('.') }).catch((error: { code: number; stdout: string }) => error)
      expect({ code: 'code' in run ? run.code : 0, stdout: run.stdout }).toEqual({
        code: 3,
        stdout: expect.stringContaining('describeStorageConformance registers vitest tests: call it at the top level of a test file and run that file with vitest'),
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('without vitest installed, loading the suite names the missing peer dependency', async () => {
    const missing = Object.assign(new Error("Cannot find package 'vitest' imported from /app/node_modules/fastify-workforce-api/dist/conformance/index.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    })
    const refused = (await loadVitest(() => Promise.reject(missing)).catch((error: unknown) => error)) as Error
    expect({ message: refused.message, cause: refused.cause }).toEqual({ message: VITEST_MISSING, cause: missing })
    expect(VITEST_MISSING).toContain('npm install --save-dev vitest')
    // Any other failure while loading vitest is vitest's own, passed on as it is.
    const broken = new SyntaxError('Unexpected token in vitest/dist/index.js')
    expect(await loadVitest(() => Promise.reject(broken)).catch((error: unknown) => error)).toBe(broken)
  })

  it('switches the process time zone for a day-sensitive group and puts the previous one back', () => {
    const before = { tz: process.env.TZ, offset: localOffset() }
    const seen: Record<string, number> = {}
    for (const zone of DAY_TIME_ZONES) {
      const restore = useProcessTimeZone(zone)
      seen[zone] = localOffset()
      restore()
    }
    expect(seen).toEqual({ 'Pacific/Kiritimati': 14 * 60, 'America/Los_Angeles': -8 * 60, 'Asia/Kolkata': 5 * 60 + 30 })
    expect({ tz: process.env.TZ, offset: localOffset() }).toEqual(before)
  })

  it('in a worker thread, which cannot change its time zone, the day-sensitive groups say to use the forks pool', async () => {
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads')
       import('tsx/esm/api')
         .then(({ register }) => { register(); return import(${JSON.stringify(source('src/conformance/time-zones.ts'))}) })
         .then((zones) => { try { zones.useProcessTimeZone('Pacific/Kiritimati'); parentPort.postMessage('switched') } catch (error) { parentPort.postMessage(error.message) } })
         .catch((error) => parentPort.postMessage('could not load: ' + error.message))`,
      { eval: true },
    )
    try {
      const message = await new Promise<string>((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
      })
      expect(message).toMatch(/setting process\.env\.TZ had no effect in this process.*pool: 'forks'/)
    } finally {
      await worker.terminate()
    }
  })

  it('registers each day-sensitive group once per time zone, and every other group once', () => {
    const plan = planConformance({
      name: 'memory',
      create: async () => {
        const adapter = createMemoryAdapter()
        return { ...adapter, loadDataset: adapter.loadDataset, close: adapter.close }
      },
    })
    const zoned = ['day windows on day fields', 'shift windows (instant bounds)', 'to-do due windows (all-day days and timed instants)', 'value fidelity']
    for (const title of zoned) {
      expect(plan.groups.filter((group) => group.group.title === title).map((group) => group.title)).toEqual(DAY_TIME_ZONES.map((zone) => `${title} (TZ=${zone})`))
    }
    const once = plan.groups.filter((group) => !zoned.includes(group.group.title))
    expect(once.every((group) => group.timeZone === undefined && group.title === group.group.title)).toBe(true)
    expect(new Set(once.map((group) => group.title)).size).toBe(once.length)
  })
})
