import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { DueBound, TodoFilter } from '../../ports/storage.js'
import type { Day, TodoRecord } from '../../ports/records.js'
import { EDGE_DAYS, edgeWindows, instantBounds, onCompanyDays } from '../company-days.js'
import type { ConformanceGroup } from '../group.js'
import { WHOLE_LIST, describeCall, distinct, expectListed, withoutUndefined } from '../list-assertions.js'

/** How a to-do is named in the named cases: `day:YYYY-MM-DD` when all-day, its UTC instant when timed. */
function dueKey(todo: TodoRecord): string | null {
  if (todo.due_is_all_day) return todo.due_day === null ? null : `day:${todo.due_day}`
  return todo.due_at === null ? null : todo.due_at.toISOString()
}

/** Hand-checked answers: which due dates a company day must and must not hold. */
const NAMED_CASES = [
  {
    companyId: 1,
    day: '2026-03-29',
    holds: ['2026-03-28T23:30:00.000Z', '2026-03-29T21:59:59.000Z', 'day:2026-03-29'],
    excludes: ['2026-03-29T22:00:00.000Z', 'day:2026-03-28'],
  },
  { companyId: 1, day: '2026-03-30', holds: ['2026-03-29T22:00:00.000Z'], excludes: ['2026-03-29T21:59:59.000Z', 'day:2026-03-29'] },
  {
    companyId: 1,
    day: '2026-10-25',
    holds: ['2026-10-24T22:30:00.000Z', '2026-10-25T22:59:59.000Z', '2026-10-25T22:59:59.999Z', 'day:2026-10-25'],
    excludes: ['day:2026-10-26'],
  },
  {
    companyId: 2,
    day: '2026-11-01',
    holds: ['2026-11-01T04:30:00.000Z', '2026-11-02T04:59:59.000Z', '2026-11-02T04:59:59.999Z', 'day:2026-11-01'],
    excludes: [],
  },
  { companyId: 2, day: '2026-03-09', holds: ['2026-03-09T04:00:00.000Z'], excludes: ['2026-03-09T03:59:59.000Z', 'day:2026-03-08'] },
] as const

/** The bounds the plugin passes for `due_from`/`due_to` (both a day and that day's instant). */
function dueFilter(zone: string, from: Day | undefined, to: Day | undefined): TodoFilter {
  const bounds = instantBounds(zone, from, to)
  return withoutUndefined({
    dueFrom: from === undefined || bounds.from === undefined ? undefined : { day: from, instant: bounds.from },
    dueTo: to === undefined || bounds.before === undefined ? undefined : { day: to, instant: bounds.before },
  })
}

/** Spec 4.3: all-day due dates are the day as entered; timed ones count on the company's day. */
function dueOnDays(todo: TodoRecord, zone: string, from: Day | undefined, to: Day | undefined): boolean {
  if (todo.due_is_all_day) return todo.due_day !== null && (from === undefined || todo.due_day >= from) && (to === undefined || todo.due_day <= to)
  return todo.due_at !== null && onCompanyDays(todo.due_at, zone, from, to)
}

/**
 * `dueFrom`/`dueTo` (src/ports/storage.ts): an all-day to-do matches on its day, a timed one on
 * its instant, a to-do without a due date never matches.
 */
export const todoDueWindows: ConformanceGroup = {
  title: 'to-do due windows (all-day days and timed instants)',
  timeZoneSensitive: true,
  requires: [],
  define(ctx) {
    it('a due window holds the all-day to-dos of those days and the timed ones due on those company days', async () => {
      for (const companyId of [1, 2]) {
        const zone = ctx.expected.timeZone(companyId)
        const all = ctx.expected.records('todos', companyId)
        for (const window of edgeWindows(EDGE_DAYS[companyId] ?? [])) {
          const expected = all.filter((todo) => dueOnDays(todo, zone, window.from, window.to))
          await expectListed(ctx.storage(), 'todos', companyId, dueFilter(zone, window.from, window.to), expected, ` (days ${window.from ?? '…'} to ${window.to ?? '…'} in ${zone})`)
        }
      }
    })

    it('named cases: 00:30 local and the last millisecond count on their local day; all-day on its own day', async () => {
      for (const { companyId, day, holds, excludes } of NAMED_CASES) {
        const zone = ctx.expected.timeZone(companyId)
        const keyOf = new Map(ctx.expected.records('todos', companyId).map((todo) => [todo.id, dueKey(todo)]))
        const known = new Set(keyOf.values())
        for (const key of [...holds, ...excludes]) {
          if (!known.has(key)) throw new Error(`conformance suite bug: no company ${companyId} to-do due ${key}`)
        }
        const filter = dueFilter(zone, day, day)
        const { rows } = await ctx.storage().todos.list(companyId, filter, WHOLE_LIST)
        const listed = new Set(rows.map((row) => keyOf.get(row.id)))
        expect(
          { holds: holds.filter((key) => listed.has(key)), excludes: excludes.filter((key) => listed.has(key)) },
          `${describeCall('todos', companyId, filter)}: company day ${day} in ${zone}`,
        ).toEqual({ holds: [...holds], excludes: [] })
      }
    })

    it('a to-do without a due date never matches, not even the widest window', async () => {
      for (const companyId of [1, 2]) {
        const zone = ctx.expected.timeZone(companyId)
        const all = ctx.expected.records('todos', companyId)
        const due = all.filter((todo) => todo.due_day !== null || todo.due_at !== null)
        if (due.length === all.length) throw new Error('conformance suite bug: the fixture needs to-dos without a due date')
        for (const [from, to] of [['1900-01-01', '2999-12-31'], ['1900-01-01', undefined], [undefined, '2999-12-31']] as const) {
          await expectListed(ctx.storage(), 'todos', companyId, dueFilter(zone, from, to), due)
        }
      }
    })

    it("all-day to-dos compare the bound's day and timed ones its instant (dueFrom inclusive, dueTo exclusive)", async () => {
      // Bounds whose day and instant disagree tell which one the adapter compared.
      for (const companyId of [1, 2]) {
        const all = ctx.expected.records('todos', companyId)
        const days = distinct(all.flatMap((todo) => (todo.due_is_all_day && todo.due_day !== null ? [todo.due_day] : [])))
        const instants = distinct(all.flatMap((todo) => (!todo.due_is_all_day && todo.due_at !== null ? [todo.due_at.getTime()] : [])))
        const rounds = Math.max(days.length, instants.length)
        for (let i = 0; i < rounds; i++) {
          const bound: DueBound = {
            day: days[i % days.length] as Day,
            instant: new Date(instants[(rounds - 1 - i) % instants.length] as number),
          }
          const dayOf = (todo: TodoRecord) => (todo.due_is_all_day ? todo.due_day : null)
          const timeOf = (todo: TodoRecord) => (!todo.due_is_all_day && todo.due_at !== null ? todo.due_at.getTime() : null)
          const fromExpected = all.filter((todo) => {
            const day = dayOf(todo)
            const time = timeOf(todo)
            return (day !== null && day >= bound.day) || (time !== null && time >= bound.instant.getTime())
          })
          const toExpected = all.filter((todo) => {
            const day = dayOf(todo)
            const time = timeOf(todo)
            return (day !== null && day <= bound.day) || (time !== null && time < bound.instant.getTime())
          })
          await expectListed(ctx.storage(), 'todos', companyId, { dueFrom: bound }, fromExpected)
          await expectListed(ctx.storage(), 'todos', companyId, { dueTo: bound }, toExpected)
        }
      }
    })

    it('due windows combine with status, listId, assignedTo, important and updatedSince', async () => {
      for (const companyId of [1, 2]) {
        const zone = ctx.expected.timeZone(companyId)
        const all = ctx.expected.records('todos', companyId)
        for (const todo of all) {
          const filter: TodoFilter = {
            ...dueFilter(zone, '2026-03-01', '2026-10-31'),
            status: todo.status,
            listId: todo.list_id,
            important: todo.important,
            updatedSince: todo.updated_at,
            ...(todo.assigned_to === null ? {} : { assignedTo: todo.assigned_to }),
          }
          const expected = all.filter(
            (candidate) =>
              dueOnDays(candidate, zone, '2026-03-01', '2026-10-31') &&
              candidate.status === todo.status &&
              candidate.list_id === todo.list_id &&
              candidate.important === todo.important &&
              candidate.updated_at.getTime() >= todo.updated_at.getTime() &&
              (todo.assigned_to === null || candidate.assigned_to === todo.assigned_to),
          )
          await expectListed(ctx.storage(), 'todos', companyId, filter, expected)
        }
      }
    })
  },
}
