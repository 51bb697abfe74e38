import { it } from '../harness.js'
import type { ConformanceGroup } from '../group.js'
import { distinct, expectListed, looseRecords } from '../list-assertions.js'
import { UPDATED_SINCE_RESOURCES } from '../resources.js'

const DAY_MS = 86_400_000

/** Spec 4.3.1: `updated_since` returns records updated at or after the instant, to the millisecond. */
export const updatedSinceFilter: ConformanceGroup = {
  title: 'updatedSince',
  requires: [],
  define(ctx) {
    for (const resource of UPDATED_SINCE_RESOURCES) {
      it(`${resource}: updatedSince is inclusive, exact to the millisecond`, async () => {
        for (const companyId of [1, 2]) {
          const all = looseRecords(ctx.expected, resource, companyId)
          const updatedAt = (row: (typeof all)[number]) => (row.updated_at as Date).getTime()
          // Every stored value as a bound (inclusive), and one millisecond later (excludes it).
          for (const instant of distinct(all.map(updatedAt))) {
            for (const bound of [instant, instant + 1]) {
              await expectListed(
                ctx.storage(),
                resource,
                companyId,
                { updatedSince: new Date(bound) },
                all.filter((row) => updatedAt(row) >= bound),
              )
            }
          }
          const first = Math.min(...all.map(updatedAt))
          await expectListed(ctx.storage(), resource, companyId, { updatedSince: new Date(first - 365 * DAY_MS) }, all)
        }
      })
    }
  },
}
