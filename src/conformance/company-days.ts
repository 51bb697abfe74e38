import type { Day } from '../ports/records.js'
import { companyDayOf, nextDay, startOfCompanyDay } from '../time/calendar.js'

/**
 * Company days the windows are tested on: the seed's and the fixture's edge days, DST changes
 * and their neighbours (spring-forward and fall-back in Rome and New York, 2026).
 */
export const EDGE_DAYS: Readonly<Record<number, readonly Day[]>> = {
  1: ['2026-01-15', '2026-03-20', '2026-03-28', '2026-03-29', '2026-03-30', '2026-10-24', '2026-10-25', '2026-10-26'],
  2: ['2026-01-15', '2026-03-07', '2026-03-08', '2026-03-09', '2026-03-20', '2026-10-31', '2026-11-01', '2026-11-02'],
}

/**
 * The instant bounds the plugin passes for the whole-day window `[from, to]`: the first instant
 * of `from` and the first instant of the day after `to`, on the company's calendar.
 */
export function instantBounds(timeZone: string, from: Day | undefined, to: Day | undefined): { from?: Date; before?: Date } {
  return {
    ...(from === undefined ? {} : { from: startOfCompanyDay(from, timeZone) }),
    ...(to === undefined ? {} : { before: startOfCompanyDay(nextDay(to), timeZone) }),
  }
}

/**
 * Whether `instant` falls on a company day inside `[from, to]`. Computed from the instant's
 * own calendar day (Temporal), independently of the bounds above.
 */
export function onCompanyDays(instant: Date, timeZone: string, from: Day | undefined, to: Day | undefined): boolean {
  const day = companyDayOf(instant, timeZone)
  return (from === undefined || day >= from) && (to === undefined || day <= to)
}

/** Windows to try around the edge days: each day alone, open-ended both ways, and a three-day span. */
export function edgeWindows(days: readonly Day[]): Array<{ from?: Day; to?: Day }> {
  const windows: Array<{ from?: Day; to?: Day }> = []
  for (const [index, day] of days.entries()) {
    windows.push({ from: day, to: day }, { from: day }, { to: day })
    const later = days[index + 2]
    if (later !== undefined) windows.push({ from: day, to: later })
  }
  return windows
}
