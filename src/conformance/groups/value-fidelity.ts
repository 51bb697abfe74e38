import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ConformanceGroup } from '../group.js'
import { WHOLE_LIST, assertSelective, looseRecords, type LooseRecord } from '../list-assertions.js'
import { FIELD_KINDS, LIST_RESOURCES, readerOf, type FieldKinds } from '../resources.js'
import type { TodoRecord } from '../../ports/records.js'
import type { TodoFields } from '../../ports/write-storage.js'
import { WRITE_NOW, afterNow } from '../write-facts.js'

/** A value with its runtime type, so `"12"` and `12`, or a Date and its ISO string, never look alike. */
export function typed(value: unknown): string {
  if (value === null) return 'null'
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Date(Invalid Date)' : `Date(${value.toISOString()})`
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`
  if (typeof value === 'object') return `${Array.isArray(value) ? 'array' : 'object'} ${JSON.stringify(value)}`
  return `${typeof value} ${String(value)}`
}

const KIND_TITLES: Record<Exclude<keyof FieldKinds, 'structures'>, string> = {
  instants: 'instants are Date objects, exact to the millisecond',
  days: 'days are YYYY-MM-DD strings, the day as entered',
  integers: 'ids, references and integers are numbers (never int8 strings), exact above 2^32',
  booleans: 'booleans are true/false (never 0/1)',
  texts: "text round-trips byte for byte (quotes, non-ASCII, newlines; '' stays '')",
  fractions: 'fractional numbers keep their exact value',
}

/**
 * What comes back is what was stored: every field, with its runtime type. The comparisons show
 * `type value` on both sides, so a failure reads e.g. `string "2026-01-05"` vs `Date(…)`.
 */
export const valueFidelity: ConformanceGroup = {
  title: 'value fidelity',
  timeZoneSensitive: true,
  requires: [],
  define(ctx) {
    const listedAndExpected = async (resource: (typeof LIST_RESOURCES)[number], companyId: number) => {
      const { rows } = await readerOf(ctx.storage(), resource).list(companyId, {}, WHOLE_LIST)
      return { actual: rows as LooseRecord[], expected: looseRecords(ctx.expected, resource, companyId) }
    }

    for (const [kind, title] of Object.entries(KIND_TITLES) as Array<[keyof typeof KIND_TITLES, string]>) {
      it(title, async () => {
        for (const resource of LIST_RESOURCES) {
          const fields = FIELD_KINDS[resource][kind]
          if (fields.length === 0) continue
          for (const companyId of [1, 2]) {
            const { actual, expected } = await listedAndExpected(resource, companyId)
            const view = (rows: LooseRecord[]) => rows.map((row) => [row.id, ...fields.map((field) => `${field}: ${typed(row[field])}`)])
            expect(view(actual), `${resource} of company ${companyId}: ${fields.join(', ')}`).toEqual(view(expected))
          }
        }
      })
    }

    it('JSON-like fields (checklist, tag_ids, source, role_ids, permissions) round-trip exactly, order included', async () => {
      for (const resource of LIST_RESOURCES) {
        const fields = FIELD_KINDS[resource].structures
        if (fields.length === 0) continue
        for (const companyId of [1, 2]) {
          const { actual, expected } = await listedAndExpected(resource, companyId)
          const view = (rows: LooseRecord[]) => rows.map((row) => ({ id: row.id, ...Object.fromEntries(fields.map((field) => [field, row[field]])) }))
          expect(view(actual), `${resource} of company ${companyId}: ${fields.join(', ')}`).toEqual(view(expected))
        }
      }
    })

    it('money: amount_cents is the exact integer count of cents (zero and above 2^32 included)', async () => {
      for (const companyId of [1, 2]) {
        const { actual, expected } = await listedAndExpected('expenses', companyId)
        const amounts = (rows: LooseRecord[]) => rows.map((row) => `${row.id}: ${typed(row.amount_cents)}`)
        expect(amounts(actual), `expenses of company ${companyId}: amount_cents`).toEqual(amounts(expected))
      }
      const big = await ctx.storage().expenses.get(1, ctx.edges.bigAmountExpense)
      expect(big?.amount_cents, `expenses get(1, ${ctx.edges.bigAmountExpense}).amount_cents`).toBe(12_345_678_901_234)
      const zero = await ctx.storage().expenses.get(2, ctx.edges.zeroAmountExpense)
      expect(zero?.amount_cents, `expenses get(2, ${ctx.edges.zeroAmountExpense}).amount_cents`).toBe(0)
    })

    it('the edge to-do comes back exactly: non-ASCII text, empty-string notes, checklist, tags, source above 2^32', async () => {
      const expected = ctx.expected.records('todos', 1).find((todo) => todo.id === ctx.edges.unicodeTodo)
      expect(await ctx.storage().todos.get(1, ctx.edges.unicodeTodo), `todos get(1, ${ctx.edges.unicodeTodo})`).toEqual(expected)
      expect(expected?.notes).toBe('')
    })

    // One test for every resource (not one each): the group runs under three time zones.
    it('every listed record equals the stored one, field for field, in every resource', async () => {
      for (const resource of LIST_RESOURCES) {
        for (const companyId of [1, 2]) {
          const { actual, expected } = await listedAndExpected(resource, companyId)
          expect(actual, `${resource} of company ${companyId}, listed`).toEqual(expected)
        }
      }
    })

    it('get returns the same values as list: days and instants with their types, then every field', async () => {
      for (const resource of LIST_RESOURCES) {
        const reader = readerOf(ctx.storage(), resource)
        const fields = [...FIELD_KINDS[resource].days, ...FIELD_KINDS[resource].instants]
        for (const companyId of [1, 2]) {
          const expected = looseRecords(ctx.expected, resource, companyId)
          const actual: LooseRecord[] = []
          for (const record of expected) actual.push(((await reader.get(companyId, record.id)) as LooseRecord | null) ?? { id: record.id, get: 'null' })
          const view = (rows: LooseRecord[]) => rows.map((row) => [row.id, ...fields.map((field) => `${field}: ${typed(row[field])}`)])
          expect(view(actual), `${resource} of company ${companyId}, each by get: ${fields.join(', ')}`).toEqual(view(expected))
          expect(actual, `${resource} of company ${companyId}, each by get`).toEqual(expected)
        }
      }
    })

    if (ctx.supports.writes) {
      it('days and instants written through the write port come back exact (insertTodo, updateTodo)', async () => {
        const list = ctx.fixture.todoLists.find((candidate) => candidate.company_id === 1)
        if (list === undefined) throw new Error('conformance suite bug: company 1 has no to-do list')
        const base: Omit<TodoFields, 'due_day' | 'due_at' | 'due_is_all_day'> = {
          title: 'Day round trip',
          notes: null,
          status: 'open',
          priority: 'low',
          important: false,
          list_id: list.id,
          assigned_to: null,
          assignee_group_id: null,
        }
        // A year's first day and a month's first day: a day shifted through a time zone lands in another year or month.
        const allDay: TodoFields = { ...base, due_day: '2027-01-01', due_at: null, due_is_all_day: true }
        const timed: TodoFields = { ...base, due_day: null, due_at: new Date('2027-01-01T00:30:00.001Z'), due_is_all_day: false }
        const later = afterNow(1_234)
        const written = await ctx.writes().transaction(async (tx) => {
          const first = await tx.insertTodo(1, allDay, WRITE_NOW)
          const second = await tx.insertTodo(1, timed, WRITE_NOW)
          const moved = await tx.updateTodo(1, first.id, { due_day: '2027-03-01' }, later)
          return { first, second, moved, readBack: await tx.getTodoForUpdate(1, first.id) }
        })
        const instantsAndDays = (todo: TodoRecord | null) =>
          todo === null ? 'null' : { due_day: typed(todo.due_day), due_at: typed(todo.due_at), created_at: typed(todo.created_at), updated_at: typed(todo.updated_at) }
        const expectedFirst = { due_day: typed('2027-01-01'), due_at: 'null', created_at: typed(WRITE_NOW), updated_at: typed(WRITE_NOW) }
        const expectedMoved = { ...expectedFirst, due_day: typed('2027-03-01'), updated_at: typed(later) }
        const expectedSecond = { due_day: 'null', due_at: typed(timed.due_at), created_at: typed(WRITE_NOW), updated_at: typed(WRITE_NOW) }
        expect(
          {
            'insertTodo (all-day 2027-01-01) returned': instantsAndDays(written.first),
            'insertTodo (due 2027-01-01T00:30:00.001Z) returned': instantsAndDays(written.second),
            'updateTodo (due_day 2027-03-01) returned': instantsAndDays(written.moved),
            'getTodoForUpdate after the update': instantsAndDays(written.readBack),
            'todos.get of the all-day to-do after the commit': instantsAndDays(await ctx.storage().todos.get(1, written.first.id)),
            'todos.get of the timed to-do after the commit': instantsAndDays(await ctx.storage().todos.get(1, written.second.id)),
          },
          'due_day, due_at, created_at and updated_at of to-dos written in this time zone',
        ).toEqual({
          'insertTodo (all-day 2027-01-01) returned': expectedFirst,
          'insertTodo (due 2027-01-01T00:30:00.001Z) returned': expectedSecond,
          'updateTodo (due_day 2027-03-01) returned': expectedMoved,
          'getTodoForUpdate after the update': expectedMoved,
          'todos.get of the all-day to-do after the commit': expectedMoved,
          'todos.get of the timed to-do after the commit': expectedSecond,
        })
      })
    }

    it('the fixture exercises every kind (suite self-check)', () => {
      const expenses = ctx.fixture.expenses
      assertSelective(expenses.filter((row) => row.amount_cents % 100 !== 0), expenses, 'amounts with cents')
      const withMs = ctx.fixture.shifts.filter((row) => row.updated_at.getUTCMilliseconds() !== 0)
      assertSelective(withMs, ctx.fixture.shifts, 'instants with milliseconds')
    })
  },
}
