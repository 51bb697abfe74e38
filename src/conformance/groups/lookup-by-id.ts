import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ConformanceGroup } from '../group.js'
import { LIST_RESOURCES, readerOf } from '../resources.js'

/** `get(companyId, id)` and `company(companyId)`: the record, or `null` for an unknown id. */
export const lookupById: ConformanceGroup = {
  title: 'lookup by id',
  requires: [],
  define(ctx) {
    for (const resource of LIST_RESOURCES) {
      it(`${resource}: get returns each of the company's records exactly`, async () => {
        const reader = readerOf(ctx.storage(), resource)
        for (const companyId of [1, 2]) {
          for (const record of ctx.expected.records(resource, companyId)) {
            expect(await reader.get(companyId, record.id), `${resource} get(company ${companyId}, id ${record.id})`).toEqual(record)
          }
        }
      })

      it(`${resource}: get of an id that exists nowhere is null`, async () => {
        const reader = readerOf(ctx.storage(), resource)
        const ids = ctx.expected.companyIds.flatMap((companyId) => ctx.expected.records(resource, companyId).map((row) => row.id))
        const unknown = Math.max(0, ...ids) + 1_000
        for (const companyId of ctx.expected.companyIds) {
          expect(await reader.get(companyId, unknown), `${resource} get(company ${companyId}, unknown id ${unknown})`).toBeNull()
        }
      })
    }

    it('company returns the tenant itself, the empty company 3 included', async () => {
      for (const companyId of ctx.expected.companyIds) {
        expect(await ctx.storage().company(companyId), `company(${companyId})`).toEqual(ctx.expected.company(companyId))
      }
    })

    it('company of an unknown id is null', async () => {
      const unknown = Math.max(...ctx.expected.companyIds) + 1_000
      expect(await ctx.storage().company(unknown), `company(${unknown})`).toBeNull()
    })
  },
}
