/**
 * `fastify-workforce-api/conformance`: the test suite every storage adapter must pass — ours
 * (memory, SQLite, Postgres) and a host's own. Needs vitest (an optional peer dependency).
 */
import { afterEach, beforeEach, describe, it } from './vitest-api.js'
import { NotApplicable } from './harness.js'
import { planConformance } from './plan.js'
import type { ConformanceOptions } from './subject.js'

/**
 * Registers the storage conformance suite for one adapter, as vitest `describe` blocks.
 *
 * Before every test it calls `create()` for a fresh subject and loads the suite's own fixture
 * through `subject.loadDataset` (the seed dataset plus hand-made edge rows), so it knows every
 * expected answer; after the test it calls `subject.close()`. Expected answers are computed
 * from the fixture, never by another adapter — except in the end-to-end group, which builds the
 * whole HTTP app over the subject and over the in-memory reference adapter and requires
 * identical responses.
 *
 * Optional capabilities are declared in `supports` (all default to `true`; `touchLastUsed`
 * and `audit` to the value of `keyStore`, `events` and `webhooks` to that of `writes`): a group
 * whose capability is `false` is not registered; one declared `true` that the subject lacks fails.
 * A reader's optional `seek` is asked of each reader instead (an adapter may offer it on some
 * only): a `list seek` test whose reader has none is reported skipped, as not applicable.
 * Failures name the call and show expected and actual values side by side.
 *
 * The day-sensitive groups (day windows, shift windows, to-do due windows, value fidelity) run
 * once under each of `DAY_TIME_ZONES` — far east of UTC, west of it, and at a half-hour offset —
 * with `process.env.TZ` set around the subject's creation, load and test, so a day read back
 * through a local-midnight `Date` fails whatever zone the machine is in. That needs vitest's
 * default pool, `forks` (a worker thread cannot change its process's time zone; the suite says so).
 *
 * The write groups (`writes`, `idempotency`, `events`, `webhooks`) change the subject's data;
 * each test still gets a fresh subject, so they never leak into the read groups. The webhook
 * groups publish in a host transaction through the optional `hostTransaction` hook (see
 * `ConformanceSubject`).
 *
 * @example
 * // test/storage.conformance.test.ts, in the host application
 * import { describeStorageConformance } from 'fastify-workforce-api/conformance'
 * import { openMyAdapter } from '../src/workforce-adapter.js'
 *
 * describeStorageConformance({
 *   name: 'my-app (own schema)',
 *   create: async () => {
 *     const adapter = await openMyAdapter({ filename: ':memory:' })
 *     return {
 *       storage: adapter.storage,
 *       keyStore: adapter.keyStore,
 *       modules: adapter.modules,
 *       writes: adapter.writes,
 *       idempotency: adapter.idempotency,
 *       webhooks: adapter.webhooks,
 *       // The port only writes events; let the suite read the committed ones back.
 *       readEvents: () => adapter.changeEventsInIdOrder(),
 *       // Where webhooks.publish takes a transaction of the host's own.
 *       hostTransaction: (work) => adapter.db.transaction().execute(work),
 *       loadDataset: (dataset) => adapter.importDataset(dataset),
 *       close: () => adapter.close(),
 *     }
 *   },
 *   supports: { touchLastUsed: false },
 * })
 */
export function describeStorageConformance(options: ConformanceOptions): void {
  checkInsideVitest()
  const plan = planConformance(options)

  describe(`storage conformance: ${options.name}`, () => {
    for (const group of plan.groups) {
      describe(group.title, () => {
        // One hook each way, so the time zone is set before the subject is created and the
        // fixture loaded, whatever order a host's vitest config runs hooks in.
        beforeEach(async () => {
          await plan.open(group.timeZone)
        })
        afterEach(async () => {
          await plan.close()
        })
        for (const test of group.tests) {
          it(test.title, async (context) => {
            try {
              await test.body()
            } catch (error) {
              // A test about a capability this subject lacks: reported skipped, with the reason.
              if (error instanceof NotApplicable) context.skip(`not applicable: ${error.message}`)
              throw error
            }
          })
        }
      })
    }
  })
}

/**
 * vitest's `describe` outside a vitest run fails with `Cannot read properties of undefined`;
 * say instead what the suite needs. vitest sets `VITEST` in its workers.
 */
function checkInsideVitest(): void {
  const worker = (globalThis as { __vitest_worker__?: unknown }).__vitest_worker__
  if (process.env.VITEST === undefined && worker === undefined) {
    throw new Error(
      'describeStorageConformance registers vitest tests: call it at the top level of a test file and run that file with vitest ' +
        '(npx vitest run path/to/adapter.test.ts), not with node, jest, mocha or node:test. vitest (>= 3) is an optional peer dependency ' +
        'of fastify-workforce-api: npm install --save-dev vitest.',
    )
  }
}

export type { ConformanceOptions, ConformanceSubject, ConformanceSupports } from './subject.js'
export type { ConformanceContext } from './context.js'
export type { ConformanceGroup } from './group.js'
export type { ExpectedAnswers } from './expected.js'
export { CONFORMANCE_GROUPS } from './groups/index.js'
export { conformanceFixture, loadableCopy, type ConformanceFixture, type EdgeIds } from './fixture.js'
export { DAY_TIME_ZONES } from './time-zones.js'
// The errors the write ports throw, for an adapter's own imports next to the suite's.
export { StatementTimeout, StorageUnavailable, WriteConflict } from '../ports/errors.js'
