import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Invitation } from '../../src/ports/invite-sender.js'
import { bearer, buildWriteApp, PREFIX, START_MS, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'
import {
  exclusiveMemberIds,
  expectError,
  expectInvalid,
  nextUserId,
  person,
  roleIds,
  sharedMemberIds,
  userIdIn,
} from '../helpers/seed-facts.js'
import { recordedEvent } from '../helpers/recorded-event.js'

const MINUTE = 60_000

const newUser = (overrides: Record<string, unknown> = {}) => ({
  email: 'giulia.neri@example.com',
  first_name: 'Giulia',
  last_name: 'Neri',
  ...overrides,
})

// Spec 3.3, 4.1 (POST /v1/users, activate, deactivate), 6 (users.created / users.updated).
describe.each(WRITE_ADAPTERS)('user writes ($name)', (factory) => {
  let t: WriteTestApp
  let invitations: Invitation[]
  let key1: string
  let key2: string

  beforeEach(async () => {
    invitations = []
    t = await buildWriteApp({
      adapter: factory,
      options: { invites: { sendInvite: async (invitation) => void invitations.push(invitation) } },
    })
    key1 = await t.keyFor(1, ['users:read', 'users:write'])
    key2 = await t.keyFor(2, ['users:read', 'users:write'])
  })
  afterEach(() => t.close())

  describe('POST /v1/users', () => {
    it('adds a user as a pending invitation: 201, the user with a fresh id, Location, a users.created event', async () => {
      const [roleA, roleB] = roleIds(1)
      const id = nextUserId()
      const res = await t.post('/v1/users', newUser({ role_ids: [roleA, roleB] }), key1)

      expect(res.statusCode, res.body).toBe(201)
      expect(res.headers.location).toBe(`${PREFIX}/v1/users/${id}`)
      const created = {
        id,
        email: 'giulia.neri@example.com',
        first_name: 'Giulia',
        last_name: 'Neri',
        active: false,
        role_ids: [roleA, roleB],
        invitation_status: 'pending',
        created_at: t.clock.iso(),
        updated_at: t.clock.iso(),
      }
      expect(res.json()).toStrictEqual({ data: created })
      expect(res.headers['idempotent-replay']).toBeUndefined()

      const got = await t.get(`/v1/users/${id}`, key1)
      expect(got.statusCode).toBe(200)
      expect(got.json()).toStrictEqual({ data: created })
      const listed = await t.get('/v1/users?email=GIULIA.NERI%40example.com', key1)
      expect(listed.json().data).toStrictEqual([created])
      expect(await t.events()).toStrictEqual([recordedEvent('users.created', 1, id, new Date(START_MS), created)])
    })

    it('gives new users monotonically increasing ids and stamps them with the clock', async () => {
      const first = await t.post('/v1/users', newUser(), key1)
      t.clock.advance(MINUTE)
      const second = await t.post('/v1/users', newUser({ email: 'piero.blu@example.com', first_name: 'Piero', last_name: 'Blu' }), key1)
      expect([first.statusCode, second.statusCode]).toEqual([201, 201])
      expect(first.json().data.id).toBe(nextUserId())
      expect(second.json().data.id).toBe(nextUserId() + 1)
      expect(second.json().data.created_at).toBe(new Date(START_MS + MINUTE).toISOString())
      expect((await t.events()).map((e) => [e.type, e.resource_id, e.occurred_at.getTime()])).toEqual([
        ['users.created', nextUserId(), START_MS],
        ['users.created', nextUserId() + 1, START_MS + MINUTE],
      ])
    })

    it('adds the email of a person of another company exactly like a new one: pending, a fresh id of its own, only what the company sent', async () => {
      const [existingId] = exclusiveMemberIds(1)
      const existing = person(existingId as number)
      const [role2] = roleIds(2)
      const company1Before = await t.get(`/v1/users/${existingId}`, key1)
      expect(company1Before.statusCode).toBe(200)
      t.clock.advance(MINUTE)

      const res = await t.post(
        '/v1/users',
        { email: existing.email.toUpperCase(), first_name: 'Someone', last_name: 'Else', role_ids: [role2] },
        key2,
      )
      expect(res.statusCode, res.body).toBe(201)
      // Never the person's id in company 1: ids are per company (issue 21).
      const id = nextUserId()
      expect(res.headers.location).toBe(`${PREFIX}/v1/users/${id}`)
      // Company 2 sees what it sent, inactive, pending: never company 1's stored person.
      const joined = {
        id,
        email: existing.email.toUpperCase(),
        first_name: 'Someone',
        last_name: 'Else',
        active: false,
        role_ids: [role2],
        invitation_status: 'pending',
        created_at: t.clock.iso(),
        updated_at: t.clock.iso(),
      }
      expect(res.json()).toStrictEqual({ data: joined })
      expect((await t.get(`/v1/users/${id}`, key2)).json()).toStrictEqual({ data: joined })
      expectError(await t.get(`/v1/users/${existingId}`, key2), 404, 'not_found')
      // Company 1 sees the person exactly as before: profile, roles and dates untouched.
      expect((await t.get(`/v1/users/${existingId}`, key1)).body).toBe(company1Before.body)
      expect(await t.events()).toStrictEqual([
        recordedEvent('users.created', 2, id, new Date(START_MS + MINUTE)),
      ])
      // A sync loop of company 2 picks the newcomer up through updated_since (docs/decisions.md).
      const since = await t.get(`/v1/users?updated_since=${encodeURIComponent(t.clock.iso())}`, key2)
      expect(since.json().data).toStrictEqual([joined])
      // The newcomer is the last of the list, in id order.
      const ids = ((await t.get('/v1/users?per_page=100', key2)).json().data as Array<{ id: number }>).map((u) => u.id)
      expect(ids).toEqual([...ids].sort((a, b) => a - b))
      expect(ids.at(-1)).toBe(id)
      expect(ids).not.toContain(existingId)
    })

    it('finds a person entered in mixed case by any letter case', async () => {
      const created = await t.post('/v1/users', newUser({ email: 'Giulia.Neri@Example.COM' }), key1)
      expect(created.statusCode, created.body).toBe(201)
      const listed = await t.get('/v1/users?email=giulia.neri%40example.com', key1)
      expect(listed.json().data.map((u: { id: number }) => u.id)).toEqual([nextUserId()])
      expectError(await t.post('/v1/users', newUser({ email: 'giulia.neri@example.com' }), key1), 409, 'conflict')
      const joined = await t.post('/v1/users', newUser({ email: 'GIULIA.NERI@EXAMPLE.COM' }), key2)
      expect(joined.statusCode, joined.body).toBe(201)
      expect(joined.json().data.id).toBe(nextUserId() + 1)
    })

    it('refuses a person who is already a member (any letter case) with 409, changing nothing', async () => {
      const [memberId] = exclusiveMemberIds(1)
      const [sharedId] = sharedMemberIds(1, 2)
      const sharedIn2 = userIdIn(2, sharedId as number)
      const before1 = await t.get(`/v1/users/${memberId}`, key1)
      const before2 = await t.get(`/v1/users/${sharedIn2}`, key2)
      expect(before2.statusCode).toBe(200)

      const own = await t.post('/v1/users', newUser({ email: person(memberId as number).email.toUpperCase() }), key1)
      expectError(own, 409, 'conflict')
      const shared = await t.post('/v1/users', newUser({ email: person(sharedId as number).email }), key2)
      expectError(shared, 409, 'conflict')

      expect((await t.get(`/v1/users/${memberId}`, key1)).body).toBe(before1.body)
      expect((await t.get(`/v1/users/${sharedIn2}`, key2)).body).toBe(before2.body)
      expect(await t.events()).toEqual([])
    })

    it('accepts only roles of this company (422 on role_ids, nothing created)', async () => {
      const foreignRole = roleIds(2)[0] as number
      const ownRole = roleIds(1)[0] as number
      expectInvalid(await t.post('/v1/users', newUser({ role_ids: [ownRole, foreignRole] }), key1), ['role_ids'])
      expectInvalid(await t.post('/v1/users', newUser({ role_ids: [999_999] }), key1), ['role_ids'])
      expect((await t.get('/v1/users?email=giulia.neri%40example.com', key1)).json().data).toEqual([])
      expect(await t.events()).toEqual([])
      // Nothing half-written: the same email can still be added afterwards, at the next id.
      const ok = await t.post('/v1/users', newUser({ role_ids: [] }), key1)
      expect(ok.statusCode, ok.body).toBe(201)
      expect(ok.json().data).toMatchObject({ id: nextUserId(), role_ids: [] })
    })

    it.each([
      ['all required fields missing', {}, ['email', 'first_name', 'last_name']],
      ['a malformed email', newUser({ email: 'not-an-email' }), ['email']],
      ['blank names', newUser({ first_name: '', last_name: '   ' }), ['first_name', 'last_name']],
      ['an unknown field', newUser({ password: 'x' }), ['password']],
      [
        'wrong types',
        { email: 5, first_name: ['a'], last_name: null, role_ids: 'admin', send_invite: 'yes' },
        ['email', 'first_name', 'last_name', 'role_ids', 'send_invite'],
      ],
      ['a non-integer role id', newUser({ role_ids: [1.5] }), ['role_ids.0']],
      ['a repeated role id', newUser({ role_ids: [1, 1] }), ['role_ids']],
      ['a JSON array instead of an object', [newUser()], ['body']],
    ])('answers 422 naming each field for %s', async (_case, body, fields) => {
      expectInvalid(await t.post('/v1/users', body, key1), fields)
      expect(await t.events()).toEqual([])
      expect(invitations).toEqual([])
    })

    it('needs the users:write scope (403); the core module suffices (company 3 has only core)', async () => {
      expectError(await t.post('/v1/users', newUser(), await t.keyFor(1, ['users:read'])), 403, 'forbidden')
      expectError(await t.post('/v1/users', newUser(), await t.keyFor(1, ['todos:write'])), 403, 'forbidden')
      const res = await t.post('/v1/users', newUser(), await t.keyFor(3, ['users:write']))
      expect(res.statusCode, res.body).toBe(201)
      expect(res.json().data).toMatchObject({ id: nextUserId(), role_ids: [] })
      expect(await t.events()).toStrictEqual([
        recordedEvent('users.created', 3, nextUserId(), new Date(START_MS)),
      ])
    })
  })

  describe('atomicity', () => {
    it('a POST that fails after creating the person leaves neither person, membership nor event (500)', async () => {
      t.writes.failNextAt('recordEvent')
      expectError(await t.post('/v1/users', newUser({ send_invite: true }), key1), 500, 'internal_error')
      expect((await t.get('/v1/users?email=giulia.neri%40example.com', key1)).json().data).toEqual([])
      expect(await t.events()).toEqual([])
      expect(invitations).toEqual([])
      // Nothing half-written blocks the email: the next attempt creates the person.
      const retry = await t.post('/v1/users', newUser(), key1)
      expect(retry.statusCode, retry.body).toBe(201)
      expect((await t.get('/v1/users?email=giulia.neri%40example.com', key2)).json().data).toEqual([])
    })

    it('an existing person joining, failing at the event, is not left a member (500)', async () => {
      const existing = person(exclusiveMemberIds(1)[0] as number)
      t.writes.failNextAt('recordEvent')
      expectError(await t.post('/v1/users', newUser({ email: existing.email }), key2), 500, 'internal_error')
      expectError(await t.get(`/v1/users/${existing.id}`, key2), 404, 'not_found')
    })

    it('a deactivate that fails after the change leaves the user active (500)', async () => {
      const id = exclusiveMemberIds(1).find((candidate) => person(candidate).active) as number
      const before = (await t.get(`/v1/users/${id}`, key1)).body
      t.clock.advance(MINUTE)
      t.writes.failNextAt('recordEvent')
      expectError(await t.post(`/v1/users/${id}/deactivate`, undefined, key1), 500, 'internal_error')
      expect((await t.get(`/v1/users/${id}`, key1)).body).toBe(before)
      expect(await t.events()).toEqual([])
    })
  })

  describe('invitations', () => {
    it('sends exactly one invitation, asking for acceptance', async () => {
      const res = await t.post('/v1/users', newUser({ send_invite: true }), key1)
      expect(res.statusCode).toBe(201)
      expect(invitations).toStrictEqual([
        { companyId: 1, userId: nextUserId(), email: 'giulia.neri@example.com', firstName: 'Giulia', lastName: 'Neri', requiresAcceptance: true },
      ])
    })

    it('invites an existing person with what the company sent, asking them to accept', async () => {
      const existing = person(exclusiveMemberIds(1)[0] as number)
      const res = await t.post('/v1/users', newUser({ email: existing.email, send_invite: true }), key2)
      expect(res.statusCode).toBe(201)
      expect(invitations).toStrictEqual([
        { companyId: 2, userId: nextUserId(), email: existing.email, firstName: 'Giulia', lastName: 'Neri', requiresAcceptance: true },
      ])
    })

    it('sends one for every addition whatever send_invite says (every user is pending until accepted), none for a refused request', async () => {
      expect((await t.post('/v1/users', newUser({ send_invite: false }), key1)).statusCode).toBe(201)
      expect((await t.post('/v1/users', newUser({ email: 'b@example.com' }), key1)).statusCode).toBe(201)
      expectError(await t.post('/v1/users', newUser({ send_invite: true }), key1), 409, 'conflict')
      expectInvalid(await t.post('/v1/users', newUser({ email: 'c@example.com', send_invite: true, role_ids: [999_999] }), key1), ['role_ids'])
      expect(invitations.map((invitation) => [invitation.userId, invitation.requiresAcceptance])).toEqual([
        [nextUserId(), true],
        [nextUserId() + 1, true],
      ])
    })

    it('sends none when the request is replayed with its Idempotency-Key', async () => {
      const key = await t.keyFor(1, ['users:write'])
      const first = await t.post('/v1/users', newUser({ send_invite: true }), bearer(key, 'invite-once'))
      const replay = await t.post('/v1/users', newUser({ send_invite: true }), bearer(key, 'invite-once'))
      expect([first.statusCode, replay.statusCode]).toEqual([201, 201])
      expect(replay.headers['idempotent-replay']).toBe('true')
      expect(invitations).toHaveLength(1)
    })

    it('keeps the user (201) when sending the invitation fails', async () => {
      await t.close()
      t = await buildWriteApp({
        adapter: factory,
        options: { invites: { sendInvite: async () => Promise.reject(new Error('SMTP down')) } },
      })
      const key = await t.keyFor(1, ['users:read', 'users:write'])
      const res = await t.post('/v1/users', newUser({ send_invite: true }), key)
      expect(res.statusCode, res.body).toBe(201)
      expect((await t.get(`/v1/users/${nextUserId()}`, key)).statusCode).toBe(200)
    })
  })

  describe('POST /v1/users/:id/deactivate and /activate', () => {
    const activeExclusive = () => exclusiveMemberIds(1).find((id) => person(id).active) as number
    const inactiveExclusive = () => exclusiveMemberIds(1).find((id) => !person(id).active) as number

    it('deactivates a user exclusive to the company: 200, active false, updated_at bumped, users.updated', async () => {
      const id = activeExclusive()
      const before = (await t.get(`/v1/users/${id}`, key1)).json().data
      expect(before.active).toBe(true)
      t.clock.advance(MINUTE)

      const res = await t.post(`/v1/users/${id}/deactivate`, undefined, key1)
      expect(res.statusCode, res.body).toBe(200)
      const after = { ...before, active: false, updated_at: t.clock.iso() }
      expect(res.json()).toStrictEqual({ data: after })
      expect((await t.get(`/v1/users/${id}`, key1)).json()).toStrictEqual({ data: after })
      expect(await t.events()).toStrictEqual([
        recordedEvent('users.updated', 1, id, new Date(START_MS + MINUTE), after, { active: true, updated_at: before.updated_at }),
      ])
      // A sync loop sees the change through updated_since.
      const since = await t.get(`/v1/users?updated_since=${encodeURIComponent(t.clock.iso())}`, key1)
      expect(since.json().data).toStrictEqual([after])
    })

    it('activates an inactive user exclusive to the company', async () => {
      const id = inactiveExclusive()
      const before = (await t.get(`/v1/users/${id}`, key1)).json().data
      expect(before.active).toBe(false)
      t.clock.advance(MINUTE)
      const res = await t.post(`/v1/users/${id}/activate`, undefined, key1)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json()).toStrictEqual({ data: { ...before, active: true, updated_at: t.clock.iso() } })
      expect((await t.events()).map((e) => [e.type, e.resource_id])).toEqual([['users.updated', id]])
    })

    it('is a no-op when repeated: 200, unchanged updated_at, no event', async () => {
      const id = activeExclusive()
      const first = await t.post(`/v1/users/${id}/deactivate`, undefined, key1)
      t.clock.advance(MINUTE)
      const again = await t.post(`/v1/users/${id}/deactivate`, undefined, key1)
      expect([first.statusCode, again.statusCode]).toEqual([200, 200])
      expect(again.json()).toStrictEqual(first.json())
      expect(await t.events()).toHaveLength(1)

      const alreadyActive = exclusiveMemberIds(1).filter((other) => other !== id && person(other).active)[0] as number
      const before = await t.get(`/v1/users/${alreadyActive}`, key1)
      const noop = await t.post(`/v1/users/${alreadyActive}/activate`, undefined, key1)
      expect(noop.statusCode).toBe(200)
      expect(noop.json()).toStrictEqual(before.json())
      expect(await t.events()).toHaveLength(1)
    })

    it.each(['activate', 'deactivate'])('%s of a user shared with another company is a 409 and changes nothing', async (action) => {
      const shared = sharedMemberIds(1, 2)
      expect(shared.length).toBeGreaterThan(0)
      for (const id of shared) {
        // The same person, under company 2's own user id.
        const id2 = userIdIn(2, id) as number
        const before1 = await t.get(`/v1/users/${id}`, key1)
        const before2 = await t.get(`/v1/users/${id2}`, key2)
        expectError(await t.post(`/v1/users/${id}/${action}`, undefined, key1), 409, 'conflict')
        expectError(await t.post(`/v1/users/${id2}/${action}`, undefined, key2), 409, 'conflict')
        expect((await t.get(`/v1/users/${id}`, key1)).body).toBe(before1.body)
        expect((await t.get(`/v1/users/${id2}`, key2)).body).toBe(before2.body)
      }
      expect(await t.events()).toEqual([])
    })

    it('refuses a user who became shared when they accepted another company’s invitation (409)', async () => {
      const id = activeExclusive()
      const key3 = await t.keyFor(3, ['users:read', 'users:write'])
      const { email, first_name, last_name } = person(id)
      const added = await t.post('/v1/users', { email, first_name, last_name }, key3)
      expect(added.statusCode).toBe(201)
      const id3 = added.json().data.id as number
      expect(id3).not.toBe(id)
      await t.app.workforceApi.invitations.accept({ companyId: 3, userId: id3 })
      const before = await t.get(`/v1/users/${id}`, key1)
      expectError(await t.post(`/v1/users/${id}/deactivate`, undefined, key1), 409, 'conflict')
      expectError(await t.post(`/v1/users/${id3}/deactivate`, undefined, key3), 409, 'conflict')
      expect((await t.get(`/v1/users/${id}`, key1)).body).toBe(before.body)
      expect((await t.events()).map((e) => [e.company_id, e.type])).toEqual([
        [3, 'users.created'],
        [3, 'users.updated'],
      ])
    })

    it.each(['activate', 'deactivate'])('%s of an unknown or malformed id is a 404', async (action) => {
      expectError(await t.post(`/v1/users/999999/${action}`, undefined, key1), 404, 'not_found')
      expectError(await t.post(`/v1/users/abc/${action}`, undefined, key1), 404, 'not_found')
      expectError(await t.post(`/v1/users/0/${action}`, undefined, key1), 404, 'not_found')
      expect(await t.events()).toEqual([])
    })

    it('needs the users:write scope', async () => {
      const readOnly = await t.keyFor(1, ['users:read'])
      expectError(await t.post(`/v1/users/${activeExclusive()}/deactivate`, undefined, readOnly), 403, 'forbidden')
      expect((await t.get(`/v1/users/${activeExclusive()}`, key1)).json().data.active).toBe(true)
    })
  })
})
