import { Temporal } from '@js-temporal/polyfill'
import type { Day } from '../records.js'

const DAY_SHAPE = /^\d{4}-\d{2}-\d{2}$/
/** ISO 8601 instant with an explicit offset: an unencoded `+` arrives as a space and fails here. */
const INSTANT_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

/** Whether `value` is `YYYY-MM-DD` and names a day that exists (no 2026-02-30). */
export function isCalendarDay(value: string): boolean {
  if (!DAY_SHAPE.test(value)) return false
  try {
    Temporal.PlainDate.from(value, { overflow: 'reject' })
    return true
  } catch {
    return false
  }
}

/** Parses an ISO 8601 instant with offset or `Z`, or returns `null`. Sub-millisecond digits are truncated. */
export function parseInstant(value: string): Date | null {
  if (!INSTANT_SHAPE.test(value)) return null
  try {
    return new Date(Temporal.Instant.from(value).epochMilliseconds)
  } catch {
    return null
  }
}

/**
 * The first instant of `day` on the calendar of `timeZone`, DST included
 * (where midnight does not exist, the day starts at the first instant that does).
 */
export function startOfCompanyDay(day: Day, timeZone: string): Date {
  const start = Temporal.PlainDate.from(day).toZonedDateTime({ timeZone })
  return new Date(start.epochMilliseconds)
}

/** The day after `day`. */
export function nextDay(day: Day): Day {
  return Temporal.PlainDate.from(day).add({ days: 1 }).toString()
}

/** The calendar day on which `instant` falls in `timeZone`. */
export function companyDayOf(instant: Date, timeZone: string): Day {
  return Temporal.Instant.fromEpochMilliseconds(instant.getTime()).toZonedDateTimeISO(timeZone).toPlainDate().toString()
}
