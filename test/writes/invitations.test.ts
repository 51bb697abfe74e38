import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { InvitationError } from '../../src/invitations/invitation-manager.js'
import type { Invitation } from '../../src/ports/invite-sender.js'
import { build } from '../helpers/build.js'
import { bearer, buildWriteApp, PREFIX, START_MS, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'
import { exclusiveMemberIds, expectError, nextUserId, person, roleIds } from '../helpers/seed-facts.js'
import { recordedEvent } from '../helpers/recorded-event.js'

const MINUTE = 60_000

/** An active person of company 2 alone: "B's employee", whose email company 1 ("A") knows. */
const employeeOfB = () => person(exclusiveMemberIds(2).find((id) => person(id).active) as number)

/** What company 1 sends about B's employee: the email in another letter case, other names. */
const sentByA = () => ({
  email: employeeOfB().email.toUpperCase(),
  first_name: 'Mario',
  last_name: 'Rossi (per A)',
  role_ids: [roleIds(1)[0] as number],
})

const timestamp = (ms: number) => new Date(ms).toISOString()

/** A's id for the user it adds first: a fresh id of its own, above every user id of the seed. */
const aId = () => nextUserId()

// Issue 8, gap 4: knowing the email of another company's user gives a company neither that
// company's data about the person nor a say over their login (docs/decisions.md, "Invitations").
// Issue 21: nor the person's id there: every addition is an invitation under the company's own id.
describe.each(WRITE_ADAPTERS)('invitations of people who already have a login ($name)', (factory) => {
  let t: WriteTestApp
  let invitations: Invitation[]
  let keyA: string
  let keyB: string

  beforeEach(async () => {
    invitations = []
    t = await buildWriteApp({
      adapter: factory,
      options: { invites: { sendInvite: async (invitation) => void invitations.push(invitation) } },
    })
    keyA = await t.keyFor(1, ['users:read', 'users:write'])
    keyB = await t.keyFor(2, ['users:read', 'users:write'])
  })
  afterEach(() => t.close())

  /** Company 1 adds B's employee at START_MS + 1 minute; returns the pending user as A must see it. */
  async function addEmployeeOfB(body: Record<string, unknown> = sentByA()) {
    t.clock.advance(MINUTE)
    const res = await t.post('/v1/users', body, keyA)
    expect(res.statusCode, res.body).toBe(201)
    return res
  }

  const pendingAsA = () => {
    const sent = sentByA()
    return {
      id: aId(),
      email: sent.email,
      first_name: sent.first_name,
      last_name: sent.last_name,
      active: false,
      role_ids: sent.role_ids,
      invitation_status: 'pending',
      created_at: timestamp(START_MS + MINUTE),
      updated_at: timestamp(START_MS + MINUTE),
    }
  }

  it("A adds B's employee: 201 pending, rendered only from what A sent, a users.created event for A", async () => {
    const employee = employeeOfB()
    const bBefore = await t.get(`/v1/users/${employee.id}`, keyB)
    const res = await addEmployeeOfB()
    // A's own id for the user: never B's id for the person (issue 21: user ids are per company).
    expect(res.headers.location).toBe(`${PREFIX}/v1/users/${aId()}`)
    expect(aId()).not.toBe(employee.id)
    expect(res.json()).toStrictEqual({ data: pendingAsA() })
    expect((await t.get(`/v1/users/${aId()}`, keyA)).json()).toStrictEqual({ data: pendingAsA() })
    const listed = (await t.get('/v1/users?per_page=100', keyA)).json().data as Array<{ id: number }>
    expect(listed.filter((user) => user.id === aId())).toStrictEqual([pendingAsA()])
    expect(listed.filter((user) => user.id === employee.id)).toStrictEqual([])
    // Nothing of B's stored person reaches A.
    for (const stored of [employee.first_name, employee.last_name, employee.email]) expect(res.body).not.toContain(`"${stored}"`)
    expect(await t.events()).toStrictEqual([
      recordedEvent('users.created', 1, aId(), new Date(START_MS + MINUTE)),
    ])
    // B sees its employee exactly as before.
    expect((await t.get(`/v1/users/${employee.id}`, keyB)).body).toBe(bBefore.body)
  })

  it("B still deactivates and activates its employee (200): a pending membership elsewhere does not count; A's view does not move", async () => {
    const employee = employeeOfB()
    await addEmployeeOfB()
    t.clock.advance(MINUTE)
    const off = await t.post(`/v1/users/${employee.id}/deactivate`, undefined, keyB)
    expect(off.statusCode, off.body).toBe(200)
    expect(off.json().data).toMatchObject({ id: employee.id, active: false, invitation_status: 'accepted', updated_at: t.clock.iso() })
    t.clock.advance(MINUTE)
    const on = await t.post(`/v1/users/${employee.id}/activate`, undefined, keyB)
    expect(on.statusCode, on.body).toBe(200)
    expect(on.json().data).toMatchObject({ active: true, updated_at: t.clock.iso() })
    // A learns nothing of B's offboarding: same body, no new updated_at, no event for A.
    expect((await t.get(`/v1/users/${aId()}`, keyA)).json()).toStrictEqual({ data: pendingAsA() })
    const since = await t.get(`/v1/users?updated_since=${encodeURIComponent(timestamp(START_MS + 2 * MINUTE))}`, keyA)
    expect(since.json().data).toStrictEqual([])
    expect((await t.events()).map((e) => [e.company_id, e.type])).toEqual([
      [1, 'users.created'],
      [2, 'users.updated'],
      [2, 'users.updated'],
    ])
  })

  it.each(['activate', 'deactivate'])('A cannot %s the pending member: 409 naming the pending invitation, nothing changes', async (action) => {
    const employee = employeeOfB()
    await addEmployeeOfB()
    const bBefore = await t.get(`/v1/users/${employee.id}`, keyB)
    t.clock.advance(MINUTE)
    const res = await t.post(`/v1/users/${aId()}/${action}`, undefined, keyA)
    expectError(res, 409, 'conflict')
    expect(res.json().error.message).toMatch(/invitation/)
    expect((await t.get(`/v1/users/${aId()}`, keyA)).json()).toStrictEqual({ data: pendingAsA() })
    expect((await t.get(`/v1/users/${employee.id}`, keyB)).body).toBe(bBefore.body)
    expect((await t.events()).map((e) => e.type)).toEqual(['users.created'])
  })

  it('the invitation is always sent for a pending membership, with what A sent, asking for acceptance', async () => {
    const employee = employeeOfB()
    const sent = sentByA()
    await addEmployeeOfB({ ...sent, send_invite: false })
    expect(invitations).toStrictEqual([
      { companyId: 1, userId: aId(), email: sent.email, firstName: sent.first_name, lastName: sent.last_name, requiresAcceptance: true },
    ])
  })

  it('accept: A then sees the person as stored, the person is shared, and A gets a users.updated event', async () => {
    const employee = employeeOfB()
    const bBefore = (await t.get(`/v1/users/${employee.id}`, keyB)).json().data
    await addEmployeeOfB()
    t.clock.advance(MINUTE)
    const acceptedAt = t.clock.iso()
    const returned = await t.app.workforceApi.invitations.accept({ companyId: 1, userId: aId() })
    const accepted = {
      id: aId(),
      email: employee.email,
      first_name: employee.first_name,
      last_name: employee.last_name,
      active: true,
      role_ids: sentByA().role_ids,
      invitation_status: 'accepted',
      created_at: timestamp(START_MS + MINUTE),
      updated_at: acceptedAt,
    }
    expect({ ...returned, created_at: returned.created_at.toISOString(), updated_at: returned.updated_at.toISOString() }).toStrictEqual(accepted)
    expect((await t.get(`/v1/users/${aId()}`, keyA)).json()).toStrictEqual({ data: accepted })
    expect((await t.get(`/v1/users/${employee.id}`, keyB)).json().data).toStrictEqual(bBefore)
    const since = await t.get(`/v1/users?updated_since=${encodeURIComponent(acceptedAt)}`, keyA)
    expect(since.json().data).toStrictEqual([accepted])
    expect(await t.events()).toStrictEqual([
      recordedEvent('users.created', 1, aId(), new Date(START_MS + MINUTE)),
      recordedEvent('users.updated', 1, aId(), new Date(START_MS + 2 * MINUTE)),
    ])
    // Shared from now on: neither company may change the login (today's rule).
    expectError(await t.post(`/v1/users/${employee.id}/deactivate`, undefined, keyB), 409, 'conflict')
    expectError(await t.post(`/v1/users/${aId()}/deactivate`, undefined, keyA), 409, 'conflict')

    // Accepting again changes nothing and records nothing.
    t.clock.advance(MINUTE)
    await t.app.workforceApi.invitations.accept({ companyId: 1, userId: aId() })
    expect((await t.get(`/v1/users/${aId()}`, keyA)).json()).toStrictEqual({ data: accepted })
    expect(await t.events()).toHaveLength(2)
  })

  it('decline: the pending membership and what A sent are gone (404, users.deleted); A may invite again', async () => {
    const employee = employeeOfB()
    await addEmployeeOfB()
    t.clock.advance(MINUTE)
    await t.app.workforceApi.invitations.decline({ companyId: 1, userId: aId() })
    expectError(await t.get(`/v1/users/${aId()}`, keyA), 404, 'not_found')
    expect((await t.get(`/v1/users?email=${encodeURIComponent(employee.email)}`, keyA)).json().data).toEqual([])
    expect((await t.get(`/v1/users/${employee.id}`, keyB)).json().data).toMatchObject({ id: employee.id, invitation_status: 'accepted' })
    expect((await t.events()).map((e) => [e.company_id, e.type, e.occurred_at.getTime()])).toEqual([
      [1, 'users.created', START_MS + MINUTE],
      [1, 'users.deleted', START_MS + 2 * MINUTE],
    ])
    await expect(t.app.workforceApi.invitations.decline({ companyId: 1, userId: aId() })).rejects.toMatchObject({ reason: 'not_found' })

    t.clock.advance(MINUTE)
    const again = await t.post('/v1/users', sentByA(), keyA)
    expect(again.statusCode, again.body).toBe(201)
    // A new id: the declined one is never given again.
    expect(again.json().data).toMatchObject({ id: aId() + 1, invitation_status: 'pending', created_at: t.clock.iso() })
    expect(invitations).toHaveLength(2)
  })

  it('refuses accept and decline that name no invitation, with a reason', async () => {
    const employee = employeeOfB()
    const accept = (companyId: number, userId: number) => t.app.workforceApi.invitations.accept({ companyId, userId })
    const decline = (companyId: number, userId: number) => t.app.workforceApi.invitations.decline({ companyId, userId })
    await expect(accept(1, employee.id), "B's id names nobody in company 1").rejects.toMatchObject({ name: 'InvitationError', reason: 'not_found' })
    await expect(accept(1, 999_999)).rejects.toMatchObject({ reason: 'not_found' })
    await expect(decline(2, employee.id), 'an accepted member').rejects.toMatchObject({ reason: 'not_pending' })
    await expect(accept(0, employee.id)).rejects.toBeInstanceOf(InvitationError)
    await expect(accept(1, 1.5)).rejects.toMatchObject({ reason: 'invalid_input' })
    // An accepted member stays as they are: accept is a no-op, no event.
    const before = await t.get(`/v1/users/${employee.id}`, keyB)
    await accept(2, employee.id)
    expect((await t.get(`/v1/users/${employee.id}`, keyB)).body).toBe(before.body)
    expect(await t.events()).toEqual([])
  })

  it('filters apply to what A sees: A’s email in any case, active false, the membership’s updated_at', async () => {
    const employee = employeeOfB()
    await addEmployeeOfB()
    const ids = async (query: string) => ((await t.get(`/v1/users?per_page=100&${query}`, keyA)).json().data as Array<{ id: number }>).map((u) => u.id)
    const q = encodeURIComponent
    for (const email of [sentByA().email, employee.email, employee.email.toLowerCase()]) {
      expect(await ids(`email=${q(email)}`), email).toEqual([aId()])
      expect(await ids(`email=${q(email)}&active=false`), `${email}, active=false`).toEqual([aId()])
      expect(await ids(`email=${q(email)}&active=true`), `${email}, active=true (B's login is enabled)`).toEqual([])
    }
    expect(await ids('active=true')).not.toContain(aId())
    expect(await ids('active=false')).toContain(aId())
    expect(await ids(`updated_since=${q(timestamp(START_MS + MINUTE))}`)).toEqual([aId()])
    expect(await ids(`updated_since=${q(timestamp(START_MS + MINUTE + 1))}`)).toEqual([])
  })

  it('tenant isolation: B never sees what A sent, nor a change for A’s invitation', async () => {
    const employee = employeeOfB()
    const bBefore = await t.get('/v1/users?per_page=100', keyB)
    await addEmployeeOfB()
    expect((await t.get('/v1/users?per_page=100', keyB)).body).toBe(bBefore.body)
    const sinceB = await t.get(`/v1/users?updated_since=${encodeURIComponent(timestamp(START_MS + MINUTE))}`, keyB)
    expect(sinceB.json().data).toEqual([])
    const byEmail = await t.get(`/v1/users?email=${encodeURIComponent(employee.email)}`, keyB)
    expect(byEmail.json().data).toMatchObject([{ email: employee.email, first_name: employee.first_name, last_name: employee.last_name }])
    expect(byEmail.body).not.toContain(sentByA().last_name)
    // A third company sees none of it.
    const key3 = await t.keyFor(3, ['users:read'])
    expectError(await t.get(`/v1/users/${employee.id}`, key3), 404, 'not_found')
    expectError(await t.get(`/v1/users/${aId()}`, key3), 404, 'not_found')
  })

  it('an idempotent retry of the POST replays the pending user and sends no second invitation', async () => {
    const key = await t.keyFor(1, ['users:write'])
    t.clock.advance(MINUTE)
    const first = await t.post('/v1/users', sentByA(), bearer(key, 'invite-b-employee'))
    t.clock.advance(MINUTE)
    const replay = await t.post('/v1/users', sentByA(), bearer(key, 'invite-b-employee'))
    expect([first.statusCode, replay.statusCode]).toEqual([201, 201])
    expect(replay.headers['idempotent-replay']).toBe('true')
    expect(replay.body).toBe(first.body)
    expect(first.json()).toStrictEqual({ data: pendingAsA() })
    expect(invitations).toHaveLength(1)
    expect((await t.events()).map((e) => e.type)).toEqual(['users.created'])
    // A new key for the same person is a second add: 409, as for any member.
    expectError(await t.post('/v1/users', sentByA(), bearer(key, 'another-key')), 409, 'conflict')
  })

  it('two concurrent adds of the same existing email: one 201 pending, the other 409', async () => {
    t.writes.setLatency(() => new Promise((resolve) => setTimeout(resolve, 5)))
    const responses = await Promise.all([t.post('/v1/users', sentByA(), keyA), t.post('/v1/users', sentByA(), keyA)])
    expect(responses.map((res) => res.statusCode).sort()).toEqual([201, 409])
    expect(responses.find((res) => res.statusCode === 201)?.json().data).toMatchObject({ invitation_status: 'pending' })
    expect(invitations).toHaveLength(1)
    expect(await t.events()).toHaveLength(1)
  })

  it('the same person in two companies has a different id in each; accepting an email nobody has creates the person from what was sent', async () => {
    const email = 'Nuova.Persona@Example.com'
    t.clock.advance(MINUTE)
    const inA = await t.post('/v1/users', { email, first_name: 'Nuova', last_name: 'Persona' }, keyA)
    const inB = await t.post('/v1/users', { email: email.toLowerCase(), first_name: 'New', last_name: 'Person' }, keyB)
    expect([inA.statusCode, inB.statusCode]).toEqual([201, 201])
    const [idA, idB] = [inA.json().data.id as number, inB.json().data.id as number]
    expect(idA).not.toBe(idB)
    expectError(await t.get(`/v1/users/${idA}`, keyB), 404, 'not_found')
    expectError(await t.get(`/v1/users/${idB}`, keyA), 404, 'not_found')

    t.clock.advance(MINUTE)
    const acceptedA = await t.app.workforceApi.invitations.accept({ companyId: 1, userId: idA })
    expect(acceptedA).toMatchObject({ id: idA, email, first_name: 'Nuova', last_name: 'Persona', active: true, invitation_status: 'accepted' })
    const acceptedB = await t.app.workforceApi.invitations.accept({ companyId: 2, userId: idB })
    // One person (created from what A sent, who was accepted first), two ids.
    expect(acceptedB).toMatchObject({ id: idB, email, first_name: 'Nuova', last_name: 'Persona', active: true, invitation_status: 'accepted' })
    expect((await t.get(`/v1/users/${idA}`, keyA)).json().data).toMatchObject({ id: idA, email })
    expect((await t.get(`/v1/users/${idB}`, keyB)).json().data).toMatchObject({ id: idB, email })
    // Shared: neither company may change the login (spec 3.3).
    expectError(await t.post(`/v1/users/${idA}/deactivate`, undefined, keyA), 409, 'conflict')
    expectError(await t.post(`/v1/users/${idB}/deactivate`, undefined, keyB), 409, 'conflict')
  })

  it('an accept that fails at its event leaves the invitation pending', async () => {
    const employee = employeeOfB()
    await addEmployeeOfB()
    t.writes.failNextAt('recordEvent')
    await expect(t.app.workforceApi.invitations.accept({ companyId: 1, userId: aId() })).rejects.toThrow('simulated failure in recordEvent')
    expect((await t.get(`/v1/users/${aId()}`, keyA)).json()).toStrictEqual({ data: pendingAsA() })
    expect(await t.events()).toHaveLength(1)
  })
})

describe('invitations without the write path', () => {
  it('accept and decline are refused as unavailable on a read-only app', async () => {
    const t = await build()
    try {
      await expect(t.app.workforceApi.invitations.accept({ companyId: 1, userId: 1 })).rejects.toMatchObject({ reason: 'unavailable' })
      await expect(t.app.workforceApi.invitations.decline({ companyId: 1, userId: 1 })).rejects.toMatchObject({ reason: 'unavailable' })
    } finally {
      await t.close()
    }
  })
})
