import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { localDay, rowsOf, ZONES, type TodoRow } from '../helpers/expected-reads.js'
import { listIds } from '../helpers/list-http.js'

/** The id of the company's shift starting at exactly `instant` (an edge the seed documents). */
function shiftAt(companyId: number, instant: string): number {
  const row = rowsOf('shifts', companyId).find((shift) => shift.starts_at.toISOString() === instant)
  if (row === undefined) throw new Error(`seed has no shift of company ${companyId} at ${instant}`)
  return row.id
}

function todoDueAt(companyId: number, instant: string): number {
  const row = rowsOf('todos', companyId).find((todo) => !todo.due_is_all_day && todo.due_at?.toISOString() === instant)
  if (row === undefined) throw new Error(`seed has no to-do of company ${companyId} due at ${instant}`)
  return row.id
}

function todoAllDay(companyId: number, day: string): number {
  const row = rowsOf('todos', companyId).find((todo) => todo.due_is_all_day && todo.due_day === day)
  if (row === undefined) throw new Error(`seed has no all-day to-do of company ${companyId} on ${day}`)
  return row.id
}

const inWindow = (day: string | null, from?: string, to?: string) =>
  day !== null && (from === undefined || day >= from) && (to === undefined || day <= to)

/** Shifts whose start falls, on the company's calendar, within [from, to]. */
function expectedShifts(companyId: number, from?: string, to?: string): number[] {
  const zone = ZONES[companyId] as string
  return rowsOf('shifts', companyId)
    .filter((shift) => inWindow(localDay(shift.starts_at, zone), from, to))
    .map((shift) => shift.id)
}

/** The day a to-do is due: the day as entered when all-day, the company-calendar day when timed. */
function dueDay(todo: TodoRow, zone: string): string | null {
  if (todo.due_is_all_day) return todo.due_day
  return todo.due_at === null ? null : localDay(todo.due_at, zone)
}

function expectedTodos(companyId: number, from?: string, to?: string): number[] {
  const zone = ZONES[companyId] as string
  return rowsOf('todos', companyId)
    .filter((todo) => inWindow(dueDay(todo, zone), from, to))
    .map((todo) => todo.id)
}

const windowQuery = (names: [string, string], from?: string, to?: string) =>
  [from === undefined ? '' : `${names[0]}=${from}`, to === undefined ? '' : `${names[1]}=${to}`].filter(Boolean).join('&')

/** Windows around the seed's edge days, both companies' DST switches included. */
const SHIFT_WINDOWS: Record<number, [string | undefined, string | undefined][]> = {
  1: [
    ['2026-03-29', '2026-03-29'], // spring forward in Rome: a 23-hour day
    ['2026-03-28', '2026-03-28'],
    ['2026-03-30', '2026-03-30'],
    ['2026-10-25', '2026-10-25'], // fall back: a 25-hour day
    ['2026-10-24', '2026-10-24'],
    ['2026-01-15', '2026-01-15'],
    ['2026-03-20', '2026-03-20'],
    ['2026-03-01', '2026-03-31'],
    ['2026-03-29', undefined],
    [undefined, '2026-03-28'],
  ],
  2: [
    ['2026-03-08', '2026-03-08'], // spring forward in New York
    ['2026-03-07', '2026-03-07'],
    ['2026-03-09', '2026-03-09'],
    ['2026-11-01', '2026-11-01'], // fall back
    ['2026-10-31', '2026-10-31'],
    ['2026-01-15', '2026-01-15'],
    ['2026-03-20', '2026-03-20'],
    ['2026-03-01', '2026-03-31'],
    ['2026-03-08', undefined],
    [undefined, '2026-03-07'],
  ],
}

const DUE_WINDOWS: Record<number, [string | undefined, string | undefined][]> = {
  1: [
    ['2026-03-20', '2026-03-20'],
    ['2026-03-19', '2026-03-19'],
    ['2026-03-28', '2026-03-28'],
    ['2026-03-29', '2026-03-29'],
    ['2026-10-25', '2026-10-25'],
    ['2026-03-21', '2026-03-29'],
    ['2026-03-29', undefined],
    [undefined, '2026-03-20'],
    ['2000-01-01', '2099-12-31'],
  ],
  2: [
    ['2026-03-07', '2026-03-07'],
    ['2026-03-08', '2026-03-08'],
    ['2026-03-20', '2026-03-20'],
    ['2026-03-21', '2026-03-21'],
    ['2026-11-01', '2026-11-01'],
    ['2026-03-08', '2026-03-20'],
    ['2026-03-08', undefined],
    [undefined, '2026-03-07'],
    ['2000-01-01', '2099-12-31'],
  ],
}

// Spec 4.3: whole-day windows, inclusive at both ends, on the company's calendar.
describe.each(READ_ADAPTERS)('day and due windows ($name)', (adapter) => {
  let t: TestApp
  const keys = new Map<number, string>()
  const keyOf = (companyId: number) => keys.get(companyId) as string
  const shifts = (companyId: number, from?: string, to?: string) =>
    listIds(t, keyOf(companyId), '/v1/shifts', windowQuery(['date_from', 'date_to'], from, to))
  const todos = (companyId: number, from?: string, to?: string) =>
    listIds(t, keyOf(companyId), '/v1/todos', windowQuery(['due_from', 'due_to'], from, to))

  beforeAll(async () => {
    t = await build({ adapter })
    for (const companyId of [1, 2]) keys.set(companyId, await t.keyFor(companyId, ['all']))
  })
  afterAll(() => t.close())

  describe.each([1, 2])('company %i', (companyId) => {
    it.each(SHIFT_WINDOWS[companyId] ?? [])('shifts date_from=%s date_to=%s: by the company-calendar day of starts_at', async (from, to) => {
      const expected = expectedShifts(companyId, from, to)
      expect(expected.length).toBeGreaterThan(0)
      expect(await shifts(companyId, from, to)).toEqual(expected)
    })

    it.each(DUE_WINDOWS[companyId] ?? [])('todos due_from=%s due_to=%s: timed on the company calendar, all-day as entered', async (from, to) => {
      // 2026-03-19 in Rome and 2026-03-21 in New York hold no local due date, only UTC ones: empty.
      expect(await todos(companyId, from, to)).toEqual(expectedTodos(companyId, from, to))
    })

    it('the due windows above are mostly non-empty, and the UTC-day traps are empty', () => {
      const windows = DUE_WINDOWS[companyId] ?? []
      const empty = windows.filter(([from, to]) => expectedTodos(companyId, from, to).length === 0)
      expect(empty).toEqual([companyId === 1 ? ['2026-03-19', '2026-03-19'] : ['2026-03-21', '2026-03-21']])
    })

    it('every single local day that holds a shift selects exactly that day’s shifts', async () => {
      const zone = ZONES[companyId] as string
      const days = [...new Set(rowsOf('shifts', companyId).map((shift) => localDay(shift.starts_at, zone)))]
      for (const day of days.slice(0, 20)) expect(await shifts(companyId, day, day), day).toEqual(expectedShifts(companyId, day, day))
    })

    it('to-dos with no due date never match a due window', async () => {
      const undated = rowsOf('todos', companyId).filter((todo) => todo.due_day === null && todo.due_at === null).map((todo) => todo.id)
      expect(undated.length).toBeGreaterThan(0)
      for (const [from, to] of [
        ['1970-01-01', '2999-12-31'],
        ['1970-01-01', undefined],
        [undefined, '2999-12-31'],
      ] as const) {
        const ids = await todos(companyId, from, to)
        expect(ids.length).toBeGreaterThan(0)
        for (const id of undated) expect(ids).not.toContain(id)
      }
    })

    it('the all-day due date counts as the day entered', async () => {
      const day = companyId === 1 ? '2026-03-29' : '2026-03-08'
      const id = todoAllDay(companyId, day)
      expect(await todos(companyId, day, day)).toContain(id)
      const before = companyId === 1 ? '2026-03-28' : '2026-03-07'
      const after = companyId === 1 ? '2026-03-30' : '2026-03-09'
      expect(await todos(companyId, before, before)).not.toContain(id)
      expect(await todos(companyId, after, after)).not.toContain(id)
    })
  })

  describe('Europe/Rome (company 1), instants worked out by hand', () => {
    it('a shift at 00:30 local on 2026-03-29 (23:30Z on the 28th) is on the 29th', async () => {
      const id = shiftAt(1, '2026-03-28T23:30:00.000Z') // CET, +01:00: DST starts later that night
      expect(await shifts(1, '2026-03-29', '2026-03-29')).toContain(id)
      expect(await shifts(1, '2026-03-28', '2026-03-28')).not.toContain(id)
      expect(await shifts(1, undefined, '2026-03-28')).not.toContain(id)
      expect(await shifts(1, '2026-03-29', undefined)).toContain(id)
    })

    it('a shift at 23:59:59 local is included by date_to of that day (28th CET, 29th CEST)', async () => {
      const on28 = shiftAt(1, '2026-03-28T22:59:59.000Z')
      const on29 = shiftAt(1, '2026-03-29T21:59:59.000Z') // CEST, +02:00
      expect(await shifts(1, undefined, '2026-03-28')).toContain(on28)
      expect(await shifts(1, '2026-03-29', undefined)).not.toContain(on28)
      expect(await shifts(1, '2026-03-29', '2026-03-29')).toContain(on29)
      expect(await shifts(1, '2026-03-30', undefined)).not.toContain(on29)
    })

    it('00:30 local on 2026-03-30 (22:30Z on the 29th) is on the 30th, not the 29th', async () => {
      const id = shiftAt(1, '2026-03-29T22:30:00.000Z')
      expect(await shifts(1, '2026-03-30', '2026-03-30')).toContain(id)
      expect(await shifts(1, '2026-03-29', '2026-03-29')).not.toContain(id)
    })

    it('the 25-hour day 2026-10-25 holds both 00:30 CEST and 23:59:59 CET', async () => {
      const early = shiftAt(1, '2026-10-24T22:30:00.000Z')
      const late = shiftAt(1, '2026-10-25T22:59:59.000Z')
      const day = await shifts(1, '2026-10-25', '2026-10-25')
      expect(day).toContain(early)
      expect(day).toContain(late)
      expect(await shifts(1, '2026-10-24', '2026-10-24')).not.toContain(early)
      expect(await shifts(1, '2026-10-24', '2026-10-24')).toContain(shiftAt(1, '2026-10-24T21:59:59.000Z'))
    })

    it('a to-do due at 00:30 local on the 20th (23:30Z on the 19th) is due on the 20th', async () => {
      const id = todoDueAt(1, '2026-03-19T23:30:00.000Z')
      expect(await todos(1, '2026-03-20', '2026-03-20')).toContain(id)
      expect(await todos(1, '2026-03-19', '2026-03-19')).not.toContain(id)
      expect(await todos(1, undefined, '2026-03-19')).not.toContain(id)
    })

    it('due_to of a day includes a to-do due at 23:59:59 local that day', async () => {
      const id = todoDueAt(1, '2026-03-20T22:59:59.000Z')
      expect(await todos(1, undefined, '2026-03-20')).toContain(id)
      expect(await todos(1, '2026-03-21', undefined)).not.toContain(id)
    })
  })

  describe('America/New_York (company 2), instants worked out by hand', () => {
    it('23:59:59 EST on 2026-03-07 (04:59:59Z on the 8th) is on the 7th', async () => {
      const id = shiftAt(2, '2026-03-08T04:59:59.000Z')
      expect(await shifts(2, '2026-03-07', '2026-03-07')).toContain(id)
      expect(await shifts(2, '2026-03-08', '2026-03-08')).not.toContain(id)
    })

    it('the 23-hour day 2026-03-08 holds 00:30 EST and 23:59:59 EDT (03:59:59Z on the 9th)', async () => {
      const early = shiftAt(2, '2026-03-08T05:30:00.000Z')
      const late = shiftAt(2, '2026-03-09T03:59:59.000Z')
      const day = await shifts(2, '2026-03-08', '2026-03-08')
      expect(day).toContain(early)
      expect(day).toContain(late)
      expect(await shifts(2, '2026-03-09', '2026-03-09')).not.toContain(late)
      expect(await shifts(2, '2026-03-09', '2026-03-09')).toContain(shiftAt(2, '2026-03-09T04:30:00.000Z'))
    })

    it('the 25-hour day 2026-11-01 holds 00:30 EDT and 23:59:59 EST', async () => {
      const early = shiftAt(2, '2026-11-01T04:30:00.000Z')
      const late = shiftAt(2, '2026-11-02T04:59:59.000Z')
      const day = await shifts(2, '2026-11-01', '2026-11-01')
      expect(day).toContain(early)
      expect(day).toContain(late)
      const eve = shiftAt(2, '2026-11-01T03:59:59.000Z') // 23:59:59 EDT on 10-31
      expect(await shifts(2, '2026-10-31', '2026-10-31')).toContain(eve)
      expect(day).not.toContain(eve)
    })

    it('a to-do due at 23:59:59 EDT on the 20th (03:59:59Z on the 21st) is due on the 20th', async () => {
      const id = todoDueAt(2, '2026-03-21T03:59:59.000Z')
      expect(await todos(2, '2026-03-20', '2026-03-20')).toContain(id)
      expect(await todos(2, '2026-03-21', '2026-03-21')).not.toContain(id)
      const early = todoDueAt(2, '2026-03-20T04:30:00.000Z')
      expect(await todos(2, '2026-03-20', '2026-03-20')).toContain(early)
      expect(await todos(2, '2026-03-20', '2026-03-20')).toContain(todoAllDay(2, '2026-03-20'))
    })
  })

  it('the same day filter means a different UTC window in each company', async () => {
    // 2026-03-20 00:30 Rome is 23:30Z on the 19th, in New York 04:30Z on the 20th: both on the 20th locally.
    expect(await todos(1, '2026-03-20', '2026-03-20')).toContain(todoDueAt(1, '2026-03-19T23:30:00.000Z'))
    expect(await todos(2, '2026-03-20', '2026-03-20')).toContain(todoDueAt(2, '2026-03-20T04:30:00.000Z'))
  })

  it('filters combine with day windows', async () => {
    const zone = ZONES[1] as string
    const expected = rowsOf('shifts', 1)
      .filter((shift) => shift.status === 'scheduled' && inWindow(localDay(shift.starts_at, zone), '2026-03-01', '2026-10-31'))
      .map((shift) => shift.id)
    expect(expected.length).toBeGreaterThan(0)
    expect(await listIds(t, keyOf(1), '/v1/shifts', 'status=scheduled&date_from=2026-03-01&date_to=2026-10-31')).toEqual(expected)
  })
})
