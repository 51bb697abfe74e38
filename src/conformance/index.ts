/**
 * `fastify-workforce-api/conformance`: the test suite every storage adapter must pass — ours
 * (memory, SQLite, Postgres) and a host's own. Needs vitest (an optional peer dependency).
 */
import { afterEach, beforeEach, describe } from 'vitest'
import { createContext } from './context.js'
import { conformanceFixture, loadableCopy } from './fixture.js'
import { CONFORMANCE_GROUPS } from './groups/index.js'
import { checkConformanceOptions, resolveSupports, type ConformanceOptions, type ConformanceSubject } from './subject.js'

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
 * to the value of `keyStore`, `events` and `webhooks` to that of `writes`): a group whose
 * capability is `false` is not registered; one declared `true` that the subject lacks fails.
 * Failures name the call and show expected and actual values side by side.
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
  checkConformanceOptions(options)
  const supports = resolveSupports(options.supports)
  const { dataset, edges } = conformanceFixture()
  let current: ConformanceSubject | undefined

  describe(`storage conformance: ${options.name}`, () => {
    beforeEach(async () => {
      const subject = await options.create()
      current = subject
      await subject.loadDataset(loadableCopy(dataset))
    })

    afterEach(async () => {
      const subject = current
      current = undefined
      await subject?.close()
    })

    const context = createContext({ name: options.name, fixture: dataset, edges, supports, current: () => current })
    for (const group of CONFORMANCE_GROUPS) {
      if (group.requires.every((capability) => supports[capability])) {
        describe(group.title, () => group.define(context))
      }
    }
  })
}

export type { ConformanceOptions, ConformanceSubject, ConformanceSupports } from './subject.js'
export type { ConformanceContext } from './context.js'
export type { ConformanceGroup } from './group.js'
export type { ExpectedAnswers } from './expected.js'
export { CONFORMANCE_GROUPS } from './groups/index.js'
export { conformanceFixture, loadableCopy, type ConformanceFixture, type EdgeIds } from './fixture.js'
