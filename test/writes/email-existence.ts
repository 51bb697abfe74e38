import { expect, it } from 'vitest'
import { mannWhitney } from '../../bench/mann-whitney.js'
import type { Invitation } from '../../src/ports/invite-sender.js'
import { buildWriteApp, PREFIX, seedDataset, type WriteAdapterFactory, type WriteTestApp } from '../helpers/write-app.js'

/**
 * Issue 21: `POST /v1/users` must tell a company nothing about other companies. Over real HTTP,
 * an email with a login in another company and a brand-new email of the same length get the
 * same answer byte for byte (status, headers, body), but for what is fresh per call (the user
 * id, in the body and in `Location`, the rate-limit counter and the wall clock's `Date` and
 * `X-RateLimit-Reset`), which must then be fresh in
 * both; and the two take the same time (two-sided Mann-Whitney U, as bench/auth-timing.ts).
 */
export function describeEmailExistence(factory: WriteAdapterFactory, samples = Number(process.env.WFA_EMAIL_TIMING_SAMPLES ?? 300)): void {
  const seed = seedDataset()
  // People of company 2 alone: each has a login, in another company than company 1.
  const elsewhere = seed.people.filter((person) => {
    const companies = seed.memberships.filter((m) => m.person_id === person.id).map((m) => m.company_id)
    return companies.join() === '2'
  })
  /** A brand-new email exactly as long as `email`, with the same domain: no login anywhere. */
  const brandNew = (email: string, salt: number) => {
    const [local, domain] = email.split('@') as [string, string]
    const fresh = `n${salt.toString(36)}`.padEnd(local.length, 'x').slice(0, local.length)
    const candidate = `${fresh}@${domain}`
    if (seed.people.some((person) => person.email.toLowerCase() === candidate.toLowerCase())) throw new Error(`test bug: ${candidate} exists`)
    return candidate
  }

  let t: WriteTestApp
  let base: string
  let key: string
  let invitations: Invitation[]
  const open = async () => {
    invitations = []
    t = await buildWriteApp({
      adapter: factory,
      options: { invites: { sendInvite: async (invitation) => void invitations.push(invitation) }, rateLimit: { max: 1_000_000 } },
    })
    key = await t.keyFor(1, ['users:read', 'users:write'])
    base = await t.app.listen({ host: '127.0.0.1', port: 0 })
  }
  const post = async (email: string) => {
    const res = await fetch(`${base}${PREFIX}/v1/users`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ email, first_name: 'Probe', last_name: 'Person', role_ids: [], send_invite: false }),
    })
    return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() }
  }

  it('answers an email with a login in another company and a brand-new one alike, byte for byte but for the fresh id', async () => {
    await open()
    try {
      const answers: Array<{ existing: Awaited<ReturnType<typeof post>>; fresh: Awaited<ReturnType<typeof post>> }> = []
      for (const [index, person] of elsewhere.slice(0, 6).entries()) {
        const existing = await post(person.email)
        const fresh = await post(brandNew(person.email, index))
        answers.push({ existing, fresh })
      }
      const ids: number[] = []
      for (const { existing, fresh } of answers) {
        expect([existing.status, fresh.status], `${existing.body} / ${fresh.body}`).toEqual([201, 201])
        const idOf = (answer: typeof existing) => (JSON.parse(answer.body) as { data: { id: number } }).data.id
        const [a, b] = [idOf(existing), idOf(fresh)]
        ids.push(a, b)
        // Everything but the fresh parts: the same bytes.
        const normalize = (answer: typeof existing, id: number, email: string) => {
          // `date` and `x-ratelimit-reset` (seconds left in the window) follow the wall clock.
          const { date: _date, 'x-ratelimit-reset': _reset, 'x-ratelimit-remaining': remaining, location, ...headers } = answer.headers
          expect(location, 'Location names the fresh id').toBe(`${PREFIX}/v1/users/${id}`)
          expect(Number(remaining), 'the rate-limit counter moves on').toBeGreaterThan(0)
          return { status: answer.status, headers, body: answer.body.replace(`"id":${id},`, '"id":<fresh>,').replace(JSON.stringify(email), '"<email sent>"') }
        }
        const existingEmail = (JSON.parse(existing.body) as { data: { email: string } }).data.email
        const freshEmail = (JSON.parse(fresh.body) as { data: { email: string } }).data.email
        expect(existingEmail.length, 'test bug: the two emails must be as long').toBe(freshEmail.length)
        expect(normalize(existing, a, existingEmail)).toStrictEqual(normalize(fresh, b, freshEmail))
        expect(JSON.parse(existing.body).data).toMatchObject({ active: false, invitation_status: 'pending', first_name: 'Probe' })
      }
      // Fresh in both cases: every id new, above every id the company could have known before.
      const known = Math.max(...seed.memberships.map((m) => m.user_id), ...seed.people.map((p) => p.id))
      expect(new Set(ids).size).toBe(ids.length)
      for (const id of ids) expect(id).toBeGreaterThan(known)
      expect([...ids].sort((x, y) => x - y), 'ids grow with every addition').toEqual(ids)
      // The existing person's id in company 2 never shows: not as an id, not in the answer.
      for (const person of elsewhere.slice(0, 6)) {
        const userIn2 = seed.memberships.find((m) => m.person_id === person.id)?.user_id
        expect(ids).not.toContain(userIn2)
      }
      // An invitation for each, alike.
      expect(invitations.map((invitation) => invitation.requiresAcceptance)).toEqual(ids.map(() => true))
      // And what GET shows afterwards is alike too.
      for (const { existing, fresh } of answers) {
        const [a, b] = [existing, fresh].map((answer) => JSON.parse(answer.body).data as { id: number })
        const get = async (id: number) => (await fetch(`${base}${PREFIX}/v1/users/${id}`, { headers: { 'x-api-key': key } })).text()
        expect((await get(a!.id)).replace(`"id":${a!.id},`, '').length).toBe((await get(b!.id)).replace(`"id":${b!.id},`, '').length)
        expect(JSON.parse(await get(a!.id)).data).toStrictEqual(JSON.parse(existing.body).data)
      }
    } finally {
      await t.close()
    }
  })

  it(`takes the same time for an email with a login elsewhere and a new one (${samples} interleaved pairs, Mann-Whitney U)`, { timeout: 120_000 }, async () => {
    await open()
    try {
      const probes = elsewhere.slice(0, 20)
      const timed = async (email: string) => {
        const start = process.hrtime.bigint()
        const answer = await post(email)
        const ns = Number(process.hrtime.bigint() - start)
        if (answer.status !== 201) throw new Error(`${email}: ${answer.status} ${answer.body}`)
        // Withdraw it (untimed) so the same email can be tried again.
        const { id } = (JSON.parse(answer.body) as { data: { id: number } }).data
        await t.app.workforceApi.invitations.decline({ companyId: 1, userId: id })
        return ns
      }
      for (let i = 0; i < 40; i++) {
        await timed(probes[i % probes.length]!.email)
        await timed(brandNew(probes[i % probes.length]!.email, 10_000 + i))
      }
      const existing: number[] = []
      const fresh: number[] = []
      for (let i = 0; i < samples; i++) {
        const person = probes[i % probes.length]!
        const other = brandNew(person.email, 20_000 + i)
        // Alternate which goes first, so neither always runs right after the other.
        if (i % 2 === 0) {
          existing.push(await timed(person.email))
          fresh.push(await timed(other))
        } else {
          fresh.push(await timed(other))
          existing.push(await timed(person.email))
        }
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
      const test = mannWhitney(existing, fresh)
      console.log(
        `email existence timing (${factory.name}, ${samples} pairs): median existing ${(median(existing) / 1000).toFixed(0)} µs, new ${(median(fresh) / 1000).toFixed(0)} µs; ` +
          `Mann-Whitney U z = ${test.z.toFixed(2)}, two-sided p = ${test.p.toPrecision(3)}`,
      )
      // No measurable difference: the test does not reject "same distribution" at the 0.1 % level.
      expect(test.p, `z = ${test.z.toFixed(2)}`).toBeGreaterThan(0.001)
    } finally {
      await t.close()
    }
  })
}
