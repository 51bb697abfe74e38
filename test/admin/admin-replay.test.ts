import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { exclusiveMemberIds, listIds } from '../helpers/seed-facts.js'
import { buildAdminApp, memoryFactory, sqliteFactory, type AdminAdapterFactory, type AdminTestApp } from './admin-app.js'

const dir = mkdtempSync(join(tmpdir(), 'wfa-admin-replay-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A public address needing no DNS: the dispatcher is off, nothing is sent. */
const HOOK_URL = 'https://93.184.215.14/hooks'
const todoBody = (companyId: number, title: string) => ({ title, list_id: listIds(companyId)[0], assigned_to: exclusiveMemberIds(companyId)[0] })

// Issue 24 part 5: POST /webhooks/endpoints/:id/replay, next to recover.
for (const factory of [memoryFactory(), sqliteFactory(() => dir)] satisfies AdminAdapterFactory[]) {
  describe(`admin replay over ${factory.name} (app.inject)`, () => {
    let opened: Awaited<ReturnType<AdminAdapterFactory['open']>>
    let t: AdminTestApp
    beforeEach(async () => {
      opened = await factory.open()
      t = await buildAdminApp(opened.adapter)
    })
    afterEach(async () => {
      await t.close()
      await opened.adapter.close()
    })

    const keyOf = async (session: string) => {
      const res = await t.admin('POST', '/keys', { name: 'Writer', scopes: ['all'] }, { session })
      expect(res.statusCode, res.body).toBe(201)
      return res.json().key as string
    }
    const endpointOf = async (session: string, events: string[]) => {
      const res = await t.admin('POST', '/webhooks/endpoints', { url: HOOK_URL, events }, { session })
      expect(res.statusCode, res.body).toBe(201)
      return res.json().data.id as string
    }
    const deliveriesOf = async (id: string, session = '1:u1:Ada Admin') =>
      (await t.admin('GET', `/webhooks/endpoints/${id}/deliveries`, undefined, { session })).json().data as Array<{ event_type: string; status: string; attempts: number }>

    it('sends a re-enabled endpoint the events it missed while disabled, once, and records who asked', async () => {
      const key = await keyOf('1:u1:Ada Admin')
      const theirKey = await keyOf('2:u9:Other')
      const since = new Date(Date.now() - 1_000).toISOString()
      const mine = await endpointOf('1:u1:Ada Admin', ['todos.created'])
      const theirs = await endpointOf('2:u9:Other', ['*'])
      expect((await t.admin('POST', `/webhooks/endpoints/${mine}/disable`)).statusCode).toBe(200)
      for (const title of ['Missed one', 'Missed two']) expect((await t.api('POST', '/v1/todos', key, todoBody(1, title))).statusCode).toBe(201)
      expect((await t.api('POST', '/v1/todos', theirKey, todoBody(2, 'Theirs'))).statusCode).toBe(201)
      expect(await deliveriesOf(mine)).toEqual([])
      expect((await t.admin('POST', `/webhooks/endpoints/${mine}/enable`)).statusCode).toBe(200)

      const until = new Date(Date.now() + 60_000).toISOString()
      const replayed = await t.admin('POST', `/webhooks/endpoints/${mine}/replay`, { since, until })
      expect(replayed.statusCode, replayed.body).toBe(200)
      expect(replayed.json()).toEqual({ count: 2, more: false })
      expect((await deliveriesOf(mine)).map(({ event_type, status, attempts }) => ({ event_type, status, attempts }))).toEqual([
        { event_type: 'todos.created', status: 'pending', attempts: 0 },
        { event_type: 'todos.created', status: 'pending', attempts: 0 },
      ])
      // Another company's endpoint kept its own delivery and got none of company 1's events.
      expect((await deliveriesOf(theirs, '2:u9:Other')).map((delivery) => delivery.event_type)).toEqual(['todos.created'])

      const audit = (await t.admin('GET', '/audit?limit=100')).json().data as Array<{ action: string; target_id: string; actor: { id: string }; details: unknown }>
      expect(audit[0]).toMatchObject({ action: 'webhook_deliveries.replayed', target_id: mine, actor: { id: 'u1' }, details: { since, until } })
      // Nothing left to send: the same call answers 0 and records nothing.
      expect((await t.admin('POST', `/webhooks/endpoints/${mine}/replay`, { since, until })).json()).toEqual({ count: 0, more: false })
      expect((await t.admin('GET', '/audit?limit=100')).json().data).toHaveLength(audit.length)
    })

    it("answers 404 for another company's endpoint, as for an unknown one, and changes nothing", async () => {
      const theirs = await endpointOf('2:u9:Other', ['*'])
      const period = { since: '2000-01-01T00:00:00.000Z', until: '2100-01-01T00:00:00.000Z' }
      const a = await t.admin('POST', `/webhooks/endpoints/${theirs}/replay`, period)
      const b = await t.admin('POST', `/webhooks/endpoints/we_${'a'.repeat(24)}/replay`, period)
      expect([a.statusCode, b.statusCode]).toEqual([404, 404])
      expect(a.json().error.message.replace(theirs, `we_${'a'.repeat(24)}`)).toBe(b.json().error.message)
      expect(await deliveriesOf(theirs, '2:u9:Other')).toEqual([])
    })

    it('refuses a bad period with 422 in the envelope, never a 500', async () => {
      const mine = await endpointOf('1:u1:Ada Admin', ['*'])
      const cases = [
        {},
        { since: '2026-01-01T00:00:00.000Z' },
        { since: 'yesterday', until: '2026-01-02T00:00:00.000Z' },
        { since: '2026-01-01T00:00:00.000Z', until: '2026-01-02T00:00:00.000Z', limit: 5 },
        { since: '2026-01-02T00:00:00.000Z', until: '2026-01-02T00:00:00.000Z' },
        { since: '2026-01-03T00:00:00.000Z', until: '2026-01-02T00:00:00.000Z' },
      ]
      for (const body of cases) {
        const res = await t.admin('POST', `/webhooks/endpoints/${mine}/replay`, body)
        expect(res.statusCode, JSON.stringify(body)).toBe(422)
        expect(res.json().error).toMatchObject({ status: 422 })
      }
      expect((await t.admin('GET', '/audit?limit=100')).json().data.map((entry: { action: string }) => entry.action)).toEqual(['webhook_endpoint.created'])
    })
  })
}
