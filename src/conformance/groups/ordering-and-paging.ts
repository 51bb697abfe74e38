import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ConformanceGroup } from '../group.js'
import { describeCall, expectListed } from '../list-assertions.js'
import { LIST_RESOURCES, readerOf } from '../resources.js'

const PAGE_SIZE = 7

/** Spec 4.2: lists are ordered by id; a page past the last is empty but keeps the real total. */
export const orderingAndPaging: ConformanceGroup = {
  title: 'ordering and pagination',
  requires: [],
  define(ctx) {
    for (const resource of LIST_RESOURCES) {
      it(`${resource}: lists every row of the company, ordered by id, with the total`, async () => {
        // The fixture is loaded with most tables in descending id order: insertion order is not id order.
        for (const companyId of ctx.expected.companyIds) {
          await expectListed(ctx.storage(), resource, companyId, {}, ctx.expected.records(resource, companyId))
        }
      })

      it(`${resource}: limit/offset pages cover every row once; each page reports the whole total`, async () => {
        const reader = readerOf(ctx.storage(), resource)
        for (const companyId of [1, 2]) {
          const ids = ctx.expected.records(resource, companyId).map((row) => row.id)
          for (let offset = 0; offset < ids.length; offset += PAGE_SIZE) {
            const window = { limit: PAGE_SIZE, offset }
            const page = await reader.list(companyId, {}, window)
            expect({ ids: page.rows.map((row) => row.id), total: page.total }, describeCall(resource, companyId, {}, window)).toEqual({
              ids: ids.slice(offset, offset + PAGE_SIZE),
              total: ids.length,
            })
          }
        }
      })

      it(`${resource}: a window at or past the end is empty and keeps the total; limit 1 reaches the last row`, async () => {
        const reader = readerOf(ctx.storage(), resource)
        for (const companyId of ctx.expected.companyIds) {
          const ids = ctx.expected.records(resource, companyId).map((row) => row.id)
          const cases = [
            { window: { limit: 10, offset: ids.length }, ids: [] },
            { window: { limit: 10, offset: ids.length + 1 }, ids: [] },
            { window: { limit: 100, offset: ids.length + 10_000 }, ids: [] },
            { window: { limit: 1, offset: Math.max(0, ids.length - 1) }, ids: ids.slice(-1) },
            { window: { limit: 100, offset: Math.max(0, ids.length - 3) }, ids: ids.slice(-3) },
          ]
          for (const { window, ids: expected } of cases) {
            const page = await reader.list(companyId, {}, window)
            expect({ ids: page.rows.map((row) => row.id), total: page.total }, describeCall(resource, companyId, {}, window)).toEqual({
              ids: expected,
              total: ids.length,
            })
          }
        }
      })
    }

    it('the fixture is adversarial: ids with gaps, created_at in another order than id (suite self-check)', () => {
      for (const resource of LIST_RESOURCES) {
        for (const companyId of [1, 2]) {
          const rows = ctx.expected.records(resource, companyId)
          const ids = rows.map((row) => row.id)
          const byCreated = [...rows].sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id - b.id).map((row) => row.id)
          const gaps = ids.some((id, index) => index > 0 && id !== (ids[index - 1] as number) + 1)
          const what = `conformance suite bug: ${resource} of company ${companyId}`
          if (!gaps) throw new Error(`${what} has contiguous ids; an adapter minting count + 1 would pass`)
          if (byCreated.join() === ids.join() || byCreated.join() === [...ids].reverse().join()) {
            throw new Error(`${what} has created_at in id order; an adapter ordering by created_at would pass`)
          }
        }
      }
    })

    it('a filtered list pages over the filtered rows and reports the filtered total', async () => {
      const reader = readerOf(ctx.storage(), 'shifts')
      for (const companyId of [1, 2]) {
        const status = 'scheduled'
        const ids = ctx.expected
          .records('shifts', companyId)
          .filter((shift) => shift.status === status)
          .map((shift) => shift.id)
        for (let offset = 0; offset <= ids.length + 3; offset += 3) {
          const window = { limit: 3, offset }
          const page = await reader.list(companyId, { status }, window)
          expect({ ids: page.rows.map((row) => row.id), total: page.total }, describeCall('shifts', companyId, { status }, window)).toEqual({
            ids: ids.slice(offset, offset + 3),
            total: ids.length,
          })
        }
      }
    })
  },
}
