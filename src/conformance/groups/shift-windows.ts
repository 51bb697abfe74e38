import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ShiftFilter } from '../../ports/storage.js'
import { EDGE_DAYS, edgeWindows, instantBounds, onCompanyDays } from '../company-days.js'
import type { ConformanceGroup } from '../group.js'
import { WHOLE_LIST, describeCall, distinct, expectListed, withoutUndefined } from '../list-assertions.js'

/** Hand-checked answers: which starts (UTC) a company day must and must not hold. */
const NAMED_CASES = [
  { companyId: 1, day: '2026-03-29', holds: ['2026-03-28T23:30:00.000Z', '2026-03-29T21:59:59.000Z'], excludes: ['2026-03-29T22:00:00.000Z'] },
  { companyId: 1, day: '2026-03-30', holds: ['2026-03-29T22:00:00.000Z'], excludes: ['2026-03-29T21:59:59.000Z'] },
  {
    companyId: 1,
    day: '2026-10-25',
    holds: ['2026-10-25T01:30:00.000Z', '2026-10-25T22:59:59.999Z'],
    excludes: ['2026-10-25T23:00:00.000Z'],
  },
  { companyId: 2, day: '2026-03-08', holds: ['2026-03-08T05:30:00.000Z', '2026-03-09T03:59:59.000Z'], excludes: ['2026-03-09T04:00:00.000Z'] },
  { companyId: 2, day: '2026-03-09', holds: ['2026-03-09T04:00:00.000Z'], excludes: ['2026-03-09T03:59:59.000Z'] },
  {
    companyId: 2,
    day: '2026-11-01',
    holds: ['2026-11-01T06:30:00.000Z', '2026-11-02T04:59:59.999Z'],
    excludes: ['2026-11-02T05:00:00.000Z'],
  },
] as const

/**
 * Spec 4.3.3: a shift belongs to the company-calendar day on which it starts. The plugin turns
 * `date_from`/`date_to` into `startsFrom` (inclusive) and `startsBefore` (exclusive) instants;
 * the adapter compares instants and does no time-zone math.
 */
export const shiftWindows: ConformanceGroup = {
  title: 'shift windows (instant bounds)',
  timeZoneSensitive: true,
  requires: [],
  define(ctx) {
    it('a day window holds exactly the shifts starting on those company days, around DST changes', async () => {
      for (const companyId of [1, 2]) {
        const zone = ctx.expected.timeZone(companyId)
        const all = ctx.expected.records('shifts', companyId)
        for (const window of edgeWindows(EDGE_DAYS[companyId] ?? [])) {
          const bounds = instantBounds(zone, window.from, window.to)
          const filter: ShiftFilter = withoutUndefined({ startsFrom: bounds.from, startsBefore: bounds.before })
          const expected = all.filter((shift) => onCompanyDays(shift.starts_at, zone, window.from, window.to))
          await expectListed(ctx.storage(), 'shifts', companyId, filter, expected, ` (days ${window.from ?? '…'} to ${window.to ?? '…'} in ${zone})`)
        }
      }
    })

    it('named cases: 00:30 local belongs to its local day, the last millisecond too, the next midnight does not', async () => {
      for (const { companyId, day, holds, excludes } of NAMED_CASES) {
        const zone = ctx.expected.timeZone(companyId)
        const startsOf = new Map(ctx.expected.records('shifts', companyId).map((shift) => [shift.id, shift.starts_at.toISOString()]))
        const known = new Set(startsOf.values())
        for (const instant of [...holds, ...excludes]) {
          if (!known.has(instant)) throw new Error(`conformance suite bug: no company ${companyId} shift starts at ${instant}`)
        }
        const bounds = instantBounds(zone, day, day)
        const filter = { startsFrom: bounds.from, startsBefore: bounds.before }
        const { rows } = await ctx.storage().shifts.list(companyId, filter, WHOLE_LIST)
        const listed = new Set(rows.map((row) => startsOf.get(row.id)))
        expect(
          { holds: holds.filter((instant) => listed.has(instant)), excludes: excludes.filter((instant) => listed.has(instant)) },
          `${describeCall('shifts', companyId, filter)}: company day ${day} in ${zone}`,
        ).toEqual({ holds: [...holds], excludes: [] })
      }
    })

    it('startsFrom is inclusive and startsBefore exclusive, exact to the millisecond', async () => {
      for (const companyId of [1, 2]) {
        const all = ctx.expected.records('shifts', companyId)
        const time = (shift: (typeof all)[number]) => shift.starts_at.getTime()
        for (const instant of distinct(all.map(time))) {
          const at = new Date(instant)
          const justAfter = new Date(instant + 1)
          await expectListed(ctx.storage(), 'shifts', companyId, { startsFrom: at }, all.filter((shift) => time(shift) >= instant))
          await expectListed(ctx.storage(), 'shifts', companyId, { startsBefore: at }, all.filter((shift) => time(shift) < instant))
          await expectListed(
            ctx.storage(),
            'shifts',
            companyId,
            { startsFrom: at, startsBefore: justAfter },
            all.filter((shift) => time(shift) === instant),
          )
        }
      }
    })

    it('instant bounds combine with the other shift filters', async () => {
      for (const companyId of [1, 2]) {
        const zone = ctx.expected.timeZone(companyId)
        const all = ctx.expected.records('shifts', companyId)
        for (const shift of all) {
          const bounds = instantBounds(zone, '2026-03-01', '2026-10-31')
          const filter = { employeeId: shift.employee_id, status: shift.status, startsFrom: bounds.from, startsBefore: bounds.before }
          const expected = all.filter(
            (candidate) =>
              candidate.employee_id === shift.employee_id &&
              candidate.status === shift.status &&
              onCompanyDays(candidate.starts_at, zone, '2026-03-01', '2026-10-31'),
          )
          await expectListed(ctx.storage(), 'shifts', companyId, filter, expected)
        }
      }
    })
  },
}
