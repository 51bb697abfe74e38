import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ClaimedDelivery, DeliveryQuery, WebhookStore } from '../../ports/webhook-store.js'
import type { ConformanceGroup } from '../group.js'
import { DELIVERY_LEASE_MS, attemptRecord, changeEvent, endpointId, endpointRecord, eventId, outcome } from '../webhook-facts.js'
import { afterNow } from '../write-facts.js'
import { createEndpoints, deliveriesOf, freshDelivery, recordEvents } from './webhook-outbox.js'

/** The `webhook.test` event the plugin sends at `WRITE_NOW + atMs`: it concerns no resource. */
function testEvent(label: string, companyId: number, atMs: number) {
  return changeEvent(label, companyId, 'webhook.test', 0, atMs)
}

/** The event ids of one page, newest first, and whether more follow. */
async function pageOf(store: WebhookStore, endpoint: string, query: DeliveryQuery): Promise<{ events: string[]; has_more: boolean }> {
  const page = await store.listDeliveries(endpoint, query)
  return { events: page.deliveries.map((delivery) => delivery.event_id), has_more: page.has_more }
}

/**
 * What the admin screens need of the `WebhookStore` beyond the outbox (src/ports/webhook-store.ts):
 * `sendTest` delivers one event to one endpoint through the normal path, `eventPayload` shows an
 * endpoint the bodies of its own deliveries only, and `listDeliveries` narrows by status and
 * event type, paging within what it narrowed to.
 */
export const webhookTestEvents: ConformanceGroup = {
  title: 'webhook test events, payloads and delivery filters',
  requires: ['writes', 'webhooks'],
  define(ctx) {
    it('sendTest records the event and one delivery of it, due now, to that endpoint only; claimDue hands it out', async () => {
      const store = ctx.webhooks()
      const endpoints = {
        target: endpointRecord('test send: target', 1, ['todos.created']),
        'same company, *': endpointRecord('test send: sibling', 1, ['*']),
        'company 2, *': endpointRecord('test send: company 2', 2, ['*']),
      }
      await createEndpoints(store, Object.values(endpoints))
      const test = testEvent('test send: event', 1, 500)
      expect(await store.sendTest(endpoints.target.id, test, afterNow(500)), 'sendTest(target)').toBe(true)
      expect(await deliveriesOf(store, endpoints), 'listDeliveries of each endpoint').toEqual({
        target: [freshDelivery(endpoints.target, test)],
        'same company, *': [],
        'company 2, *': [],
      })

      expect(await store.claimDue(afterNow(499), afterNow(499 + DELIVERY_LEASE_MS), 10), 'claimDue 1 ms before it is due').toEqual([])
      const claims = await store.claimDue(afterNow(500), afterNow(500 + DELIVERY_LEASE_MS), 10)
      expect(claims.map((claim) => `${claim.event.id} → ${claim.endpoint.id}, attempt ${claim.attempt}`), 'claimDue when it is due').toEqual([
        `${test.id} → ${endpoints.target.id}, attempt 1`,
      ])
      const [claim] = claims as [ClaimedDelivery]
      expect(claim.event, 'the claimed event').toEqual({ id: test.id, type: 'webhook.test', company_id: 1, payload: test.payload })
      expect(claim.event.payload, 'the claimed payload, byte for byte').toBe(test.payload)

      const unsent = testEvent('test send: unknown endpoint', 1, 600)
      expect(await store.sendTest(endpointId('test send: no such endpoint'), unsent, afterNow(600)), 'sendTest to an unknown endpoint').toBe(false)
      // Nothing was recorded: the event cannot be redelivered, and no delivery is due.
      expect(await store.redeliver(endpoints['same company, *'].id, unsent.id, afterNow(700)), 'redeliver of the refused test event').toBe(false)
      expect(await store.claimDue(afterNow(10_000), afterNow(10_000 + DELIVERY_LEASE_MS), 10), 'claimDue after the refused sendTest').toEqual([])
    })

    it('eventPayload gives the body of an event the endpoint has a delivery of, byte for byte, and null for any other', async () => {
      const store = ctx.webhooks()
      const mine = endpointRecord('payload: mine', 1, ['todos.created'])
      const sibling = endpointRecord('payload: sibling', 1, ['users.created'])
      const theirs = endpointRecord('payload: theirs', 2, ['*'])
      await createEndpoints(store, [mine, sibling, theirs])
      const todo = changeEvent('payload: todo', 1, 'todos.created', ctx.edges.unicodeTodo, 10)
      const user = changeEvent('payload: user', 1, 'users.created', ctx.edges.person, 20)
      const their = changeEvent('payload: theirs', 2, 'todos.created', 7, 30)
      await recordEvents(ctx, [todo, user, their])
      const test = testEvent('payload: test', 1, 40)
      expect(await store.sendTest(mine.id, test, afterNow(40)), 'sendTest(mine)').toBe(true)

      expect(await store.eventPayload(mine.id, todo.id), 'eventPayload(mine, its delivered event)').toBe(todo.payload)
      expect(await store.eventPayload(mine.id, test.id), 'eventPayload(mine, its test event)').toBe(test.payload)
      const refused = {
        'an event of its company it has no delivery of': await store.eventPayload(mine.id, user.id),
        "another company's event": await store.eventPayload(mine.id, their.id),
        "another endpoint's test event": await store.eventPayload(sibling.id, test.id),
        "company 2's endpoint, company 1's event": await store.eventPayload(theirs.id, todo.id),
        'an unknown event': await store.eventPayload(mine.id, eventId('payload: never recorded')),
        'an unknown endpoint': await store.eventPayload(endpointId('payload: no such endpoint'), todo.id),
      }
      expect(refused, 'eventPayload of each').toEqual(Object.fromEntries(Object.keys(refused).map((key) => [key, null])))

      expect(await store.redeliver(mine.id, user.id, afterNow(50)), 'redeliver(mine, the event it was not subscribed to)').toBe(true)
      expect(await store.eventPayload(mine.id, user.id), 'eventPayload once the endpoint has a delivery of it').toBe(user.payload)

      // Delivered, then purged: no delivery is left, so no payload either.
      const claim = (await store.claimDue(afterNow(100), afterNow(100 + DELIVERY_LEASE_MS), 100)).find(
        (candidate) => candidate.event.id === todo.id && candidate.endpoint.id === mine.id,
      ) as ClaimedDelivery
      expect(await store.finishAttempt(claim, outcome.delivered(attemptRecord(1, 110, 200)), afterNow(120)), 'finish: delivered').not.toBeNull()
      expect(await store.purgeFinished(afterNow(1_000), 100), 'purgeFinished: the delivered delivery').toBeGreaterThan(0)
      expect(await store.eventPayload(mine.id, todo.id), 'eventPayload after its delivery was purged').toBeNull()
    })

    it('listDeliveries narrows by status and by event type, newest first, and pages within what it narrowed to', async () => {
      const store = ctx.webhooks()
      const endpoint = endpointRecord('filters: *', 1, ['*'])
      const other = endpointRecord('filters: other', 1, ['*'])
      await createEndpoints(store, [endpoint, other])
      const types = ['todos.created', 'users.updated']
      const events = [1, 2, 3, 4, 5, 6].map((n) => changeEvent(`filters: ${n}`, 1, types[(n - 1) % 2] as string, n, n))
      await recordEvents(ctx, events)
      const [e1, e2, e3, e4, e5, e6] = events.map((event) => event.id) as [string, string, string, string, string, string]
      const claims = (await store.claimDue(afterNow(10), afterNow(10 + DELIVERY_LEASE_MS), 100)).filter((claim) => claim.endpoint.id === endpoint.id)
      const finish = (id: string, result: ReturnType<(typeof outcome)['failed']>) =>
        store.finishAttempt(claims.find((claim) => claim.event.id === id) as ClaimedDelivery, result, afterNow(20))
      const finished = [
        await finish(e1, outcome.delivered(attemptRecord(1, 11, 200))),
        await finish(e2, outcome.failed(attemptRecord(1, 12, 410))),
        await finish(e3, outcome.delivered(attemptRecord(1, 13, 204))),
        await finish(e4, outcome.retryAt(attemptRecord(1, 14, 503), 60_000)),
        await finish(e5, outcome.failed(attemptRecord(1, 15, null, 'timeout after 15000 ms'))),
      ]
      expect(finished.map((done) => done !== null), 'finishAttempt of e1 to e5 recorded (e6 stays claimed, pending)').toEqual([true, true, true, true, true])

      const id = endpoint.id
      const answers = {
        'status delivered': await pageOf(store, id, { limit: 10, status: 'delivered' }),
        'status failed': await pageOf(store, id, { limit: 10, status: 'failed' }),
        'status pending': await pageOf(store, id, { limit: 10, status: 'pending' }),
        'event_type todos.created': await pageOf(store, id, { limit: 10, event_type: 'todos.created' }),
        'event_type users.updated': await pageOf(store, id, { limit: 10, event_type: 'users.updated' }),
        'todos.created and failed': await pageOf(store, id, { limit: 10, event_type: 'todos.created', status: 'failed' }),
        'users.updated and delivered': await pageOf(store, id, { limit: 10, event_type: 'users.updated', status: 'delivered' }),
        'an event type with no delivery': await pageOf(store, id, { limit: 10, event_type: 'shifts.deleted' }),
        'status failed, limit 2 (older deliveries of other statuses follow)': await pageOf(store, id, { limit: 2, status: 'failed' }),
        'todos.created, limit 2': await pageOf(store, id, { limit: 2, event_type: 'todos.created' }),
        'status pending, limit 1': await pageOf(store, id, { limit: 1, status: 'pending' }),
        'status failed, another endpoint': await pageOf(store, other.id, { limit: 10, status: 'failed' }),
      }
      expect(answers, 'event ids of each page, newest first, and has_more').toEqual({
        'status delivered': { events: [e3, e1], has_more: false },
        'status failed': { events: [e5, e2], has_more: false },
        'status pending': { events: [e6, e4], has_more: false },
        'event_type todos.created': { events: [e5, e3, e1], has_more: false },
        'event_type users.updated': { events: [e6, e4, e2], has_more: false },
        'todos.created and failed': { events: [e5], has_more: false },
        'users.updated and delivered': { events: [], has_more: false },
        'an event type with no delivery': { events: [], has_more: false },
        'status failed, limit 2 (older deliveries of other statuses follow)': { events: [e5, e2], has_more: false },
        'todos.created, limit 2': { events: [e5, e3], has_more: true },
        'status pending, limit 1': { events: [e6], has_more: true },
        'status failed, another endpoint': { events: [], has_more: false },
      })
      const first = await store.listDeliveries(id, { limit: 2, event_type: 'todos.created' })
      const cursor = first.deliveries[1]?.id as number
      expect(await pageOf(store, id, { limit: 2, event_type: 'todos.created', before: cursor }), 'todos.created, limit 2, before the second delivery').toEqual({
        events: [e1],
        has_more: false,
      })
      const [failed] = (await store.listDeliveries(id, { limit: 1, status: 'failed' })).deliveries
      expect(failed?.attempts_made, 'a narrowed delivery keeps its attempts').toEqual([attemptRecord(1, 15, null, 'timeout after 15000 ms')])
    })
  },
}
