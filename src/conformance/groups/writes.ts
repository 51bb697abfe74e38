import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { TodoFields, WriteTransaction } from '../../ports/write-storage.js'
import type { TodoRecord, UserRecord } from '../../ports/records.js'
import type { ConformanceContext } from '../context.js'
import type { ConformanceGroup } from '../group.js'
import { WHOLE_LIST } from '../list-assertions.js'
import { CREATED_RESPONSE, attempt, responseOf, sha256 } from '../idempotency-requests.js'
import { WRITE_NOW, afterNow, writeFacts } from '../write-facts.js'
import { DeliberateRollback, describeOutcome, expectConflicts, expectOneWinner, outcomeOf, pause, storageSnapshot, type LabelledOutcome } from '../write-outcomes.js'

const byNumber = (a: number, b: number) => a - b

/** The user a company sees, as the fixture says, or a suite bug. */
function fixtureUser(ctx: ConformanceContext, companyId: number, userId: number): UserRecord {
  const user = ctx.expected.records('users', companyId).find((candidate) => candidate.id === userId)
  if (user === undefined) throw new Error(`conformance suite bug: user ${userId} is not in company ${companyId}`)
  return user
}

function fixtureTodo(ctx: ConformanceContext, companyId: number, id: number): TodoRecord {
  const todo = ctx.expected.records('todos', companyId).find((candidate) => candidate.id === id)
  if (todo === undefined) throw new Error(`conformance suite bug: to-do ${id} is not in company ${companyId}`)
  return todo
}

/** The writable fields of a to-do: a valid `insertTodo` argument copied from an existing one. */
function fieldsOf(todo: TodoRecord): TodoFields {
  const { title, notes, status, priority, important, due_day, due_at, due_is_all_day, list_id, assigned_to, assignee_group_id } = todo
  return { title, notes, status, priority, important, due_day, due_at, due_is_all_day, list_id, assigned_to, assignee_group_id }
}

async function sequentially<T, R>(items: readonly T[], call: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = []
  for (const item of items) results.push(await call(item))
  return results
}

/** Every record of `rows` but `id`: what must stay untouched around a write to `id`. */
function others<R extends { id: number }>(rows: R[], id: number): R[] {
  return rows.filter((row) => row.id !== id)
}

/**
 * The `WriteStorage` port (src/ports/write-storage.ts): each `WriteTransaction` operation against
 * the fixture, atomicity (all or nothing), uniqueness (`WriteConflict`) and concurrent transactions.
 */
export const writesGroup: ConformanceGroup = {
  title: 'writes',
  requires: ['writes'],
  define(ctx) {
    const facts = () => writeFacts(ctx.fixture)
    const listUsers = async (companyId: number) => (await ctx.storage().users.list(companyId, {}, WHOLE_LIST)).rows
    const listTodos = async (companyId: number) => (await ctx.storage().todos.list(companyId, {}, WHOLE_LIST)).rows

    it("lookups answer from the stored rows: a company's users by email, people by email, a user's companies, roles and lists, never across companies", async () => {
      const f = facts()
      const people = ctx.fixture.people
      const roleIds = ctx.fixture.roles.map((role) => role.id)
      const lists = ctx.fixture.todoLists
      const companyIds = ctx.expected.companyIds
      const users = companyIds.flatMap((companyId) => ctx.expected.records('users', companyId).map((user) => ({ companyId, user })))
      const actual = await ctx.writes().transaction(async (tx) => {
        const members: string[] = []
        for (const companyId of companyIds) {
          for (const person of people) {
            members.push(`company ${companyId}, ${person.email.toLowerCase()} → ${await tx.findMemberIdByEmail(companyId, person.email.toLowerCase())}`)
          }
        }
        const invited: string[] = []
        for (const { companyId, user } of users.filter(({ user }) => user.invitation_status === 'pending')) {
          invited.push(`company ${companyId}, ${user.email.toUpperCase()} lower-cased → ${await tx.findMemberIdByEmail(companyId, user.email.toLowerCase())}`)
        }
        const emails: string[] = []
        for (const person of people) emails.push(`${person.email.toLowerCase()} → ${await tx.findPersonIdByEmail(person.email.toLowerCase())}`)
        const shares: string[] = []
        for (const { companyId, user } of users) shares.push(`company ${companyId}, user ${user.id}: [${[...(await tx.personCompanies(companyId, user.id))].sort(byNumber).join(', ')}]`)
        const roles: string[] = []
        for (const companyId of companyIds) {
          roles.push(`company ${companyId}, every role id: [${[...(await tx.existingRoleIds(companyId, [...roleIds, f.unknownId]))].sort(byNumber).join(', ')}]`)
          roles.push(`company ${companyId}, no role ids: [${(await tx.existingRoleIds(companyId, [])).join(', ')}]`)
        }
        const listAnswers: string[] = []
        for (const companyId of companyIds) {
          for (const listId of [...lists.map((list) => list.id), f.unknownId]) {
            listAnswers.push(`company ${companyId}, list ${listId}: ${String(await tx.todoListExists(companyId, listId))}`)
          }
        }
        return {
          members,
          invited,
          emails,
          unknownEmail: await tx.findPersonIdByEmail('nobody.at.all@example.invalid'),
          shares,
          unknownMember: await tx.personCompanies(1, f.unknownId),
          roles,
          lists: listAnswers,
        }
      })
      // An accepted user by the person's email; never a person who is not the company's accepted member.
      expect(actual.members, "findMemberIdByEmail(company, a person's lower-cased email): the company's accepted user of that person, or null").toEqual(
        companyIds.flatMap((companyId) =>
          people.map((person) => {
            const user = users.find(({ companyId: c, user }) => c === companyId && user.invitation_status === 'accepted' && f.personOf(c, user.id) === person.id)
            const pending = users.find(({ companyId: c, user }) => c === companyId && user.invitation_status === 'pending' && user.email.toLowerCase() === person.email.toLowerCase())
            return `company ${companyId}, ${person.email.toLowerCase()} → ${user?.user.id ?? pending?.user.id ?? null}`
          }),
        ),
      )
      expect(actual.invited, 'findMemberIdByEmail(company, the email a pending user was invited with, lower-cased)').toEqual(
        users
          .filter(({ user }) => user.invitation_status === 'pending')
          .map(({ companyId, user }) => `company ${companyId}, ${user.email.toUpperCase()} lower-cased → ${user.id}`),
      )
      expect(actual.emails, 'findPersonIdByEmail(lower-cased email) of every person').toEqual(people.map((person) => `${person.email.toLowerCase()} → ${person.id}`))
      expect(actual.unknownEmail, 'findPersonIdByEmail of an email nobody has').toBeNull()
      expect(actual.shares, "personCompanies(company, user) of every user: the companies of the user's person, accepted only; [] while pending").toEqual(
        users.map(({ companyId, user }) => {
          const personId = f.personOf(companyId, user.id)
          return `company ${companyId}, user ${user.id}: [${personId === null ? '' : f.companiesOf(personId, 'accepted').join(', ')}]`
        }),
      )
      expect(actual.unknownMember, `personCompanies(1, ${f.unknownId}), an unknown user`).toEqual([])
      expect(actual.roles, 'existingRoleIds(company, every role id of the fixture and an unknown one), sorted').toEqual(
        companyIds.flatMap((companyId) => [
          `company ${companyId}, every role id: [${f.roleIds(companyId).join(', ')}]`,
          `company ${companyId}, no role ids: []`,
        ]),
      )
      expect(actual.lists, 'todoListExists(company, list) for every list of the fixture and an unknown one').toEqual(
        companyIds.flatMap((companyId) => [
          ...lists.map((list) => `company ${companyId}, list ${list.id}: ${String(list.company_id === companyId)}`),
          `company ${companyId}, list ${f.unknownId}: false`,
        ]),
      )
    })

    it("getUser and getTodoForUpdate return the company's records exactly, null for another company's or an unknown id", async () => {
      const f = facts()
      const expectedUsers = [1, 2].flatMap((companyId) => ctx.expected.records('users', companyId).map((user) => ({ companyId, user })))
      const expectedTodos = [1, 2].flatMap((companyId) => ctx.expected.records('todos', companyId).map((todo) => ({ companyId, todo })))
      const foreignUser = ctx.expected.foreignIds('users', 1)[0]
      if (foreignUser === undefined) throw new Error('conformance suite bug: every user of company 2 is also in company 1')
      // One call at a time, as the plugin makes them: a transaction need not take concurrent calls.
      const actual = await ctx.writes().transaction(async (tx) => ({
        users: await sequentially(expectedUsers, ({ companyId, user }) => tx.getUser(companyId, user.id)),
        todos: await sequentially(expectedTodos, ({ companyId, todo }) => tx.getTodoForUpdate(companyId, todo.id)),
        foreign: {
          user: await tx.getUser(1, foreignUser),
          todo: await tx.getTodoForUpdate(1, f.todoOfCompany2),
        },
        unknown: { user: await tx.getUser(1, f.unknownId), todo: await tx.getTodoForUpdate(1, f.unknownId) },
      }))
      expect(actual.users, 'getUser(company, id) of every user of companies 1 and 2').toEqual(expectedUsers.map(({ user }) => user))
      expect(actual.todos, 'getTodoForUpdate(company, id) of every to-do of companies 1 and 2').toEqual(expectedTodos.map(({ todo }) => todo))
      expect(actual.foreign, `getUser(1, ${foreignUser}) and getTodoForUpdate(1, ${f.todoOfCompany2}), rows of company 2 only`).toEqual({
        user: null,
        todo: null,
      })
      expect(actual.unknown, `getUser and getTodoForUpdate of company 1, unknown id ${f.unknownId}`).toEqual({ user: null, todo: null })
    })

    it('addPendingMembership stores what the company sent under a fresh id above every user id, acceptMembership links a person and keeps the id', async () => {
      const f = facts()
      const role = f.roleIds(1)[0] as number
      const sent = { email: 'Zoë.ÉLODIE+New_Hire@Example.ORG', first_name: 'Zoë Élodie', last_name: "D'Àngelo “Jr”" }
      const second = { email: 'second.person@example.com', first_name: 'Second', last_name: 'Person' }
      const created = await ctx.writes().transaction(async (tx) => {
        const firstId = await tx.addPendingMembership(1, [role], sent, WRITE_NOW)
        const secondId = await tx.addPendingMembership(2, [], second, WRITE_NOW)
        return {
          firstId,
          secondId,
          foundInside: await tx.findMemberIdByEmail(1, sent.email.toLowerCase()),
          notInOther: await tx.findMemberIdByEmail(2, sent.email.toLowerCase()),
          userInside: await tx.getUser(1, firstId),
          companies: await tx.personCompanies(1, firstId),
        }
      })
      const { firstId, secondId } = created
      expect(
        { firstAboveFixture: firstId > f.maxUserId, secondAboveFirst: secondId > firstId },
        `addPendingMembership ids ${firstId}, ${secondId}; the fixture's largest user id is ${f.maxUserId}`,
      ).toEqual({ firstAboveFixture: true, secondAboveFirst: true })
      const pending: UserRecord = {
        id: firstId,
        ...sent,
        active: false,
        role_ids: [role],
        invitation_status: 'pending',
        created_at: WRITE_NOW,
        updated_at: WRITE_NOW,
      }
      expect(created.foundInside, 'findMemberIdByEmail(1, lower-cased) inside the creating transaction').toBe(firstId)
      expect(created.notInOther, 'findMemberIdByEmail(2, …) of company 1\'s new user').toBeNull()
      expect(created.userInside, 'getUser(1, new user) inside the creating transaction').toEqual(pending)
      expect(created.companies, 'personCompanies of a pending user (no person yet)').toEqual([])
      expect(await ctx.storage().users.get(1, firstId), `users.get(1, ${firstId}) after the commit`).toEqual(pending)
      expect(await ctx.storage().users.get(2, firstId), `users.get(2, ${firstId}): a user of company 1 only`).toBeNull()
      expect((await listUsers(1)).map((row) => row.id), 'users of company 1 after the commit').toEqual([...ctx.expected.records('users', 1).map((row) => row.id), firstId])

      const later = afterNow(2_000)
      const accepted = await ctx.writes().transaction(async (tx) => {
        const person = await tx.createPerson(sent, later)
        return { person, accepted: await tx.acceptMembership(1, firstId, person, later), again: await tx.acceptMembership(1, firstId, person, later) }
      })
      expect(accepted.person > f.maxPersonId, `createPerson id ${accepted.person} above the fixture's largest person id ${f.maxPersonId}`).toBe(true)
      expect({ accepted: accepted.accepted, again: accepted.again }, 'acceptMembership of the pending user, then again').toEqual({ accepted: true, again: false })
      const member: UserRecord = { ...pending, active: true, invitation_status: 'accepted', updated_at: later }
      expect(await ctx.storage().users.get(1, firstId), `users.get(1, ${firstId}) after acceptMembership: the person as stored, the same id`).toEqual(member)
      const after = await ctx.writes().transaction(async (tx) => ({
        person: await tx.findPersonIdByEmail(sent.email.toLowerCase()),
        member: await tx.findMemberIdByEmail(1, sent.email.toUpperCase().toLowerCase()),
        companies: await tx.personCompanies(1, firstId),
      }))
      expect(after, 'findPersonIdByEmail, findMemberIdByEmail and personCompanies after the acceptance').toEqual({ person: accepted.person, member: firstId, companies: [1] })
    })

    it('acceptMembership links an existing person: each company keeps its own user id for them; a second membership of the person in one company throws WriteConflict', async () => {
      const f = facts()
      const exclusive = f.exclusiveUser(1)
      const personId = f.personOf(1, exclusive) as number
      const original = fixtureUser(ctx, 1, exclusive)
      const roles = f.roleIds(2).slice(0, 2).reverse()
      const userOf2 = await ctx.writes().transaction(async (tx) => {
        const id = await tx.addPendingMembership(2, roles, { email: original.email.toUpperCase(), first_name: 'Sent', last_name: 'By Two' }, WRITE_NOW)
        await tx.acceptMembership(2, id, personId, WRITE_NOW)
        return id
      })
      expect(userOf2 !== exclusive && userOf2 > f.maxUserId, `company 2's user id ${userOf2} for the person whose user id in company 1 is ${exclusive}`).toBe(true)
      expect(await ctx.storage().users.get(2, userOf2), `users.get(2, ${userOf2}): the person as stored, company 2's roles and dates`).toEqual({
        ...original,
        id: userOf2,
        role_ids: roles,
        created_at: WRITE_NOW,
        updated_at: WRITE_NOW,
      })
      expect(await ctx.storage().users.get(2, exclusive), `users.get(2, ${exclusive}): company 1's id means nothing in company 2`).toBeNull()
      expect(await ctx.storage().users.get(1, exclusive), `users.get(1, ${exclusive}): untouched`).toEqual(original)
      const companies = await ctx.writes().transaction(async (tx) => ({ one: await tx.personCompanies(1, exclusive), two: await tx.personCompanies(2, userOf2) }))
      expect({ one: [...companies.one].sort(byNumber), two: [...companies.two].sort(byNumber) }, 'personCompanies from either company').toEqual({ one: [1, 2], two: [1, 2] })

      const before = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      const outcome = await outcomeOf(
        ctx.writes().transaction(async (tx) => {
          const again = await tx.addPendingMembership(2, [], { email: 'other.address@example.com', first_name: 'Same', last_name: 'Person' }, afterNow(1_000))
          await tx.acceptMembership(2, again, personId, afterNow(1_000))
        }),
      )
      expectConflicts([{ label: `acceptMembership(2, …, person ${personId}), already a member of company 2`, outcome }], 'a second membership of one person')
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'storage after the refused acceptance').toEqual(before)
    })

    it('createPerson of an email that exists in another case throws WriteConflict and writes nothing', async () => {
      const edge = ctx.fixture.people.find((person) => person.id === ctx.edges.person)
      const plain = ctx.fixture.people.find((person) => person.email === person.email.toLowerCase())
      if (edge === undefined || plain === undefined) throw new Error('conformance suite bug: the fixture lacks the edge or a lower-case email')
      const before = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      const attempts = [
        { label: `${edge.email} upper-cased`, email: edge.email.toUpperCase() },
        { label: `${edge.email} lower-cased`, email: edge.email.toLowerCase() },
        { label: `${plain.email} upper-cased`, email: plain.email.toUpperCase() },
        { label: `${plain.email} as stored`, email: plain.email },
      ]
      const outcomes: LabelledOutcome[] = []
      for (const { label, email } of attempts) {
        const outcome = await outcomeOf(ctx.writes().transaction((tx) => tx.createPerson({ email, first_name: 'Dup', last_name: 'Licate' }, WRITE_NOW)))
        outcomes.push({ label, outcome })
      }
      // The duplicate of a person created earlier in the same transaction.
      const fresh = 'Fresh.Person@Example.com'
      outcomes.push({
        label: `${fresh} twice in one transaction`,
        outcome: await outcomeOf(
          ctx.writes().transaction(async (tx) => {
            await tx.createPerson({ email: fresh, first_name: 'Fresh', last_name: 'Person' }, WRITE_NOW)
            await tx.createPerson({ email: fresh.toLowerCase(), first_name: 'Fresh', last_name: 'Again' }, WRITE_NOW)
          }),
        ),
      })
      expectConflicts(outcomes, 'createPerson of an existing email')
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'storage after the refused duplicates').toEqual(before)
      const found = await ctx.writes().transaction(async (tx) => ({
        edge: await tx.findPersonIdByEmail(edge.email.toLowerCase()),
        fresh: await tx.findPersonIdByEmail(fresh.toLowerCase()),
      }))
      expect(found, 'findPersonIdByEmail after the refused duplicates: the original, and nothing for the rolled-back one').toEqual({
        edge: edge.id,
        fresh: null,
      })
    })

    it('addPendingMembership of an email the company already has (pending or accepted, any case) throws WriteConflict and writes nothing', async () => {
      const f = facts()
      const accepted = fixtureUser(ctx, 1, f.exclusiveUser(1))
      const pending = ctx.expected.records('users', 1).find((user) => user.invitation_status === 'pending')
      if (pending === undefined) throw new Error('conformance suite bug: company 1 has no pending user')
      const before = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      const outcomes: LabelledOutcome[] = []
      for (const [label, email] of [
        [`${accepted.email} upper-cased, an accepted user's`, accepted.email.toUpperCase()],
        [`${pending.email} lower-cased, a pending user's`, pending.email.toLowerCase()],
      ] as const) {
        outcomes.push({ label, outcome: await outcomeOf(ctx.writes().transaction((tx) => tx.addPendingMembership(1, [], { email, first_name: 'Dup', last_name: 'Licate' }, WRITE_NOW))) })
      }
      expectConflicts(outcomes, 'addPendingMembership of an email the company has')
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'storage after the refused duplicates').toEqual(before)
      // Another company's user with that email is no conflict: each company has its own users.
      const other = await ctx.writes().transaction((tx) => tx.addPendingMembership(2, [], { email: accepted.email, first_name: 'Sent', last_name: 'By Two' }, WRITE_NOW))
      expect(await ctx.storage().users.get(2, other), `company 2's user ${other} with company 1's user's email`).toMatchObject({ email: accepted.email, invitation_status: 'pending', active: false })
    })

    it("setUserActive sets the login of the user's person and bumps updated_at of every accepted membership of the person, nothing else", async () => {
      const f = facts()
      const shared = f.sharedUser
      const sharedIn2 = f.sharedUserIn(2)
      const exclusive = f.exclusiveUser(1)
      const deactivated = await ctx.writes().transaction(async (tx) => {
        await tx.setUserActive(1, shared, false, WRITE_NOW)
        await tx.setUserActive(1, exclusive, false, WRITE_NOW)
        return { 1: await tx.getUser(1, shared), 2: await tx.getUser(2, sharedIn2), exclusive: await tx.getUser(1, exclusive) }
      })
      const expectedAt = (active: boolean, at: Date) => ({
        1: { ...fixtureUser(ctx, 1, shared), active, updated_at: at },
        2: { ...fixtureUser(ctx, 2, sharedIn2), active, updated_at: at },
        exclusive: { ...fixtureUser(ctx, 1, exclusive), active, updated_at: at },
      })
      const stored = async () => ({
        1: await ctx.storage().users.get(1, shared),
        2: await ctx.storage().users.get(2, sharedIn2),
        exclusive: await ctx.storage().users.get(1, exclusive),
      })
      const label = `user ${shared} (companies 1 and 2) and user ${exclusive} (company 1 only)`
      expect(deactivated, `getUser inside the transaction after setUserActive(false): ${label}`).toEqual(expectedAt(false, WRITE_NOW))
      expect(await stored(), `users.get after setUserActive(false): ${label}`).toEqual(expectedAt(false, WRITE_NOW))

      const later = afterNow(1_001)
      await ctx.writes().transaction((tx) => tx.setUserActive(2, sharedIn2, true, later))
      expect((await stored())[1], `users.get(1, ${shared}) after setUserActive(2, ${sharedIn2}, true)`).toEqual(expectedAt(true, later)[1])
      expect((await stored())[2], `users.get(2, ${sharedIn2}) after setUserActive(2, ${sharedIn2}, true)`).toEqual(expectedAt(true, later)[2])
      for (const [companyId, id] of [[1, shared], [2, sharedIn2]] as const) {
        const untouched = others(others(ctx.expected.records('users', companyId), id), exclusive)
        expect(others(others(await listUsers(companyId), id), exclusive), `the other users of company ${companyId}`).toEqual(untouched)
      }
      // Company 1's user id names nobody in company 2, and a pending user has no login to change.
      const pending = f.pendingMemberships[0] as { userId: number; companyId: number }
      const snapshot = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      await ctx.writes().transaction(async (tx) => {
        await tx.setUserActive(2, shared === sharedIn2 ? f.unknownId : shared, false, afterNow(3_000))
        await tx.setUserActive(pending.companyId, pending.userId, true, afterNow(3_000))
      })
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'storage after setUserActive of a foreign id and of a pending user').toEqual(snapshot)
    })

    it('insertTodo stores the fields with the defaults and returns the full record, as todos.get then does', async () => {
      const f = facts()
      const [list, otherList] = f.listIds(1)
      const member = f.exclusiveUser(1)
      const role = f.roleIds(1)[0]
      if (list === undefined || otherList === undefined || role === undefined) throw new Error('conformance suite bug: company 1 needs two lists and a role')
      const timed: TodoFields = {
        title: 'Überprüfung ✓ «cantiere» 🚧 "quoted" \'apostrophe\'\nsecond line',
        notes: '',
        status: 'open',
        priority: 'urgent',
        important: true,
        due_day: null,
        due_at: new Date('2027-02-10T22:59:59.999Z'),
        due_is_all_day: false,
        list_id: list,
        assigned_to: member,
        assignee_group_id: null,
      }
      const allDay: TodoFields = {
        title: 'All-day, offered to a role',
        notes: null,
        status: 'waiting',
        priority: 'low',
        important: false,
        due_day: '2027-02-28',
        due_at: null,
        due_is_all_day: true,
        list_id: otherList,
        assigned_to: null,
        assignee_group_id: role,
      }
      const inserted = await ctx.writes().transaction(async (tx) => {
        const first = await tx.insertTodo(1, timed, WRITE_NOW)
        const second = await tx.insertTodo(1, allDay, WRITE_NOW)
        return { first, second, readBack: await tx.getTodoForUpdate(1, first.id) }
      })
      const defaults = { claimed_by: null, checklist: [], tag_ids: [], source: null, created_at: WRITE_NOW, updated_at: WRITE_NOW }
      const expectedFirst: TodoRecord = { id: inserted.first.id, ...timed, ...defaults }
      const expectedSecond: TodoRecord = { id: inserted.second.id, ...allDay, ...defaults }
      expect(
        { firstAboveFixture: inserted.first.id > f.maxTodoId, secondAboveFirst: inserted.second.id > inserted.first.id },
        `insertTodo ids ${inserted.first.id}, ${inserted.second.id}; the fixture's largest to-do id is ${f.maxTodoId}`,
      ).toEqual({ firstAboveFixture: true, secondAboveFirst: true })
      expect(inserted.first, 'insertTodo (due instant, assigned) returned').toEqual(expectedFirst)
      expect(inserted.second, 'insertTodo (all-day, offered to a role) returned').toEqual(expectedSecond)
      expect(inserted.readBack, 'getTodoForUpdate of the new to-do inside the transaction').toEqual(expectedFirst)
      expect(await ctx.storage().todos.get(1, expectedFirst.id), `todos.get(1, ${expectedFirst.id}) after the commit`).toEqual(expectedFirst)
      expect(await ctx.storage().todos.get(1, expectedSecond.id), `todos.get(1, ${expectedSecond.id}) after the commit`).toEqual(expectedSecond)
      expect(await ctx.storage().todos.get(2, expectedFirst.id), `todos.get(2, ${expectedFirst.id}): a to-do of company 1`).toBeNull()
      expect(await listTodos(2), 'to-dos of company 2').toEqual(ctx.expected.records('todos', 2))
    })

    it('updateTodo writes only the given fields and updated_at, and returns the to-do after the change', async () => {
      const f = facts()
      const id = ctx.edges.unicodeTodo
      const [, otherList] = f.listIds(1)
      const role = f.roleIds(1)[1]
      if (otherList === undefined || role === undefined) throw new Error('conformance suite bug: company 1 needs two lists and two roles')
      const steps: Array<{ label: string; changes: Partial<TodoFields> }> = [
        { label: 'a new title', changes: { title: 'Renamed — «ok» ✓' } },
        { label: 'notes and due_at cleared with null', changes: { notes: null, due_at: null } },
        {
          label: 'status, priority, important, an all-day due day, list and assignment',
          changes: {
            status: 'done',
            priority: 'low',
            important: false,
            due_day: '2027-03-01',
            due_is_all_day: true,
            list_id: otherList,
            assigned_to: null,
            assignee_group_id: role,
          },
        },
        { label: 'back to a due instant', changes: { due_day: null, due_at: new Date('2027-04-01T00:00:00.001Z'), due_is_all_day: false } },
      ]
      let expected = fixtureTodo(ctx, 1, id)
      for (const [index, step] of steps.entries()) {
        const at = afterNow(index * 1_000 + 7)
        expected = { ...expected, ...step.changes, updated_at: at }
        const returned = await ctx.writes().transaction((tx) => tx.updateTodo(1, id, step.changes, at))
        const label = `step ${index + 1}, ${step.label}: updateTodo(1, ${id}, ${JSON.stringify(step.changes)})`
        expect(returned, `${label} returned`).toEqual(expected)
        expect(await ctx.storage().todos.get(1, id), `${label}, then todos.get`).toEqual(expected)
      }
      expect(others(await listTodos(1), id), 'the other to-dos of company 1').toEqual(others(ctx.expected.records('todos', 1), id))
    })

    it("updateTodo of another company's to-do rejects and changes nothing", async () => {
      const f = facts()
      const foreign = f.todoOfCompany2
      const outcome = await outcomeOf(ctx.writes().transaction((tx) => tx.updateTodo(1, foreign, { title: 'Hijacked' }, WRITE_NOW)))
      expect(outcome === 'resolved' ? 'resolved' : 'rejected', `updateTodo(1, ${foreign}), a to-do of company 2: ${outcome}`).toBe('rejected')
      expect(await ctx.storage().todos.get(2, foreign), `todos.get(2, ${foreign})`).toEqual(fixtureTodo(ctx, 2, foreign))
    })

    it('a transaction whose work throws after several writes rolls all of them back and rethrows the error', async () => {
      const f = facts()
      const shared = f.sharedUser
      const exclusive = f.exclusiveUser(1)
      const [list] = f.listIds(1)
      if (list === undefined) throw new Error('conformance suite bug: company 1 has no to-do list')
      const email = 'Rolled.Back@Example.com'
      const before = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      const failure = new DeliberateRollback()
      const reached: string[] = []
      const outcome = ctx.writes().transaction(async (tx) => {
        const person = await tx.createPerson({ email, first_name: 'Rolled', last_name: 'Back' }, WRITE_NOW)
        const user = await tx.addPendingMembership(1, f.roleIds(1).slice(0, 1), { email, first_name: 'Rolled', last_name: 'Back' }, WRITE_NOW)
        await tx.acceptMembership(1, user, person, WRITE_NOW)
        const joining = await tx.addPendingMembership(2, [], { email: 'joins.two@example.com', first_name: 'Joins', last_name: 'Two' }, WRITE_NOW)
        await tx.acceptMembership(2, joining, f.personOf(1, exclusive) as number, WRITE_NOW)
        await tx.setUserActive(1, shared, false, WRITE_NOW)
        await tx.insertTodo(1, { ...fieldsOf(fixtureTodo(ctx, 1, ctx.edges.unicodeTodo)), list_id: list }, WRITE_NOW)
        await tx.updateTodo(1, ctx.edges.unicodeTodo, { title: 'Never committed', notes: null }, WRITE_NOW)
        reached.push('every write')
        throw failure
      })
      await expect(outcome, 'transaction(work) rejects with the very error work threw').rejects.toBe(failure)
      expect(reached, 'work ran to the throw').toEqual(['every write'])
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'every list and company after the rollback').toEqual(before)
      const lookups = await ctx.writes().transaction(async (tx) => ({
        email: await tx.findPersonIdByEmail(email.toLowerCase()),
        member: await tx.findMemberIdByEmail(1, email.toLowerCase()),
        exclusive: [...(await tx.personCompanies(1, exclusive))].sort(byNumber),
      }))
      expect(lookups, 'findPersonIdByEmail and findMemberIdByEmail of the rolled-back user, personCompanies of the rolled-back member').toEqual({
        email: null,
        member: null,
        exclusive: [1],
      })
    })

    it('a WriteConflict in the middle of a transaction rolls back its earlier writes, and the next transaction works', async () => {
      const f = facts()
      const before = await storageSnapshot(ctx.storage(), ctx.expected.companyIds)
      const id = ctx.edges.unicodeTodo
      const outcome = await outcomeOf(
        ctx.writes().transaction(async (tx) => {
          await tx.updateTodo(1, id, { title: 'Never committed' }, WRITE_NOW)
          await tx.setUserActive(1, f.sharedUser, false, WRITE_NOW)
          const email = fixtureUser(ctx, 1, f.sharedUser).email
          await tx.addPendingMembership(1, [], { email, first_name: 'Already', last_name: 'Member' }, WRITE_NOW) // already a member
        }),
      )
      expectConflicts([{ label: `the transaction ending in addPendingMembership(1, the email of user ${f.sharedUser}), an existing member`, outcome }], 'a conflict in the middle of a transaction')
      expect(await storageSnapshot(ctx.storage(), ctx.expected.companyIds), 'every list and company after the rollback').toEqual(before)
      const later = afterNow(5_000)
      const returned = await ctx.writes().transaction(async (tx) => {
        await tx.updateTodo(1, id, { title: 'Committed after the conflict' }, later)
        return 'the value work resolved to'
      })
      expect(returned, 'transaction(work) resolves to what work resolved to').toBe('the value work resolved to')
      expect(await ctx.storage().todos.get(1, id), `todos.get(1, ${id}) after the next transaction`).toEqual({
        ...fixtureTodo(ctx, 1, id),
        title: 'Committed after the conflict',
        updated_at: later,
      })
    })

    if (ctx.supports.idempotency) {
      /** The idempotency slot named `label`, begun by `token-a` at `WRITE_NOW` for `request`. */
      const beginSlot = async (label: string, request: string) => {
        const store = ctx.idempotency()
        const slot = sha256(label)
        const fingerprint = sha256(request)
        expect(await store.begin(attempt(slot, fingerprint, 'token-a', 0)), 'begin on a free slot').toEqual({ state: 'started' })
        return { store, slot, fingerprint }
      }

      it('completeIdempotency in a committed transaction completes the slot; only the holding token can', async () => {
        const { store, slot, fingerprint } = await beginSlot('writes: committed completion', 'POST /v1/todos {"title":"x"}')
        const held = await ctx.writes().transaction(async (tx) => ({
          wrongToken: await tx.completeIdempotency(slot, 'token-b', responseOf('b'), WRITE_NOW),
          unknownSlot: await tx.completeIdempotency(sha256('writes: no such slot'), 'token-a', responseOf('a'), WRITE_NOW),
          holder: await tx.completeIdempotency(slot, 'token-a', CREATED_RESPONSE, WRITE_NOW),
        }))
        expect(held, 'completeIdempotency with a token that never held the slot, on an unknown slot, and with the holder').toEqual({
          wrongToken: false,
          unknownSlot: false,
          holder: true,
        })
        expect(await store.begin(attempt(slot, fingerprint, 'token-c', 1_000)), 'begin after the commit').toEqual({
          state: 'replay',
          response: CREATED_RESPONSE,
        })
      })

      it('completeIdempotency in a transaction that rolls back leaves the slot in flight, held by the same token', async () => {
        const [list] = facts().listIds(1)
        if (list === undefined) throw new Error('conformance suite bug: company 1 has no to-do list')
        const { store, slot, fingerprint } = await beginSlot('writes: rolled-back completion', 'POST /v1/todos {"title":"y"}')
        const todosBefore = await listTodos(1)
        const completedInside: boolean[] = []
        const outcome = await outcomeOf(
          ctx.writes().transaction(async (tx) => {
            await tx.insertTodo(1, { ...fieldsOf(fixtureTodo(ctx, 1, ctx.edges.unicodeTodo)), list_id: list }, WRITE_NOW)
            completedInside.push(await tx.completeIdempotency(slot, 'token-a', CREATED_RESPONSE, WRITE_NOW))
            throw new DeliberateRollback()
          }),
        )
        expect({ outcome, completedInside }, 'the transaction: completeIdempotency, then a throw').toEqual({
          outcome: 'DeliberateRollback',
          completedInside: [true],
        })
        expect(await listTodos(1), 'to-dos of company 1 after the rollback').toEqual(todosBefore)
        expect(await store.begin(attempt(slot, fingerprint, 'token-b', 1_000)), 'begin after the rollback, lease still live').toEqual({
          state: 'in_flight',
        })
        const retry = responseOf('after the rollback')
        expect(await store.complete(slot, 'token-a', retry, afterNow(2_000)), 'complete with the original token after the rollback').toBe(true)
        expect(await store.begin(attempt(slot, fingerprint, 'token-c', 3_000)), 'begin after that complete').toEqual({
          state: 'replay',
          response: retry,
        })
      })

      it('a completion inside an open transaction is not visible to begin before the commit', async () => {
        const { store, slot, fingerprint } = await beginSlot('writes: uncommitted completion', 'PATCH /v1/todos/1 {"title":"z"}')
        let proceed!: () => void
        const held = new Promise<void>((resolve) => (proceed = resolve))
        let completed!: () => void
        const reachedCompletion = new Promise<void>((resolve) => (completed = resolve))
        const transaction = ctx.writes().transaction(async (tx: WriteTransaction) => {
          await tx.updateTodo(1, ctx.edges.unicodeTodo, { title: 'Uncommitted' }, WRITE_NOW)
          await tx.completeIdempotency(slot, 'token-a', CREATED_RESPONSE, WRITE_NOW)
          completed()
          await held
          throw new DeliberateRollback()
        })
        const ended = outcomeOf(transaction)
        const first = await Promise.race([reachedCompletion.then(() => 'reached completeIdempotency'), ended])
        expect(first, 'the transaction, up to its completeIdempotency').toBe('reached completeIdempotency')
        // A retry arrives while the first attempt's transaction is still open (it may wait for it).
        const retry = store.begin(attempt(slot, fingerprint, 'token-b', 1_000))
        await pause(5)
        proceed()
        expect(await ended, 'the transaction, ended by a throw').toBe('DeliberateRollback')
        const seen: unknown = await retry
        expect(seen, 'begin while a completion was uncommitted (then rolled back): the slot is still in flight').toEqual({ state: 'in_flight' })
      })
    }

    it('concurrent read-modify-write transactions on one to-do serialize: no update is lost', async () => {
      const id = ctx.edges.unicodeTodo
      const original = fixtureTodo(ctx, 1, id)
      const runs = 10
      const results = await Promise.allSettled(
        Array.from({ length: runs }, () =>
          ctx.writes().transaction(async (tx) => {
            const current = await tx.getTodoForUpdate(1, id)
            if (current === null) throw new Error(`getTodoForUpdate(1, ${id}) returned null`)
            await pause()
            return (await tx.updateTodo(1, id, { title: `${current.title}+` }, WRITE_NOW)).title
          }),
        ),
      )
      const suffixes = results.map((result) =>
        result.status === 'fulfilled' ? result.value.slice(original.title.length) : describeOutcome(result),
      )
      expect([...suffixes].sort((a, b) => a.length - b.length), `${runs} concurrent transactions appending "+" to the title`).toEqual(
        Array.from({ length: runs }, (_, index) => '+'.repeat(index + 1)),
      )
      expect(await ctx.storage().todos.get(1, id), `todos.get(1, ${id}) after them`).toEqual({
        ...original,
        title: `${original.title}${'+'.repeat(runs)}`,
        updated_at: WRITE_NOW,
      })
    })

    it('of concurrent addPendingMembership of one email (in different cases) to one company exactly one succeeds; the others throw WriteConflict', async () => {
      const f = facts()
      const email = fixtureUser(ctx, 1, f.exclusiveUser(1)).email
      const runs = 8
      const results = await Promise.allSettled(
        Array.from({ length: runs }, (_, index) =>
          ctx.writes().transaction(async (tx) => {
            // A read first, then a pause, so transactions that are not kept apart overlap here;
            // the adapter must still let only one membership in.
            await tx.findMemberIdByEmail(2, email.toLowerCase())
            await pause()
            const cased = index % 2 === 0 ? email.toUpperCase() : email.toLowerCase()
            await tx.addPendingMembership(2, f.roleIds(2).slice(index, index + 1), { email: cased, first_name: 'Race', last_name: `Run ${index}` }, afterNow(index))
          }),
        ),
      )
      expectOneWinner(results.map(describeOutcome), `${runs} concurrent addPendingMembership(2, ${email})`)
      const users = await listUsers(2)
      expect(
        users.filter((user) => user.email.toLowerCase() === email.toLowerCase()).length,
        `users of company 2 with email ${email}`,
      ).toBe(1)
      expect(users.length, 'users of company 2').toBe(ctx.expected.records('users', 2).length + 1)
    })

    it('of concurrent createPerson of one email in different cases exactly one succeeds; the others throw WriteConflict', async () => {
      const emails = [
        'Race.Winner@Example.com',
        'race.winner@example.com',
        'RACE.WINNER@EXAMPLE.COM',
        'Race.Winner@example.COM',
        'rACE.wINNER@eXAMPLE.cOM',
        'race.WINNER@example.com',
      ]
      const results = await Promise.allSettled(
        emails.map((email) =>
          ctx.writes().transaction(async (tx) => {
            await pause()
            return tx.createPerson({ email, first_name: 'Race', last_name: 'Winner' }, WRITE_NOW)
          }),
        ),
      )
      expectOneWinner(results.map(describeOutcome), `${emails.length} concurrent createPerson of one email`)
      const winner = results.find((result) => result.status === 'fulfilled') as PromiseFulfilledResult<number> | undefined
      const found = await ctx.writes().transaction((tx) => tx.findPersonIdByEmail('race.winner@example.com'))
      expect(found, 'findPersonIdByEmail after the race: the winner').toBe(winner?.value)
    })
  },
}
