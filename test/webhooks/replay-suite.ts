import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { WebhookAdminError, type WebhookEndpoint } from '../../src/webhooks/webhook-manager.js'
import { exclusiveMemberIds, listIds } from '../helpers/seed-facts.js'
import { buildWriteApp, FakeClock, type WriteAdapterFactory, type WriteTestApp } from '../helpers/write-app.js'
import { startReceiver, type Receiver } from './receiver.js'

const SECRET_KEY = randomBytes(32).toString('base64')

const todoBody = (companyId: number, title: string) => ({ title, list_id: listIds(companyId)[0], assigned_to: exclusiveMemberIds(companyId)[0] })

/** What a receiver got: each body's event id, type and to-do title, in arrival order. */
function sent(receiver: Receiver): Array<{ id: string; type: string; title: string | undefined }> {
  return receiver.received.map((request) => {
    const body = JSON.parse(request.body) as { id: string; type: string; data: { title?: string } }
    return { id: body.id, type: body.type, title: body.data.title }
  })
}

const quiet = (ms = 150) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves once `check` holds, polling every 10 ms for up to 5 s. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/**
 * Issue 24 part 5, through `app.workforceApi.webhooks.replay` and the real dispatcher: an
 * endpoint that was disabled, or created late, is sent the retained events of a period it
 * missed, once each, with the events' own ids; never another company's, never another
 * endpoint's test event.
 */
export function defineReplaySuite(adapter: WriteAdapterFactory): void {
  describe(`webhook replay of a period (${adapter.name})`, () => {
    let t: WriteTestApp | undefined
    let receiver: Receiver | undefined
    afterEach(async () => {
      await t?.close()
      await receiver?.close()
      t = undefined
      receiver = undefined
    })

    /** An app with a running dispatcher, its clock at the real now (receivers check timestamps). */
    async function setup(dispatcher = true) {
      receiver = await startReceiver()
      const clock = new FakeClock(Date.now())
      t = await buildWriteApp({
        adapter,
        options: { clock, webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, pollIntervalMs: 20, dispatcher } },
      })
      const webhooks = t.app.workforceApi.webhooks
      const create = async (companyId: number, events: string[]) => (await webhooks.create({ companyId, url: (receiver as Receiver).url, events })).endpoint
      return { t, clock, receiver, webhooks, create, key: await t.keyFor(1) }
    }

    it('sends a re-enabled endpoint what it missed while disabled, once, oldest first, with the events’ own ids; the queue waits for enable', async () => {
      const { t, clock, receiver, webhooks, create, key } = await setup()
      const endpoint = await create(1, ['todos.created'])
      const start = new Date(clock.now())
      expect((await t.post('/v1/todos', todoBody(1, 'Before the outage'), key)).statusCode).toBe(201)
      await receiver.waitFor(1)
      // Recorded as delivered first: a disable while an attempt is in flight fails it (and replay would send it again).
      await eventually(async () => (await webhooks.deliveries(endpoint.id)).deliveries[0]?.status === 'delivered')
      await webhooks.disable(endpoint.id)
      clock.advance(1_000)
      expect((await t.post('/v1/todos', todoBody(1, 'Missed one'), key)).statusCode).toBe(201)
      clock.advance(1_000)
      expect((await t.post('/v1/todos', todoBody(1, 'Missed two'), key)).statusCode).toBe(201)
      clock.advance(1_000)
      const period = { since: start, until: new Date(clock.now()) }

      // Disabled: replay queues them (like recover), and nothing is sent until it is enabled.
      expect(await webhooks.replay(endpoint.id, period)).toEqual({ count: 2, more: false })
      await quiet()
      expect(sent(receiver).map((body) => body.title)).toEqual(['Before the outage'])
      await webhooks.enable(endpoint.id)
      await receiver.waitFor(3)
      expect(sent(receiver).map((body) => body.title)).toEqual(['Before the outage', 'Missed one', 'Missed two'])
      // The webhook-id of each is the event's own id, as a receiver de-duplicating by id needs.
      for (const request of receiver.received) expect(request.headers['webhook-id']).toBe(JSON.parse(request.body).id)

      // Delivered now: the same replay again sends nothing, and nothing twice.
      await eventually(async () => (await webhooks.deliveries(endpoint.id)).deliveries.every((delivery) => delivery.status === 'delivered'))
      expect(await webhooks.replay(endpoint.id, period)).toEqual({ count: 0, more: false })
      await quiet()
      expect(receiver.received).toHaveLength(3)
    })

    it('sends an endpoint created late the period before it existed: its types and company only, not another endpoint’s test event', async () => {
      const { t, clock, webhooks, create, key } = await setup(false)
      const early = await create(1, ['*'])
      const start = new Date(clock.now())
      expect((await t.post('/v1/todos', todoBody(1, 'Ours'), key)).statusCode).toBe(201)
      expect((await t.post('/v1/todos', todoBody(2, 'Theirs'), await t.keyFor(2))).statusCode).toBe(201)
      await webhooks.sendTest(early.id)
      clock.advance(60_000)
      const late: WebhookEndpoint = await create(1, ['*'])
      const todosOnly = await create(1, ['users.created'])
      const period = { since: start, until: new Date(clock.now()) }

      expect(await webhooks.replay(late.id, period)).toEqual({ count: 1, more: false })
      expect(await webhooks.replay(todosOnly.id, period)).toEqual({ count: 0, more: false })
      const [delivery, ...others] = (await webhooks.deliveries(late.id)).deliveries
      expect(others).toEqual([])
      expect(delivery).toMatchObject({ event_type: 'todos.created', status: 'pending', attempts: 0, next_attempt_at: new Date(clock.now()) })
      // The same event, with the same id and body as the early endpoint got.
      const earlyOnes = (await webhooks.deliveries(early.id, { eventType: 'todos.created' })).deliveries
      expect(earlyOnes.map((one) => one.event_id)).toEqual([delivery!.event_id])
      expect(await webhooks.eventPayload(late.id, delivery!.event_id)).toBe(await webhooks.eventPayload(early.id, delivery!.event_id))
    })

    it('takes at most limit per call; the same call again continues until more is false', async () => {
      const { t, clock, webhooks, create, key } = await setup(false)
      const start = new Date(clock.now())
      for (const title of ['one', 'two', 'three']) {
        expect((await t.post('/v1/todos', todoBody(1, title), key)).statusCode).toBe(201)
        clock.advance(10)
      }
      const late = await create(1, ['todos.created'])
      const period = { since: start, until: new Date(clock.now()), limit: 2 }
      expect(await webhooks.replay(late.id, period)).toEqual({ count: 2, more: true })
      expect(await webhooks.replay(late.id, period)).toEqual({ count: 1, more: false })
      expect(await webhooks.replay(late.id, period)).toEqual({ count: 0, more: false })
      expect((await webhooks.deliveries(late.id)).deliveries).toHaveLength(3)
    })

    it('refuses a bad period, a bad limit and an unknown endpoint with the matching reason', async () => {
      const { clock, webhooks, create } = await setup(false)
      const endpoint = await create(1, ['*'])
      const now = new Date(clock.now())
      const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
        [endpoint.id, { since: now, until: now }, 'invalid_input', /since must be before until/],
        [endpoint.id, { since: new Date(now.getTime() + 1), until: now }, 'invalid_input', /since must be before until/],
        [endpoint.id, { since: new Date('nope'), until: now }, 'invalid_input', /since/],
        [endpoint.id, { since: now, until: 'tomorrow' }, 'invalid_input', /until/],
        [endpoint.id, { since: new Date(0), until: now, limit: 0 }, 'invalid_input', /limit/],
        [endpoint.id, { since: new Date(0), until: now, limit: 1_001 }, 'invalid_input', /limit/],
        ['we_' + 'a'.repeat(24), { since: new Date(0), until: now }, 'not_found', /we_a/],
      ]
      for (const [id, period, reason, message] of cases) {
        const error = await webhooks.replay(id, period as never).catch((caught: unknown) => caught)
        expect(error, JSON.stringify(period)).toBeInstanceOf(WebhookAdminError)
        expect(error).toMatchObject({ reason, message: expect.stringMatching(message) })
      }
    })
  })
}
