import { Type } from '@sinclair/typebox'
import { NotFoundError, ValidationError } from '../errors.js'
import type { Storage } from '../ports/storage.js'
import { nextDay, parseInstant, startOfCompanyDay } from '../time/calendar.js'
import { Day, Timestamp } from './wire.js'

/** The `updated_since` parameter of every list but roles' (spec 4.3.1); `updatedSince()` reads it. */
export const UPDATED_SINCE = { updated_since: Type.Optional(Timestamp) }

/** `date_from` and `date_to`: whole days, inclusive (spec 4.3.3); `dayRange()` or `companyDayWindow()` reads them. */
export const DAY_RANGE = { date_from: Type.Optional(Day), date_to: Type.Optional(Day) }

/** What a list filter may need beyond the query: the tenant and its time zone. */
export interface FilterContext {
  companyId: number
  /** The company's IANA time zone; loaded only when a day filter on an instant asks for it. */
  companyTimeZone(): Promise<string>
}

export function filterContext(storage: Storage, companyId: number): FilterContext {
  return {
    companyId,
    async companyTimeZone() {
      const company = await storage.company(companyId)
      if (company === null) throw new NotFoundError('Company not found')
      return company.timezone
    },
  }
}

/** `updated_since`, already format-checked, as the instant the port compares with `>=` (spec 4.3.1). */
export function updatedSince(value: string | undefined): Date | undefined {
  return value === undefined ? undefined : (parseInstant(value) ?? undefined)
}

/** Rejects a window whose first day is after its last (`date_from`/`date_to`, `due_from`/`due_to`). */
export function checkDayRange(fromName: string, from: string | undefined, toName: string, to: string | undefined): void {
  if (from !== undefined && to !== undefined && from > to) {
    throw new ValidationError([{ field: fromName, message: `must not be after ${toName}` }])
  }
}

/** `date_from`/`date_to` on a day field (the day as entered, in every time zone), checked in order, as the port's `dateFrom`/`dateTo`. */
export function dayRange(query: { date_from?: string; date_to?: string }): { dateFrom: string | undefined; dateTo: string | undefined } {
  checkDayRange('date_from', query.date_from, 'date_to', query.date_to)
  return { dateFrom: query.date_from, dateTo: query.date_to }
}

/** The instants bounding inclusive days on the company's calendar: `start <= t < end`. */
export interface DayWindow {
  /** The first instant of the `from` day; absent when `from` is. */
  start?: Date
  /** The first instant of the day after `to` (spec 4.3.3: `to` includes 23:59:59); absent when `to` is. */
  end?: Date
}

/**
 * Turns whole days `from`…`to` into instants in the company's time zone (spec 4.3.3–4),
 * DST included, after checking they are in order (a 422 naming `fromName`). The zone is loaded
 * only when a bound is given; adapters never do zone math.
 */
export async function companyDayWindow(
  context: FilterContext,
  fromName: string,
  from: string | undefined,
  toName: string,
  to: string | undefined,
): Promise<DayWindow> {
  checkDayRange(fromName, from, toName, to)
  if (from === undefined && to === undefined) return {}
  const zone = await context.companyTimeZone()
  const window: DayWindow = {}
  if (from !== undefined) window.start = startOfCompanyDay(from, zone)
  if (to !== undefined) window.end = startOfCompanyDay(nextDay(to), zone)
  return window
}
