import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ConformanceGroup } from '../group.js'
import { assertSelective, distinct, expectListed, looseRecords } from '../list-assertions.js'
import { LIST_RESOURCES, readerOf } from '../resources.js'
import { EQUALITY_FILTERS } from './equality-filters.js'

const EMPTY_COMPANY = 3

/**
 * Every call is scoped to its company: another company's row is never returned, never counted,
 * whichever filter or id is asked for; the empty company 3 sees nothing at all.
 */
export const tenantIsolation: ConformanceGroup = {
  title: 'tenant isolation',
  requires: [],
  define(ctx) {
    for (const resource of LIST_RESOURCES) {
      it(`${resource}: get of another company's id is null`, async () => {
        const reader = readerOf(ctx.storage(), resource)
        for (const companyId of ctx.expected.companyIds) {
          const foreign = ctx.expected.foreignIds(resource, companyId)
          const leaked: number[] = []
          for (const id of foreign) if ((await reader.get(companyId, id)) !== null) leaked.push(id)
          expect(leaked, `${resource}: ids of other companies that get(company ${companyId}, id) returned`).toEqual([])
        }
      })

      it(`${resource}: the empty company lists nothing and counts nothing, whatever the filter`, async () => {
        await expectListed(ctx.storage(), resource, EMPTY_COMPANY, {}, [])
        for (const { filter, field } of EQUALITY_FILTERS.filter((entry) => entry.resource === resource)) {
          for (const value of distinct(looseRecords(ctx.expected, resource, 1).map((row) => row[field] as string | number | boolean))) {
            if (value !== null) await expectListed(ctx.storage(), resource, EMPTY_COMPANY, { [filter]: value }, [])
          }
        }
        if (resource !== 'roles') await expectListed(ctx.storage(), resource, EMPTY_COMPANY, { updatedSince: new Date(0) }, [])
      })
    }

    it("filters naming another company's rows select only the asking company's rows", async () => {
      // The value comes from company 2, the list is company 1's: only company 1's own matches count.
      for (const { resource, filter, field } of EQUALITY_FILTERS) {
        const own = looseRecords(ctx.expected, resource, 1)
        for (const value of distinct(looseRecords(ctx.expected, resource, 2).map((row) => row[field] as string | number | boolean))) {
          if (value === null) continue
          await expectListed(ctx.storage(), resource, 1, { [filter]: value }, own.filter((row) => row[field] === value), ' (value taken from company 2)')
        }
      }
      for (const user of ctx.expected.records('users', 2)) {
        const own = ctx.expected.records('users', 1).filter((candidate) => candidate.email.toLowerCase() === user.email.toLowerCase())
        await expectListed(ctx.storage(), 'users', 1, { email: user.email.toLowerCase() }, own, ' (email of a company 2 user)')
      }
    })

    it('a person in two companies is, in each, the user as that company sees them (its own user id, its roles, its dates)', async () => {
      // User ids are per company (issue 21): the same person has a different id in each.
      const userOf = (companyId: number) => new Map(ctx.fixture.memberships.filter((m) => m.company_id === companyId && m.person_id !== null).map((m) => [m.person_id as number, m.user_id]))
      const inOne = userOf(1)
      const inTwo = userOf(2)
      const pairs = [...inOne].filter(([person]) => inTwo.has(person)).map(([person, id]) => ({ one: id, two: inTwo.get(person) as number }))
      const one = ctx.expected.records('users', 1)
      const two = ctx.expected.records('users', 2)
      assertSelective(pairs, one, 'users shared with company 2')
      for (const pair of pairs) {
        expect(pair.one, `the person's user ids in companies 1 and 2`).not.toBe(pair.two)
        expect(await ctx.storage().users.get(1, pair.one), `users get(company 1, ${pair.one})`).toEqual(one.find((user) => user.id === pair.one))
        expect(await ctx.storage().users.get(2, pair.two), `users get(company 2, ${pair.two})`).toEqual(two.find((user) => user.id === pair.two))
        expect(await ctx.storage().users.get(2, pair.one), `users get(company 2, company 1's id ${pair.one})`).toBeNull()
      }
    })

    it("a pending user shows what its company sent, never the person of another company whose email it names", async () => {
      const pending = ctx.expected.companyIds.flatMap((companyId) =>
        ctx.expected.records('users', companyId).filter((user) => user.invitation_status === 'pending').map((user) => ({ companyId, user })),
      )
      assertSelective(pending, ctx.expected.companyIds.flatMap((companyId) => ctx.expected.records('users', companyId)), 'pending users')
      for (const { companyId, user } of pending) {
        expect(await ctx.storage().users.get(companyId, user.id), `users get(company ${companyId}, pending ${user.id})`).toEqual(user)
        await expectListed(ctx.storage(), 'users', companyId, { email: user.email.toLowerCase() }, [user], ` (company ${companyId}, the email it sent)`)
      }
    })

    it('company returns only the asked company; the empty company exists with its own record', async () => {
      expect(await ctx.storage().company(EMPTY_COMPANY), `company(${EMPTY_COMPANY})`).toEqual(ctx.expected.company(EMPTY_COMPANY))
      for (const companyId of ctx.expected.companyIds) {
        expect((await ctx.storage().company(companyId))?.id, `company(${companyId}).id`).toBe(companyId)
      }
    })
  },
}
