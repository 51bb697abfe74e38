import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { InvitedPerson, PersonRow } from '../../ports/dataset.js'
import type { UserRecord } from '../../ports/records.js'
import type { ConformanceContext } from '../context.js'
import type { ConformanceGroup } from '../group.js'
import { expectListed, WHOLE_LIST } from '../list-assertions.js'
import { WRITE_NOW, afterNow, writeFacts } from '../write-facts.js'
import { CONFLICT, DeliberateRollback, describeOutcome, outcomeOf, pause, storageSnapshot } from '../write-outcomes.js'

const byNumber = (a: number, b: number) => a - b

/** The person whose email a pending user of `companyId` names (the fixture invites existing people). */
function namedPerson(ctx: ConformanceContext, companyId: number, userId: number): PersonRow {
  const email = fixtureUser(ctx, companyId, userId).email.toLowerCase()
  const person = ctx.fixture.people.find((candidate) => candidate.email.toLowerCase() === email)
  if (person === undefined) throw new Error(`conformance suite bug: no person with the email of pending user ${userId}`)
  return person
}

/** The person's user in the company they belong to (an accepted membership). */
function homeUser(ctx: ConformanceContext, person: PersonRow): UserRecord {
  const membership = ctx.fixture.memberships.find((m) => m.person_id === person.id && m.invitation_status === 'accepted')
  if (membership === undefined) throw new Error(`conformance suite bug: person ${person.id} is nobody's member`)
  return fixtureUser(ctx, membership.company_id, membership.user_id)
}

function fixtureUser(ctx: ConformanceContext, companyId: number, userId: number): UserRecord {
  const user = ctx.expected.records('users', companyId).find((candidate) => candidate.id === userId)
  if (user === undefined) throw new Error(`conformance suite bug: user ${userId} is not in company ${companyId}`)
  return user
}

/**
 * Pending users (src/ports/write-storage.ts, docs/adapters.md): every user a company adds is
 * pending, has an id of its own (above every user id, never reused) and no person, and shows only
 * what the company sent until the host accepts; then it is linked to a person and keeps its id.
 * A pending user counts for nothing else — not for exclusivity, not for a person's changes.
 */
export const pendingMemberships: ConformanceGroup = {
  title: 'pending memberships',
  requires: ['writes'],
  define(ctx) {
    const facts = () => writeFacts(ctx.fixture)
    const invitee = () => ctx.edges.pendingInCompany1
    const listUsers = async (companyId: number) => (await ctx.storage().users.list(companyId, {}, WHOLE_LIST)).rows

    it("a pending member is shown from what the inviting company sent: never the person's email, names, login or dates", async () => {
      const id = invitee()
      const person = namedPerson(ctx, 1, id)
      const pending = fixtureUser(ctx, 1, id)
      const home = homeUser(ctx, person)
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
      expect(await ctx.storage().users.get(2, id), `users.get(2, ${id}): company 1's user id names nobody in company 2`).toBeNull()
      expect(await ctx.storage().users.get(2, home.id), `users.get(2, ${home.id}), the person whose email company 1 sent`).toEqual(home)
      const inside = await ctx.writes().transaction((tx) => tx.getUser(1, id))
      expect(inside, `getUser(1, ${id}) inside a transaction`).toEqual(pending)
    })

    it('filters compare what the inviting company sees: its email (any case), active false, the membership dates', async () => {
      const id = invitee()
      const person = namedPerson(ctx, 1, id)
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

    it("setUserActive of the named person's user leaves the pending user alone: the inviting company sees neither the login nor a new updated_at", async () => {
      const id = invitee()
      const home = homeUser(ctx, namedPerson(ctx, 1, id))
      const homeCompany = ctx.fixture.memberships.find((m) => m.user_id === home.id)?.company_id as number
      await ctx.writes().transaction((tx) => tx.setUserActive(homeCompany, home.id, false, WRITE_NOW))
      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}) after the person's login changed`).toEqual(fixtureUser(ctx, 1, id))
      expect(await ctx.storage().users.get(homeCompany, home.id), `users.get(${homeCompany}, ${home.id})`).toEqual({ ...home, active: false, updated_at: WRITE_NOW })
    })

    it('acceptMembership links the person: the company sees them as stored, under its own user id, with its roles and its created_at', async () => {
      const id = invitee()
      const person = namedPerson(ctx, 1, id)
      const pending = fixtureUser(ctx, 1, id)
      const home = homeUser(ctx, person)
      const later = afterNow(7)
      const result = await ctx.writes().transaction(async (tx) => {
        const personId = await tx.findPersonIdByEmail(pending.email.toLowerCase())
        if (personId === null) throw new Error(`findPersonIdByEmail(${pending.email.toLowerCase()}) found nobody`)
        return { personId, accepted: await tx.acceptMembership(1, id, personId, later), companies: await tx.personCompanies(1, id) }
      })
      expect({ personId: result.personId, accepted: result.accepted, companies: [...result.companies].sort(byNumber) }, 'findPersonIdByEmail, acceptMembership and personCompanies').toEqual({
        personId: person.id,
        accepted: true,
        companies: [1, ctx.fixture.memberships.find((m) => m.user_id === home.id)?.company_id].sort((a, b) => (a ?? 0) - (b ?? 0)),
      })
      const expected: UserRecord = {
        ...pending,
        email: person.email,
        first_name: person.first_name,
        last_name: person.last_name,
        active: person.active,
        invitation_status: 'accepted',
        updated_at: later,
      }
      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}) after acceptMembership`).toEqual(expected)
      await expectListed(ctx.storage(), 'users', 1, { email: person.email.toLowerCase() }, [expected], ' (the accepted user, by the person\'s email)')
      const again = await ctx.writes().transaction((tx) => tx.acceptMembership(1, id, person.id, afterNow(8)))
      expect(again, 'acceptMembership of an accepted membership').toBe(false)
      expect(await ctx.storage().users.get(1, id), 'unchanged by the second acceptMembership').toEqual(expected)
    })

    it('removePendingMembership deletes only a pending user, and its id is never given again', async () => {
      const f = facts()
      const id = invitee()
      const accepted = f.exclusiveUser(1)
      const outcome = await ctx.writes().transaction(async (tx) => ({
        accepted: await tx.removePendingMembership(1, accepted),
        foreign: await tx.removePendingMembership(2, id),
        pending: await tx.removePendingMembership(1, id),
        again: await tx.removePendingMembership(1, id),
      }))
      expect(outcome, 'removePendingMembership of an accepted user, of another company\'s id, of the pending user, and again').toEqual({
        accepted: false,
        foreign: false,
        pending: true,
        again: false,
      })
      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}) after the deletion`).toBeNull()
      expect((await listUsers(1)).map((user) => user.id), 'users of company 1').toEqual(others(ctx.expected.records('users', 1), id).map((user) => user.id))
      const sent: InvitedPerson = { email: fixtureUser(ctx, 1, id).email, first_name: 'Invited', last_name: 'Again' }
      const next = await ctx.writes().transaction((tx) => tx.addPendingMembership(1, [], sent, afterNow(9)))
      expect(next > Math.max(f.maxUserId, id), `the id of the user invited again (${next}): above every id given, the removed ${id} included`).toBe(true)
    })

    it('a transaction that adds, accepts and removes pending users, then throws, rolls all of them back', async () => {
      const f = facts()
      const before = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      const outcome = await outcomeOf(
        ctx.writes().transaction(async (tx) => {
          await tx.addPendingMembership(1, f.roleIds(1).slice(0, 1), { email: 'never.added@example.com', first_name: 'Never', last_name: 'Added' }, WRITE_NOW)
          const pending = f.pendingMemberships[0] as { userId: number; companyId: number }
          await tx.acceptMembership(pending.companyId, pending.userId, await tx.createPerson({ email: 'never.person@example.com', first_name: 'Never', last_name: 'Person' }, WRITE_NOW), WRITE_NOW)
          const other = f.pendingMemberships[1] as { userId: number; companyId: number }
          await tx.removePendingMembership(other.companyId, other.userId)
          throw new DeliberateRollback()
        }),
      )
      expect(outcome, 'the transaction rejects with the error work threw').toBe('DeliberateRollback')
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'storage after the rollback').toEqual(before)
    })

    it('of concurrent acceptMembership of one pending user exactly one changes it', async () => {
      const id = invitee()
      const person = namedPerson(ctx, 1, id)
      const runs = 6
      const results = await Promise.allSettled(
        Array.from({ length: runs }, (_, index) =>
          ctx.writes().transaction(async (tx) => {
            await tx.getUser(1, id)
            await pause()
            return tx.acceptMembership(1, id, person.id, afterNow(index))
          }),
        ),
      )
      const changed = results.filter((result) => result.status === 'fulfilled' && result.value === true).length
      const failed = results.filter((result) => result.status === 'rejected').map(describeOutcome)
      expect({ changed, failed: failed.filter((line) => line !== CONFLICT) }, `${runs} concurrent acceptMembership(1, ${id})`).toEqual({ changed: 1, failed: [] })
      expect(await ctx.storage().users.get(1, id), `users.get(1, ${id}) after the race`).toMatchObject({ invitation_status: 'accepted', email: person.email })
    })
  },
}

function others<R extends { id: number }>(rows: R[], id: number): R[] {
  return rows.filter((row) => row.id !== id)
}
