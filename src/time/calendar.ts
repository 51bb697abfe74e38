import { Temporal } from '@js-temporal/polyfill'
import { LRUCache } from 'lru-cache'

/**
 * A `YYYY-MM-DD` calendar day: the day as entered, the same in every time zone. Defined here,
 * on the ground floor, so time math imports nothing above it; the ports re-export it.
 */
export type Day = string

const DAY_SHAPE = /^(?!0000)\d{4}-\d{2}-\d{2}$/
/** ISO 8601 instant with an explicit offset: an unencoded `+` arrives as a space and fails here. */
const INSTANT_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

/**
 * The instants the API accepts and stores: years 0001 to 9999 in UTC, the range every
 * database and the `YYYY-MM-DDTHH:mm:ss.sssZ` wire format share (year 0000 or 10000 would
 * render as `-000001-…`/`+010000-…` and Postgres rejects both).
 */
export const MIN_INSTANT_MS = Date.parse('0001-01-01T00:00:00.000Z')
export const MAX_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z')

/** Whether `value` is `YYYY-MM-DD` (years 0001–9999) and names a day that exists (no 2026-02-30). */
export function isCalendarDay(value: string): boolean {
  if (!DAY_SHAPE.test(value)) return false
  try {
    Temporal.PlainDate.from(value, { overflow: 'reject' })
    return true
  } catch {
    return false
  }
}

/**
 * Parses an ISO 8601 instant with offset or `Z`, or returns `null` — also for one outside
 * `MIN_INSTANT_MS`…`MAX_INSTANT_MS` once in UTC. Sub-millisecond digits are truncated.
 */
export function parseInstant(value: string): Date | null {
  if (!INSTANT_SHAPE.test(value)) return null
  try {
    const ms = Temporal.Instant.from(value).epochMilliseconds
    return ms < MIN_INSTANT_MS || ms > MAX_INSTANT_MS ? null : new Date(ms)
  } catch {
    return null
  }
}

/**
 * The first instant of `day` on the calendar of `timeZone`, DST included
 * (where midnight does not exist, the day starts at the first instant that does),
 * within `MIN_INSTANT_MS`…`MAX_INSTANT_MS`.
 */
export function startOfCompanyDay(day: Day, timeZone: string): Date {
  // A pure function of its arguments, and the polyfill's zone maths costs ~0.1 ms a call: the
  // same few days are asked for again and again by list filters, so remember them.
  const slot = `${timeZone}\n${day}`
  let ms = DAY_STARTS.get(slot)
  if (ms === undefined) {
    const start = Temporal.PlainDate.from(day).toZonedDateTime({ timeZone })
    // The day after 9999-12-31, or 0001-01-01 east of UTC, falls outside what can be stored;
    // clamp, so `date_to=9999-12-31` stays a valid open end in every zone.
    ms = Math.min(Math.max(start.epochMilliseconds, MIN_INSTANT_MS), MAX_INSTANT_MS)
    DAY_STARTS.set(slot, ms)
  }
  return new Date(ms)
}

const DAY_STARTS = new LRUCache<string, number>({ max: 10_000 })

/** The day after `day`. */
export function nextDay(day: Day): Day {
  return Temporal.PlainDate.from(day).add({ days: 1 }).toString()
}

/** The calendar day on which `instant` falls in `timeZone`. */
export function companyDayOf(instant: Date, timeZone: string): Day {
  return Temporal.Instant.fromEpochMilliseconds(instant.getTime()).toZonedDateTimeISO(timeZone).toPlainDate().toString()
}
