import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { WebhookDeliveryWithAttempts, WebhookEndpointRecord, WebhookStore } from '../../ports/webhook-store.js'
import type { ChangeEvent } from '../../ports/write-storage.js'
import type { ConformanceContext } from '../context.js'
import type { ConformanceGroup } from '../group.js'
import { DELIVERY_LEASE_MS, changeEvent, endpointRecord, endpointId, eventId } from '../webhook-facts.js'
import { afterNow } from '../write-facts.js'
import { DeliberateRollback, outcomeOf } from '../write-outcomes.js'
import { typed } from './value-fidelity.js'

/** A delivery as the suite compares it: everything but its id (the adapter's), with the runtime type of each instant. */
export function deliveryFacts(delivery: WebhookDeliveryWithAttempts): Record<string, unknown> {
  return {
    id: typeof delivery.id,
    endpoint_id: delivery.endpoint_id,
    event_id: delivery.event_id,
    event_type: delivery.event_type,
    status: delivery.status,
    attempts: typed(delivery.attempts),
    next_attempt_at: typed(delivery.next_attempt_at),
    created_at: typed(delivery.created_at),
    updated_at: typed(delivery.updated_at),
    attempts_made: delivery.attempts_made,
  }
}

/** What a delivery fanned out from `event` looks like before any attempt: pending, due when the event happened. */
export function freshDelivery(endpoint: WebhookEndpointRecord, event: ChangeEvent): Record<string, unknown> {
  return {
    id: 'number',
    endpoint_id: endpoint.id,
    event_id: event.id,
    event_type: event.type,
    status: 'pending',
    attempts: typed(0),
    next_attempt_at: typed(event.occurred_at),
    created_at: typed(event.occurred_at),
    updated_at: typed(event.occurred_at),
    attempts_made: [],
  }
}

/** Every delivery of each endpoint, newest first, keyed by a label for the failure message. */
export async function deliveriesOf(store: WebhookStore, endpoints: Record<string, WebhookEndpointRecord>): Promise<Record<string, unknown[]>> {
  const seen: Record<string, unknown[]> = {}
  for (const [label, endpoint] of Object.entries(endpoints)) {
    const page = await store.listDeliveries(endpoint.id, { limit: 100 })
    seen[label] = page.deliveries.map(deliveryFacts)
  }
  return seen
}

/** Stores `endpoints` through the port. */
export async function createEndpoints(store: WebhookStore, endpoints: readonly WebhookEndpointRecord[]): Promise<void> {
  for (const endpoint of endpoints) await store.createEndpoint(endpoint)
}

/** Records `events` through the write port, in one transaction. */
export async function recordEvents(ctx: ConformanceContext, events: readonly ChangeEvent[]): Promise<void> {
  await ctx.writes().transaction(async (tx) => {
    for (const event of events) await tx.recordEvent(event)
  })
}

/** The ids of the committed events, when the subject can read them back (`supports.events`); else null. */
async function committedEventIds(ctx: ConformanceContext): Promise<string[] | null> {
  if (!ctx.supports.events) return null
  return (await ctx.readEvents()).map((event) => event.id)
}

/**
 * `WebhookStore` endpoints and the outbox (src/ports/webhook-store.ts): endpoints round-trip
 * exactly; an event recorded by `recordEvent` or `publish` is fanned out, in its own
 * transaction, to a pending delivery for each enabled endpoint of its company subscribed to its
 * type or to `*`, and to none of another company's.
 */
export const webhookOutbox: ConformanceGroup = {
  title: 'webhook endpoints and outbox',
  requires: ['writes', 'webhooks'],
  define(ctx) {
    it('endpoints round-trip exactly, list oldest first per company, update only what is given, and toggle once', async () => {
      const store = ctx.webhooks()
      const older = endpointRecord('older', 1, ['todos.created', 'users.updated'], {
        description: null,
        created_at: afterNow(-120_001),
        updated_at: afterNow(-120_001),
      })
      const newer = endpointRecord('newer', 1, ['*'], {
        previous_secret: 'sealed:v1:previous',
        previous_secret_expires_at: afterNow(86_400_000),
        failing_since: afterNow(-5),
      })
      const other = endpointRecord('other company', 2, ['users.created'])
      const disabled = endpointRecord('disabled', 2, ['*'], { status: 'disabled', disabled_reason: 'gone', created_at: afterNow(-59_999) })
      await createEndpoints(store, [newer, other, older, disabled])

      for (const endpoint of [older, newer, other, disabled]) {
        expect(await store.getEndpoint(endpoint.id), `getEndpoint(${endpoint.id})`).toEqual(endpoint)
      }
      const read = await store.getEndpoint(newer.id)
      expect(
        [read?.company_id, read?.previous_secret_expires_at, read?.failing_since, read?.created_at].map(typed),
        'company_id, previous_secret_expires_at, failing_since, created_at of getEndpoint(newer), with runtime types',
      ).toEqual([newer.company_id, newer.previous_secret_expires_at, newer.failing_since, newer.created_at].map(typed))
      expect(await store.getEndpoint(endpointId('no such endpoint')), 'getEndpoint of an unknown id').toBeNull()
      expect(await store.listEndpoints(1), 'listEndpoints(1): oldest first').toEqual([older, newer])
      expect(await store.listEndpoints(2), 'listEndpoints(2): oldest first').toEqual([other, disabled])
      expect(await store.listEndpoints(3), 'listEndpoints(3): a company without endpoints').toEqual([])

      const changedAt = afterNow(1_000)
      const changes = { url: 'https://hooks.example.com/moved', description: null, events: ['users.deleted'], previous_secret: null, previous_secret_expires_at: null }
      const updated: WebhookEndpointRecord = { ...newer, ...changes, updated_at: changedAt }
      expect(await store.updateEndpoint(newer.id, changes, changedAt), 'updateEndpoint(newer, changes)').toEqual(updated)
      expect(await store.getEndpoint(newer.id), 'getEndpoint(newer) after the update').toEqual(updated)
      const rotated: WebhookEndpointRecord = { ...updated, secret: 'sealed:v1:next', updated_at: afterNow(2_000) }
      expect(await store.updateEndpoint(newer.id, { secret: 'sealed:v1:next' }, afterNow(2_000)), 'updateEndpoint(newer, { secret })').toEqual(rotated)
      expect(await store.updateEndpoint(endpointId('no such endpoint'), { url: 'https://x.example' }, changedAt), 'updateEndpoint of an unknown id').toBeNull()

      const steps = {
        'disableEndpoint(older, manual)': await store.disableEndpoint(older.id, 'manual', afterNow(3_000)),
        'disableEndpoint(older, failing) again': await store.disableEndpoint(older.id, 'failing', afterNow(3_001)),
        'disableEndpoint of an unknown id': await store.disableEndpoint(endpointId('no such endpoint'), 'manual', afterNow(3_002)),
        'enableEndpoint(disabled)': await store.enableEndpoint(disabled.id, afterNow(3_003)),
        'enableEndpoint(disabled) again': await store.enableEndpoint(disabled.id, afterNow(3_004)),
        'enableEndpoint of an unknown id': await store.enableEndpoint(endpointId('no such endpoint'), afterNow(3_005)),
      }
      expect(steps, 'what each toggle returned').toEqual({
        'disableEndpoint(older, manual)': true,
        'disableEndpoint(older, failing) again': false,
        'disableEndpoint of an unknown id': false,
        'enableEndpoint(disabled)': true,
        'enableEndpoint(disabled) again': false,
        'enableEndpoint of an unknown id': false,
      })
      expect(await store.getEndpoint(older.id), 'getEndpoint(older) after it was disabled').toEqual({
        ...older,
        status: 'disabled',
        disabled_reason: 'manual',
        updated_at: afterNow(3_000),
      })
      expect(await store.getEndpoint(disabled.id), 'getEndpoint(disabled) after it was enabled').toEqual({
        ...disabled,
        status: 'enabled',
        disabled_reason: null,
        updated_at: afterNow(3_003),
      })
    })

    it('recordEvent fans an event out to a pending delivery for each enabled endpoint of its company subscribed to its type or to *', async () => {
      const store = ctx.webhooks()
      const endpoints = {
        'todos.created': endpointRecord('fan-out: todos.created', 1, ['todos.created']),
        '*': endpointRecord('fan-out: *', 1, ['*']),
        'users.*': endpointRecord('fan-out: users', 1, ['users.created', 'users.updated']),
        'disabled *': endpointRecord('fan-out: disabled', 1, ['*'], { status: 'disabled', disabled_reason: 'manual' }),
        'company 2 *': endpointRecord('fan-out: company 2', 2, ['*']),
      }
      await createEndpoints(store, Object.values(endpoints))
      const created = changeEvent('fan-out: todo created', 1, 'todos.created', ctx.edges.unicodeTodo, 10)
      const updated = changeEvent('fan-out: user updated', 1, 'users.updated', ctx.edges.person, 20)
      const unheard = changeEvent('fan-out: project deleted', 1, 'projects.deleted', 7, 30)
      await recordEvents(ctx, [created])
      await ctx.writes().transaction(async (tx) => {
        await tx.recordEvent(updated)
        await tx.recordEvent(unheard)
      })

      expect(await deliveriesOf(store, endpoints), 'listDeliveries of each endpoint, newest first').toEqual({
        'todos.created': [freshDelivery(endpoints['todos.created'], created)],
        '*': [freshDelivery(endpoints['*'], unheard), freshDelivery(endpoints['*'], updated), freshDelivery(endpoints['*'], created)],
        'users.*': [freshDelivery(endpoints['users.*'], updated)],
        'disabled *': [],
        'company 2 *': [],
      })
      const ids = await committedEventIds(ctx)
      if (ids !== null) expect(ids, 'readEvents(): every event is kept, with or without deliveries').toEqual([created.id, updated.id, unheard.id])
    })

    it('an event recorded in a transaction that rolls back leaves neither the event nor a delivery', async () => {
      const store = ctx.webhooks()
      const endpoint = endpointRecord('rollback: *', 1, ['*'])
      await store.createEndpoint(endpoint)
      const before = await committedEventIds(ctx)
      const lost = changeEvent('rollback: lost', 1, 'todos.updated', ctx.edges.unicodeTodo)
      const outcome = await outcomeOf(
        ctx.writes().transaction(async (tx) => {
          await tx.recordEvent(lost)
          throw new DeliberateRollback()
        }),
      )
      expect(outcome, 'the transaction: recordEvent, then a throw').toBe('DeliberateRollback')
      expect(await deliveriesOf(store, { '*': endpoint }), 'deliveries after the rollback').toEqual({ '*': [] })
      expect(await store.claimDue(afterNow(DELIVERY_LEASE_MS), afterNow(2 * DELIVERY_LEASE_MS), 10), 'claimDue after the rollback').toEqual([])
      expect(await store.redeliver(endpoint.id, lost.id, afterNow(1)), 'redeliver of the rolled-back event').toBe(false)
      if (before !== null) expect(await committedEventIds(ctx), 'readEvents() after the rollback').toEqual(before)
    })

    it('publish in a host transaction commits with it and rolls back with it', async () => {
      const store = ctx.webhooks()
      const endpoints = { 'todos.*': endpointRecord('publish: todos', 1, ['todos.created', 'todos.updated']), 'company 2 *': endpointRecord('publish: company 2', 2, ['*']) }
      await createEndpoints(store, Object.values(endpoints))
      const before = await committedEventIds(ctx)
      const first = changeEvent('publish: first', 1, 'todos.created', 11, 100)
      const second = changeEvent('publish: second', 1, 'todos.updated', 11, 200)
      const elsewhere = changeEvent('publish: company 2', 2, 'shifts.updated', 12, 300)
      const rolledBack = changeEvent('publish: rolled back', 1, 'todos.updated', 11, 400)

      await ctx.hostTransaction((handle) => store.publish(handle, [first, second, elsewhere]))
      const outcome = await outcomeOf(
        ctx.hostTransaction(async (handle) => {
          await store.publish(handle, [rolledBack])
          throw new DeliberateRollback()
        }),
      )
      expect(outcome, 'the host transaction: publish, then a throw').toBe('DeliberateRollback')
      expect(await deliveriesOf(store, endpoints), 'listDeliveries of each endpoint, newest first').toEqual({
        'todos.*': [freshDelivery(endpoints['todos.*'], second), freshDelivery(endpoints['todos.*'], first)],
        'company 2 *': [freshDelivery(endpoints['company 2 *'], elsewhere)],
      })
      if (before !== null) {
        expect(await committedEventIds(ctx), 'readEvents(): the committed publish only').toEqual([...before, first.id, second.id, elsewhere.id])
      }
      await ctx.hostTransaction((handle) => store.publish(handle, []))
      expect((await store.listDeliveries(endpoints['todos.*'].id, { limit: 10 })).deliveries.length, 'deliveries after publishing no event').toBe(2)
    })

    it('a company never sees another company\'s endpoints, events or deliveries', async () => {
      const store = ctx.webhooks()
      const mine = endpointRecord('isolation: company 1', 1, ['*'])
      const theirs = endpointRecord('isolation: company 2', 2, ['*'])
      await createEndpoints(store, [mine, theirs])
      const theirEvent = changeEvent('isolation: company 2 event', 2, 'users.created', 5)
      await recordEvents(ctx, [theirEvent])

      expect(await store.listEndpoints(1), 'listEndpoints(1)').toEqual([mine])
      expect(await deliveriesOf(store, { 'company 1': mine, 'company 2': theirs }), 'deliveries of each endpoint').toEqual({
        'company 1': [],
        'company 2': [freshDelivery(theirs, theirEvent)],
      })
      expect(await store.redeliver(mine.id, theirEvent.id, afterNow(1)), "redeliver of company 2's event to company 1's endpoint").toBe(false)
      expect(await store.redeliver(mine.id, eventId('isolation: never recorded'), afterNow(1)), 'redeliver of an unknown event').toBe(false)
      expect((await store.listDeliveries(mine.id, { limit: 10 })).deliveries, "company 1's deliveries after the refused redelivery").toEqual([])

      const claims = await store.claimDue(afterNow(1), afterNow(1 + DELIVERY_LEASE_MS), 10)
      expect(
        claims.map((claim) => ({ event: claim.event.id, event_company: claim.event.company_id, endpoint: claim.endpoint.id, endpoint_company: claim.endpoint.company_id })),
        'claimDue: the only due delivery',
      ).toEqual([{ event: theirEvent.id, event_company: 2, endpoint: theirs.id, endpoint_company: 2 }])
    })
  },
}
