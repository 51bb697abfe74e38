import { it } from '../harness.js'
import type { ConformanceGroup } from '../group.js'
import { distinct, expectListed, looseRecords } from '../list-assertions.js'
import { DAY_RESOURCES } from '../resources.js'

/**
 * Spec 4.3.3 and 4.3.5: `dateFrom`/`dateTo` on day fields name whole days, inclusive at both
 * ends, compared as days (`YYYY-MM-DD`), never through a time zone.
 */
export const dayWindows: ConformanceGroup = {
  title: 'day windows on day fields',
  timeZoneSensitive: true,
  requires: [],
  define(ctx) {
    for (const resource of DAY_RESOURCES) {
      it(`${resource}: dateFrom = dateTo = a day holds exactly that day's rows`, async () => {
        for (const companyId of [1, 2]) {
          const all = looseRecords(ctx.expected, resource, companyId)
          for (const day of distinct(all.map((row) => row.date as string))) {
            await expectListed(ctx.storage(), resource, companyId, { dateFrom: day, dateTo: day }, all.filter((row) => row.date === day))
          }
        }
      })

      it(`${resource}: open-ended and multi-day windows include both end days`, async () => {
        for (const companyId of [1, 2]) {
          const all = looseRecords(ctx.expected, resource, companyId)
          const days = distinct(all.map((row) => row.date as string))
          for (const [index, day] of days.entries()) {
            await expectListed(ctx.storage(), resource, companyId, { dateFrom: day }, all.filter((row) => (row.date as string) >= day))
            await expectListed(ctx.storage(), resource, companyId, { dateTo: day }, all.filter((row) => (row.date as string) <= day))
            const last = days[Math.min(days.length - 1, index + 3)] as string
            await expectListed(
              ctx.storage(),
              resource,
              companyId,
              { dateFrom: day, dateTo: last },
              all.filter((row) => (row.date as string) >= day && (row.date as string) <= last),
            )
          }
        }
      })

      it(`${resource}: a window with no rows, before or after all of them, is empty`, async () => {
        for (const companyId of [1, 2]) {
          const days = new Set(looseRecords(ctx.expected, resource, companyId).map((row) => row.date as string))
          const quiet = ['2026-01-02', '2026-06-13', '2026-09-09', '2026-04-04'].find((day) => !days.has(day))
          if (quiet === undefined) throw new Error('conformance suite bug: no day without rows')
          for (const filter of [{ dateFrom: quiet, dateTo: quiet }, { dateFrom: '2027-01-01' }, { dateTo: '2025-12-31' }]) {
            await expectListed(ctx.storage(), resource, companyId, filter, [])
          }
        }
      })

      it(`${resource}: a day window combines with the other filters`, async () => {
        for (const companyId of [1, 2]) {
          const all = looseRecords(ctx.expected, resource, companyId)
          for (const row of all) {
            const filter = { employeeId: row.employee_id, dateFrom: row.date, dateTo: row.date }
            await expectListed(
              ctx.storage(),
              resource,
              companyId,
              filter,
              all.filter((candidate) => candidate.employee_id === row.employee_id && candidate.date === row.date),
            )
          }
        }
      })
    }
  },
}
