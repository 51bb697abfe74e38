import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { InvitedPerson, PersonRow } from '../../ports/dataset.js'
import type { UserRecord } from '../../ports/records.js'
import type { ConformanceContext } from '../context.js'
import type { ConformanceGroup } from '../group.js'
import { expectListed, WHOLE_LIST } from '../list-assertions.js'
import { WRITE_NOW, afterNow, writeFacts } from '../write-facts.js'
import { DeliberateRollback, describeOutcome, expectConflicts, expectOneWinner, outcomeOf, pause, storageSnapshot, type LabelledOutcome } from '../write-outcomes.js'

const byNumber = (a: number, b: number) => a - b

function fixturePerson(ctx: ConformanceContext, userId: number): PersonRow {
  const person = ctx.fixture.people.find((candidate) => candidate.id === userId)
  if (person === undefined) throw new Error(`conformance suite bug: no person ${userId}`)
  return person
}

function fixtureUser(ctx: ConformanceContext, companyId: number, userId: number): UserRecord {
  const user = ctx.expected.records('users', companyId).find((candidate) => candidate.id === userId)
  if (user === undefined) throw new Error(`conformance suite bug: user ${userId} is not in company ${companyId}`)
  return user
}

/**
 * Pending memberships (src/ports/write-storage.ts, docs/adapters.md): a company that adds a
 * person who already has a login sees only what it sent until the person accepts; the pending
 * membership counts for nothing else — not for exclusivity, not for the person's changes.
 */
export const pendingMemberships: ConformanceGroup = {
  title: 'pending memberships',
  requires: ['writes'],
  define(ctx) {
    const facts = () => writeFacts(ctx.fixture)
    const invitee = () => ctx.edges.pendingInCompany1
    const listUsers = async (companyId: number) => (await ctx.storage().users.list(companyId, {}, WHOLE_LIST)).rows

    it('the fixture has pending memberships, and membershipCompanies with a status counts only memberships in that state', async () => {
      const f = facts()
      expect(f.pendingMemberships.length, 'pending memberships in the fixture').toBeGreaterThanOrEqual(2)
      const people = ctx.fixture.people
      const actual = await ctx.writes().transaction(async (tx) => {
        const lines: string[] = []
        for (const person of people) {
          const accepted = [...(await tx.membershipCompanies(person.id, 'accepted'))].sort(byNumber)
          const pending = [...(await tx.membershipCompanies(person.id, 'pending'))].sort(byNumber)
          lines.push(`${person.id}: accepted [${accepted.join(', ')}], pending [${pending.join(', ')}]`)
        }
        return lines
      })
      expect(actual, "membershipCompanies(person, 'accepted') and (person, 'pending') of every person, sorted").toEqual(
        people.map((person) => `${person.id}: accepted [${f.companiesOf(person.id, 'accepted').join(', ')}], pending [${f.companiesOf(person.id, 'pending').join(', ')}]`),
      )
    })

    it("a pending member is shown from what the inviting company sent: never the person's email, names, login or dates", async () => {
      const id = invitee()
      const person = fixturePerson(ctx, id)
      const pending = fixtureUser(ctx, 1, id)
      const home = fixtureUser(ctx, 2, id)
      // Guards of the suite: the fixture must make a leak visible.
      expect(
        {
          email: pending.email !== person.email,
          first_name: pending.first_name !== person.first_name,
          last_name: pending.last_name !== person.last_name,
          active: person.active,
          dates: pending.updated_at.getTime() < person.updated_at.getTime(),
        },
        'conformance fixture: the pending member differs from the person in every field',
      ).toEqual({ email: true, first_name: true, last_name: true, active: true, dates: true })
      expect(pending.invitation_status, 'conformance fixture').toBe('pending')

      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}), pending in company 1`).toEqual(pending)
      expect(await ctx.storage().users.get(2, id), `users.get(2, ${id}), accepted in company 2`).toEqual(home)
      const inside = await ctx.writes().transaction((tx) => tx.getUser(1, id))
      expect(inside, `getUser(1, ${id}) inside a transaction`).toEqual(pending)
    })

    it('filters compare what the inviting company sees: its email (any case), active false, the membership dates', async () => {
      const id = invitee()
      const person = fixturePerson(ctx, id)
      const all = ctx.expected.records('users', 1)
      const pending = fixtureUser(ctx, 1, id)
      const only = [pending]
      await expectListed(ctx.storage(), 'users', 1, { email: pending.email.toLowerCase() }, only, ' (the email company 1 sent, lower-cased)')
      await expectListed(ctx.storage(), 'users', 1, { active: false }, all.filter((user) => !user.active), ' (a pending member is inactive)')
      await expectListed(ctx.storage(), 'users', 1, { active: true }, all.filter((user) => user.active), ' (so active: true leaves it out)')
      await expectListed(ctx.storage(), 'users', 1, { email: pending.email.toLowerCase(), active: true }, [], ' (pending, though the person can sign in)')
      await expectListed(
        ctx.storage(),
        'users',
        1,
        { updatedSince: new Date(pending.updated_at.getTime() + 1) },
        all.filter((user) => user.updated_at.getTime() > pending.updated_at.getTime()),
        " (after the membership's last change: the person's later change does not count)",
      )
      expect(
        all.some((user) => user.id === id && user.updated_at.getTime() >= person.updated_at.getTime()),
        'conformance suite bug: the pending member must be dated before the person',
      ).toBe(false)
    })

    it('addPendingMembership stores what the company sent; the person and their other company are untouched', async () => {
      const f = facts()
      const userId = f.exclusiveUser(1)
      const original = fixtureUser(ctx, 1, userId)
      const person = fixturePerson(ctx, userId)
      const roles = f.roleIds(2).slice(0, 2).reverse()
      const invited: InvitedPerson = { email: person.email.toUpperCase(), first_name: 'Sent «by» two', last_name: "O'Two" }
      const inside = await ctx.writes().transaction(async (tx) => {
        await tx.addPendingMembership(2, userId, roles, invited, WRITE_NOW)
        return tx.getUser(2, userId)
      })
      const expected: UserRecord = {
        id: userId,
        ...invited,
        active: false,
        role_ids: roles,
        invitation_status: 'pending',
        created_at: WRITE_NOW,
        updated_at: WRITE_NOW,
      }
      const label = `addPendingMembership(2, ${userId}, [${roles.join(', ')}], ${JSON.stringify(invited)})`
      expect(inside, `getUser(2, ${userId}) inside the transaction of ${label}`).toEqual(expected)
      expect(await ctx.storage().users.get(2, userId), `users.get(2, ${userId}) after ${label}`).toEqual(expected)
      expect(await ctx.storage().users.get(1, userId), `users.get(1, ${userId}): the accepted membership is untouched`).toEqual(original)
      await expectListed(ctx.storage(), 'users', 2, { updatedSince: WRITE_NOW }, [expected], ' (the new pending member)')
      await expectListed(ctx.storage(), 'users', 2, { email: person.email.toLowerCase() }, [expected], ' (by the email company 2 sent)')
      const companies = await ctx.writes().transaction(async (tx) => ({
        all: [...(await tx.membershipCompanies(userId))].sort(byNumber),
        accepted: await tx.membershipCompanies(userId, 'accepted'),
        pending: await tx.membershipCompanies(userId, 'pending'),
      }))
      expect(companies, `membershipCompanies(${userId}): all, accepted, pending`).toEqual({ all: [1, 2], accepted: [1], pending: [2] })

      const before = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      const later = afterNow(1_000)
      const duplicates = [
        { label: `addPendingMembership(2, ${userId}) again`, run: () => ctx.writes().transaction((tx) => tx.addPendingMembership(2, userId, [], invited, later)) },
        { label: `addMembership(2, ${userId}) over the pending one`, run: () => ctx.writes().transaction((tx) => tx.addMembership(2, userId, [], later)) },
        { label: `addPendingMembership(1, ${userId}) over the accepted one`, run: () => ctx.writes().transaction((tx) => tx.addPendingMembership(1, userId, [], invited, later)) },
      ]
      const outcomes: LabelledOutcome[] = []
      for (const duplicate of duplicates) outcomes.push({ label: duplicate.label, outcome: await outcomeOf(duplicate.run()) })
      expectConflicts(outcomes, 'a second membership of the same person and company')
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'storage after the refused duplicates').toEqual(before)
    })

    it('setUserActive leaves a pending membership alone: the inviting company sees neither the login nor a new updated_at', async () => {
      const id = invitee()
      const pending = fixtureUser(ctx, 1, id)
      const home = fixtureUser(ctx, 2, id)
      await ctx.writes().transaction((tx) => tx.setUserActive(id, false, WRITE_NOW))
      expect(await ctx.storage().users.get(2, id), `users.get(2, ${id}) after setUserActive(false)`).toEqual({ ...home, active: false, updated_at: WRITE_NOW })
      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}), pending, after setUserActive(false)`).toEqual(pending)
      const later = afterNow(2_000)
      await ctx.writes().transaction((tx) => tx.setUserActive(id, true, later))
      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}), pending, after setUserActive(true)`).toEqual(pending)
      await expectListed(ctx.storage(), 'users', 1, { updatedSince: WRITE_NOW }, [], ' (the pending member did not change for company 1)')
    })

    it('acceptMembership turns the membership accepted: the company then sees the person as stored, with its roles and its created_at', async () => {
      const id = invitee()
      const person = fixturePerson(ctx, id)
      const pending = fixtureUser(ctx, 1, id)
      const result = await ctx.writes().transaction(async (tx) => ({
        changed: await tx.acceptMembership(1, id, WRITE_NOW),
        inside: await tx.getUser(1, id),
      }))
      const accepted: UserRecord = {
        id,
        email: person.email,
        first_name: person.first_name,
        last_name: person.last_name,
        active: person.active,
        role_ids: pending.role_ids,
        invitation_status: 'accepted',
        created_at: pending.created_at,
        updated_at: WRITE_NOW,
      }
      expect(result, `acceptMembership(1, ${id}) and getUser(1, ${id}) after it`).toEqual({ changed: true, inside: accepted })
      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}) after the commit`).toEqual(accepted)
      expect(await ctx.storage().users.get(2, id), `users.get(2, ${id}): the other company is untouched`).toEqual(fixtureUser(ctx, 2, id))
      await expectListed(ctx.storage(), 'users', 1, { email: person.email.toLowerCase(), active: person.active }, [accepted], ' (accepted: the person as stored)')

      const f = facts()
      const exclusive = f.exclusiveUser(1)
      const before = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      const again = await ctx.writes().transaction(async (tx) => ({
        again: await tx.acceptMembership(1, id, afterNow(1)),
        accepted: await tx.acceptMembership(1, exclusive, afterNow(1)),
        notMember: await tx.acceptMembership(2, exclusive, afterNow(1)),
        unknown: await tx.acceptMembership(1, f.unknownId, afterNow(1)),
        companies: [...(await tx.membershipCompanies(id, 'accepted'))].sort(byNumber),
      }))
      expect(again, 'acceptMembership of an accepted membership, of no membership, and membershipCompanies(accepted) after it').toEqual({
        again: false,
        accepted: false,
        notMember: false,
        unknown: false,
        companies: [1, 2],
      })
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'storage after the refused accepts').toEqual(before)

      // From now on the person is shared: a change to them reaches both companies.
      const later = afterNow(3_000)
      await ctx.writes().transaction((tx) => tx.setUserActive(id, false, later))
      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}) after setUserActive(false)`).toEqual({ ...accepted, active: false, updated_at: later })
    })

    it('removePendingMembership deletes only a pending membership', async () => {
      const id = invitee()
      const f = facts()
      const exclusive = f.exclusiveUser(1)
      const removed = await ctx.writes().transaction(async (tx) => ({
        accepted: await tx.removePendingMembership(2, id),
        otherAccepted: await tx.removePendingMembership(1, exclusive),
        pending: await tx.removePendingMembership(1, id),
        again: await tx.removePendingMembership(1, id),
        unknown: await tx.removePendingMembership(1, f.unknownId),
        inside: await tx.getUser(1, id),
      }))
      expect(removed, `removePendingMembership of accepted memberships, of the pending (1, ${id}), again, of an unknown id`).toEqual({
        accepted: false,
        otherAccepted: false,
        pending: true,
        again: false,
        unknown: false,
        inside: null,
      })
      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}) after the removal`).toBeNull()
      expect(await listUsers(1), 'users of company 1 after the removal').toEqual(ctx.expected.records('users', 1).filter((user) => user.id !== id))
      expect(await ctx.storage().users.get(2, id), `users.get(2, ${id}), accepted, untouched`).toEqual(fixtureUser(ctx, 2, id))
      expect(await ctx.storage().users.get(1, exclusive), `users.get(1, ${exclusive}), accepted, untouched`).toEqual(fixtureUser(ctx, 1, exclusive))
      expect(await ctx.writes().transaction((tx) => tx.membershipCompanies(id)), `membershipCompanies(${id})`).toEqual([2])
    })

    it('a transaction that adds, accepts and removes pending memberships, then throws, rolls all of them back', async () => {
      const f = facts()
      const exclusive = f.exclusiveUser(2)
      const [first, second] = f.pendingMemberships
      if (first === undefined || second === undefined) throw new Error('conformance suite bug: the fixture needs two pending memberships')
      const before = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      const outcome = await outcomeOf(
        ctx.writes().transaction(async (tx) => {
          await tx.addPendingMembership(1, exclusive, [], { email: 'x@example.com', first_name: 'X', last_name: 'Y' }, WRITE_NOW)
          await tx.acceptMembership(first.companyId, first.userId, WRITE_NOW)
          await tx.removePendingMembership(second.companyId, second.userId)
          throw new DeliberateRollback()
        }),
      )
      expect(outcome, 'the transaction').toBe('DeliberateRollback')
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'every list and company after the rollback').toEqual(before)
      const after = await ctx.writes().transaction(async (tx) => ({
        added: await tx.membershipCompanies(exclusive),
        first: await tx.membershipCompanies(first.userId, 'pending'),
        second: await tx.membershipCompanies(second.userId, 'pending'),
      }))
      expect(after, 'membershipCompanies after the rollback').toEqual({
        added: [2],
        first: f.companiesOf(first.userId, 'pending'),
        second: f.companiesOf(second.userId, 'pending'),
      })
    })

    it('of concurrent addPendingMembership of one person to one company exactly one succeeds; the others throw WriteConflict', async () => {
      const f = facts()
      const userId = f.exclusiveUser(1)
      const runs = 8
      const results = await Promise.allSettled(
        Array.from({ length: runs }, (_, index) =>
          ctx.writes().transaction(async (tx) => {
            await tx.membershipCompanies(userId)
            await pause()
            await tx.addPendingMembership(2, userId, [], { email: `Race${index}@Example.com`, first_name: `Racer ${index}`, last_name: 'Pending' }, afterNow(index))
          }),
        ),
      )
      expectOneWinner(results.map(describeOutcome), `${runs} concurrent addPendingMembership(2, ${userId})`)
      const rows = (await listUsers(2)).filter((user) => user.id === userId)
      expect(rows.map((user) => user.invitation_status), `rows of user ${userId} among the users of company 2`).toEqual(['pending'])
    })
  },
}
