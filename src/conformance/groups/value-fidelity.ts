import { expect, it } from 'vitest'
import type { ConformanceGroup } from '../group.js'
import { WHOLE_LIST, assertSelective, looseRecords, type LooseRecord } from '../list-assertions.js'
import { FIELD_KINDS, LIST_RESOURCES, readerOf, type FieldKinds } from '../resources.js'

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

    for (const resource of LIST_RESOURCES) {
      it(`${resource}: every listed record equals the stored one, field for field`, async () => {
        for (const companyId of [1, 2]) {
          const { actual, expected } = await listedAndExpected(resource, companyId)
          expect(actual, `${resource} of company ${companyId}, listed`).toEqual(expected)
        }
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
