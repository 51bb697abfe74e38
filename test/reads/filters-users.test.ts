import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { DATASET, idsWhere, usersOf } from '../helpers/expected-reads.js'
import { listAll, listIds } from '../helpers/list-http.js'

/** People of a company whose stored email is not all lower case (the seed has two per company). */
function mixedCaseUsers(companyId: number) {
  return usersOf(companyId).filter((user) => user.email !== user.email.toLowerCase())
}

// Spec 2.1 and 4.1: GET /v1/users filters active, email, updated_since.
describe.each(READ_ADAPTERS)('GET /v1/users filters ($name)', (adapter) => {
  let t: TestApp
  const keys = new Map<number, string>()
  const keyOf = (companyId: number) => keys.get(companyId) as string

  beforeAll(async () => {
    t = await build({ adapter })
    for (const companyId of [1, 2]) keys.set(companyId, await t.keyFor(companyId, ['users:read']))
  })
  afterAll(() => t.close())

  describe.each([1, 2])('company %i', (companyId) => {
    it.each([true, false])('active=%s returns exactly the users whose login is %s', async (active) => {
      const expected = idsWhere('users', companyId, (user) => user.active === active)
      expect(expected.length).toBeGreaterThan(0)
      expect(await listIds(t, keyOf(companyId), '/v1/users', `active=${active}`)).toEqual(expected)
    })

    it('email matches a mixed-case address by its lower-case and upper-case forms', async () => {
      const mixed = mixedCaseUsers(companyId)
      expect(mixed.length).toBeGreaterThanOrEqual(2)
      for (const user of mixed) {
        for (const query of [user.email, user.email.toLowerCase(), user.email.toUpperCase()]) {
          const rows = await listAll(t, keyOf(companyId), '/v1/users', `email=${encodeURIComponent(query)}`)
          expect(rows.map((row) => row.id), query).toEqual([user.id])
          expect(rows[0]?.email).toBe(user.email) // returned as stored, not lower-cased
        }
      }
    })

    it('email is an exact match: a prefix, a suffix or a longer address finds nothing', async () => {
      const [user] = mixedCaseUsers(companyId)
      if (user === undefined) throw new Error('seed has no mixed-case email')
      const email = user.email.toLowerCase()
      const at = email.indexOf('@')
      for (const query of [email.slice(0, at), email.slice(0, -1), email.slice(1), `${email}x`, `x${email}`, email.slice(0, at + 1)]) {
        expect(await listIds(t, keyOf(companyId), '/v1/users', `email=${encodeURIComponent(query)}`), query).toEqual([])
      }
    })

    it('email does not treat SQL wildcards as wildcards', async () => {
      const [user] = mixedCaseUsers(companyId)
      if (user === undefined) throw new Error('seed has no mixed-case email')
      const wildcard = `${user.email.slice(0, 3)}%`
      const single = `_${user.email.slice(1)}`
      for (const query of [wildcard, single, '%']) {
        expect(await listIds(t, keyOf(companyId), '/v1/users', `email=${encodeURIComponent(query)}`), query).toEqual([])
      }
    })

    it('every user is found by its own email, whatever the case', async () => {
      for (const user of usersOf(companyId).slice(0, 12)) {
        const ids = await listIds(t, keyOf(companyId), '/v1/users', `email=${encodeURIComponent(user.email.toUpperCase())}`)
        expect(ids, user.email).toEqual([user.id])
      }
    })

    it('updated_since is inclusive: a user updated exactly at the bound is included', async () => {
      const users = usersOf(companyId)
      const pivot = users[Math.floor(users.length / 2)]
      if (pivot === undefined) throw new Error('no users')
      const bound = pivot.updated_at
      const expected = idsWhere('users', companyId, (user) => user.updated_at.getTime() >= bound.getTime())
      expect(expected).toContain(pivot.id)
      expect(expected.length).toBeLessThan(users.length)
      expect(await listIds(t, keyOf(companyId), '/v1/users', `updated_since=${bound.toISOString()}`)).toEqual(expected)

      const after = new Date(bound.getTime() + 1)
      const expectedAfter = idsWhere('users', companyId, (user) => user.updated_at.getTime() >= after.getTime())
      expect(expectedAfter).not.toContain(pivot.id)
      expect(await listIds(t, keyOf(companyId), '/v1/users', `updated_since=${after.toISOString()}`)).toEqual(expectedAfter)
    })

    it('filters combine with AND', async () => {
      const bound = new Date('2026-01-06T00:00:00.000Z')
      const expected = idsWhere('users', companyId, (user) => user.active && user.updated_at >= bound)
      expect(expected.length).toBeGreaterThan(0)
      const ids = await listIds(t, keyOf(companyId), '/v1/users', `active=true&updated_since=${bound.toISOString()}`)
      expect(ids).toEqual(expected)

      const inactive = usersOf(companyId).find((user) => !user.active)
      if (inactive === undefined) throw new Error('seed has no inactive user')
      const email = encodeURIComponent(inactive.email)
      expect(await listIds(t, keyOf(companyId), '/v1/users', `email=${email}&active=false`)).toEqual([inactive.id])
      expect(await listIds(t, keyOf(companyId), '/v1/users', `email=${email}&active=true`)).toEqual([])
    })
  })

  it('a shared user’s updated_at is the membership’s: updated_since sees each company’s own change', async () => {
    // Users whose person is in both companies (under another id in each, issue 21): their
    // company-2 membership changed later than company 1's.
    const people = (companyId: number) => new Set(DATASET.memberships.filter((m) => m.company_id === companyId).map((m) => m.person_id))
    const personOf = (userId: number) => DATASET.memberships.find((m) => m.user_id === userId)?.person_id
    const shared = usersOf(2).filter((user) => people(1).has(personOf(user.id) ?? null))
    expect(shared.length).toBeGreaterThanOrEqual(3)
    const bound = new Date('2026-01-20T00:00:00.000Z')
    for (const companyId of [1, 2]) {
      const expected = idsWhere('users', companyId, (user) => user.updated_at >= bound)
      expect(await listIds(t, keyOf(companyId), '/v1/users', `updated_since=${bound.toISOString()}`)).toEqual(expected)
    }
    const sharedIds = shared.map((user) => user.id)
    expect(idsWhere('users', 2, (user) => user.updated_at >= bound).filter((id) => sharedIds.includes(id)).length).toBeGreaterThan(0)
  })

  it('an email of another company’s user finds nothing', async () => {
    const onlyInCompany1 = usersOf(1).find((user) => !usersOf(2).some((other) => other.email === user.email))
    if (onlyInCompany1 === undefined) throw new Error('no company-1-only user')
    expect(await listIds(t, keyOf(2), '/v1/users', `email=${encodeURIComponent(onlyInCompany1.email)}`)).toEqual([])
    expect(DATASET.people.some((person) => person.email === onlyInCompany1.email)).toBe(true)
  })
})
