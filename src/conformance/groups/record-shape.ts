import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ConformanceGroup } from '../group.js'
import { WHOLE_LIST } from '../list-assertions.js'
import { LIST_RESOURCES, RECORD_KEYS, readerOf } from '../resources.js'

/** Keys a record has beyond the record type (a private column leaking), or lacks, or leaves `undefined`. */
function shapeProblems(record: object, keys: readonly string[]): { extra: string[]; missing: string[]; undefined: string[] } {
  const own = Object.keys(record)
  const values = record as Record<string, unknown>
  return {
    extra: own.filter((key) => !keys.includes(key)).sort(),
    missing: keys.filter((key) => !Object.hasOwn(record, key)),
    undefined: keys.filter((key) => Object.hasOwn(record, key) && values[key] === undefined),
  }
}

const CLEAN = { extra: [], missing: [], undefined: [] }

/**
 * Spec 2.1's omitted fields stay in storage: a record has exactly its type's keys, never
 * `company_id`, `password_hash`, `salary_cents`, `iban`, `offer_number`, `internal_notes`,
 * `reason` or `km`, and a nullable field is `null`, not missing or `undefined`.
 */
export const recordShape: ConformanceGroup = {
  title: 'record shape (no private or extra fields)',
  requires: [],
  define(ctx) {
    for (const resource of LIST_RESOURCES) {
      it(`${resource}: listed and fetched records have exactly the record type's keys`, async () => {
        const reader = readerOf(ctx.storage(), resource)
        for (const companyId of [1, 2]) {
          const { rows } = await reader.list(companyId, {}, WHOLE_LIST)
          if (rows.length === 0) throw new Error(`${resource} of company ${companyId}: listed no rows to inspect`)
          for (const row of rows) {
            expect(shapeProblems(row, RECORD_KEYS[resource]), `${resource} of company ${companyId}, listed id ${row.id}`).toEqual(CLEAN)
          }
          for (const { id } of ctx.expected.records(resource, companyId)) {
            const record = await reader.get(companyId, id)
            expect(shapeProblems(record ?? {}, RECORD_KEYS[resource]), `${resource} get(company ${companyId}, id ${id})`).toEqual(CLEAN)
          }
        }
      })
    }

    it("company: the record has exactly the company record's keys", async () => {
      for (const companyId of ctx.expected.companyIds) {
        const company = await ctx.storage().company(companyId)
        expect(shapeProblems(company ?? {}, RECORD_KEYS.company), `company(${companyId})`).toEqual(CLEAN)
      }
    })
  },
}
