import { describe, expect, it } from 'vitest'
import {
  companyDayOf,
  isCalendarDay,
  nextDay,
  parseInstant,
  startOfCompanyDay,
} from '../../src/time/calendar.js'

describe('startOfCompanyDay', () => {
  it.each([
    // Instants worked out by hand from each zone's offset that midnight.
    ['2026-03-29', 'Europe/Rome', '2026-03-28T23:00:00.000Z'], // CET; DST starts at 02:00
    ['2026-03-30', 'Europe/Rome', '2026-03-29T22:00:00.000Z'], // CEST
    ['2026-10-25', 'Europe/Rome', '2026-10-24T22:00:00.000Z'], // CEST; DST ends at 03:00
    ['2026-10-26', 'Europe/Rome', '2026-10-25T23:00:00.000Z'], // CET
    ['2026-03-08', 'America/New_York', '2026-03-08T05:00:00.000Z'], // EST; DST starts at 02:00
    ['2026-03-09', 'America/New_York', '2026-03-09T04:00:00.000Z'], // EDT
    ['2026-11-01', 'America/New_York', '2026-11-01T04:00:00.000Z'], // EDT; DST ends at 02:00
    ['2026-01-01', 'Asia/Tokyo', '2025-12-31T15:00:00.000Z'],
    ['2026-01-01', 'UTC', '2026-01-01T00:00:00.000Z'],
    // Where midnight does not exist, the day starts at the first instant that does: 01:00 -02:00.
    ['2018-11-04', 'America/Sao_Paulo', '2018-11-04T03:00:00.000Z'],
  ])('%s in %s starts at %s', (day, zone, instant) => {
    expect(startOfCompanyDay(day, zone).toISOString()).toBe(instant)
  })

  it('makes Rome’s 2026-03-29 23 hours long and 2026-10-25 25 hours long', () => {
    const hours = (day: string, zone: string) =>
      (startOfCompanyDay(nextDay(day), zone).getTime() - startOfCompanyDay(day, zone).getTime()) / 3_600_000
    expect(hours('2026-03-29', 'Europe/Rome')).toBe(23)
    expect(hours('2026-10-25', 'Europe/Rome')).toBe(25)
    expect(hours('2026-03-08', 'America/New_York')).toBe(23)
    expect(hours('2026-11-01', 'America/New_York')).toBe(25)
    expect(hours('2026-06-01', 'Europe/Rome')).toBe(24)
  })
})

describe('whole-day windows and companyDayOf', () => {
  it('covers whole days, both ends inclusive, as [start of from, start of the day after to)', () => {
    expect(startOfCompanyDay('2026-03-29', 'Europe/Rome')).toEqual(new Date('2026-03-28T23:00:00.000Z'))
    expect(startOfCompanyDay(nextDay('2026-03-29'), 'Europe/Rome')).toEqual(new Date('2026-03-29T22:00:00.000Z'))
    expect(startOfCompanyDay('2026-03-07', 'America/New_York')).toEqual(new Date('2026-03-07T05:00:00.000Z'))
    expect(startOfCompanyDay(nextDay('2026-03-08'), 'America/New_York')).toEqual(new Date('2026-03-09T04:00:00.000Z'))
  })

  it.each([
    ['2026-03-28T23:30:00.000Z', 'Europe/Rome', '2026-03-29'], // 00:30 local
    ['2026-03-29T21:59:59.000Z', 'Europe/Rome', '2026-03-29'], // 23:59:59 local
    ['2026-03-29T22:00:00.000Z', 'Europe/Rome', '2026-03-30'],
    ['2026-03-08T04:59:59.000Z', 'America/New_York', '2026-03-07'],
    ['2026-03-09T03:59:59.000Z', 'America/New_York', '2026-03-08'],
  ])('%s is on %s’s calendar day %s', (instant, zone, day) => {
    expect(companyDayOf(new Date(instant), zone)).toBe(day)
  })
})

describe('nextDay', () => {
  it.each([
    ['2026-01-31', '2026-02-01'],
    ['2026-02-28', '2026-03-01'],
    ['2024-02-28', '2024-02-29'],
    ['2024-02-29', '2024-03-01'],
    ['2026-12-31', '2027-01-01'],
    ['2026-03-29', '2026-03-30'],
  ])('after %s comes %s', (day, next) => {
    expect(nextDay(day)).toBe(next)
  })
})

describe('isCalendarDay', () => {
  it.each(['2024-02-29', '2000-02-29', '2026-02-28', '2026-12-31', '2026-01-01', '1999-04-30'])('%s exists', (day) => {
    expect(isCalendarDay(day)).toBe(true)
  })

  it.each([
    '2026-02-29', // 2026 is not a leap year
    '1900-02-29', // divisible by 100, not by 400
    '2100-02-29',
    '2026-02-30',
    '2026-04-31',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
    '2026-01-32',
    '2026-1-05',
    '26-01-05',
    '20260105',
    '2026-01-05T00:00:00Z',
    ' 2026-01-05',
    '2026-01-05 ',
    '+002026-01-05',
    '',
  ])('%s is refused', (day) => {
    expect(isCalendarDay(day)).toBe(false)
  })
})

describe('parseInstant', () => {
  it.each([
    ['2026-01-05T08:00:00.000Z', '2026-01-05T08:00:00.000Z'],
    ['2026-01-05T08:00:00Z', '2026-01-05T08:00:00.000Z'],
    ['2026-01-05T08:00Z', '2026-01-05T08:00:00.000Z'],
    ['2026-03-29T01:30:00+02:00', '2026-03-28T23:30:00.000Z'],
    ['2026-01-05T10:00:00+02:00', '2026-01-05T08:00:00.000Z'],
    ['2026-01-05T03:00:00-05:00', '2026-01-05T08:00:00.000Z'],
    ['2026-01-05T08:00:00+00:00', '2026-01-05T08:00:00.000Z'],
    ['2026-01-05T23:30:00-05:00', '2026-01-06T04:30:00.000Z'],
    ['2026-01-05T08:00:00.1234567Z', '2026-01-05T08:00:00.123Z'], // sub-millisecond digits truncated
    ['2026-01-05T08:00:00.9999Z', '2026-01-05T08:00:00.999Z'],
  ])('%s is %s', (value, instant) => {
    expect(parseInstant(value)?.toISOString()).toBe(instant)
  })

  it.each([
    '2026-01-05T10:00:00 02:00', // an unencoded + decoded to a space
    '2026-01-05T08:00:00', // no offset: ambiguous
    '2026-01-05',
    '2026-01-05 08:00:00Z',
    '2026-02-30T08:00:00Z',
    '2026-13-05T08:00:00Z',
    '2026-01-05T24:30:00Z',
    '2026-01-05T08:60:00Z',
    '2026-01-05T08:00:00+0200',
    '1767600000000',
    'yesterday',
    '',
  ])('%s is refused', (value) => {
    expect(parseInstant(value)).toBeNull()
  })
})

