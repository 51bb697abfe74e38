import { describe, expect, it } from 'vitest'
import { CONFORMANCE_GROUPS } from '../../src/conformance/groups/index.js'
import { runConformance, type ConformanceFailure } from '../../src/conformance/runner.js'
import { useProcessTimeZone } from '../../src/conformance/time-zones.js'
import { BROKEN_ADAPTERS, brokenSubject, type BrokenAdapter } from './broken-adapters/index.js'

/** One line per failure: where, and the first line of the error. */
function describeFailure(failure: ConformanceFailure): string {
  const message = failure.error instanceof Error ? `${failure.error.name}: ${failure.error.message}` : String(failure.error)
  return `${failure.group} › ${failure.test}: ${message.split('\n')[0]}`
}

function run(broken: Pick<BrokenAdapter, 'break'>, name: string, groups?: readonly string[]) {
  return runConformance(
    { name, create: async () => brokenSubject(broken) },
    { ...(groups === undefined ? {} : { groups }), bail: groups !== undefined, timeoutMs: 10_000 },
  )
}

describe('the catalogue of broken adapters', () => {
  it('holds at least 40 distinct bugs, each aimed at a group of the suite', () => {
    const names = BROKEN_ADAPTERS.map((broken) => broken.name)
    expect(names.length).toBeGreaterThanOrEqual(40)
    expect(names.filter((name, index) => names.indexOf(name) !== index), 'duplicate names').toEqual([])
    const titles = new Set(CONFORMANCE_GROUPS.map((group) => group.title))
    expect(BROKEN_ADAPTERS.filter((broken) => !titles.has(broken.caughtBy)).map((broken) => broken.name), 'adapters naming an unknown group').toEqual([])
    const areas = new Set(BROKEN_ADAPTERS.map((broken) => broken.area))
    const wanted = ['paging', 'totals', 'ordering', 'filters', 'time zones', 'money', 'values', 'tenant isolation', 'keys', 'modules', 'writes', 'idempotency', 'events', 'webhooks outbox', 'audit', 'usage'] as const
    expect(wanted.filter((area) => !areas.has(area)), 'areas without a broken adapter').toEqual([])
  })

  // Why the day-sensitive groups run under other time zones: in UTC, where CI runs, these bugs
  // pass a group that reads every field of every record (lookup by id runs in the process's zone).
  it('the time-zone bugs pass in UTC, so only the groups run under other zones catch them', async () => {
    const hidden = BROKEN_ADAPTERS.filter((broken) => ['day-read-through-local-midnight', 'day-read-with-local-getters', 'instant-text-without-zone'].includes(broken.name))
    expect(hidden.length).toBe(3)
    const restore = useProcessTimeZone('UTC')
    try {
      for (const broken of hidden) {
        const result = await run(broken, `broken: ${broken.name}`, ['lookup by id'])
        expect(result.failures.map(describeFailure), `${broken.name} read in UTC`).toEqual([])
      }
    } finally {
      restore()
    }
  })

  // The control: the same wrapper without a bug passes every group, so each failure below is the bug's.
  it('the reference adapter behind the same wrapper passes every group', async () => {
    const result = await run({ break: () => ({}) }, 'memory, unbroken')
    expect(result.failures.map(describeFailure)).toEqual([])
    // The memory adapter has no `seek`: those tests, and only those, do not apply.
    expect([...new Set(result.notApplicable.map((entry) => entry.group))]).toEqual(['list seek'])
    expect(result.ran).toBeGreaterThan(200)
  })
})

describe.each(BROKEN_ADAPTERS)('broken adapter $name ($area)', (broken) => {
  it(`is caught by "${broken.caughtBy}"`, async () => {
    const result = await run(broken, `broken: ${broken.name}`, [broken.caughtBy])
    expect(result.failures.length, `"${broken.caughtBy}" passed an adapter whose bug is: ${broken.bug} (${result.ran} tests ran)`).toBeGreaterThan(0)
    const caught = result.failures.map(describeFailure)
    // Caught by an assertion about the adapter, not by the suite tripping over itself.
    expect(caught.filter((line) => line.includes('conformance suite bug')), 'failures that are the suite\'s own').toEqual([])
  })
})
