import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ClaimedDelivery, ReplayPeriod, WebhookDeliveryWithAttempts, WebhookStore } from '../../ports/webhook-store.js'
import type { ConformanceGroup } from '../group.js'
import { auditEntry } from '../audit-facts.js'
import { DELIVERY_LEASE_MS, attemptRecord, changeEvent, endpointId, endpointRecord, outcome } from '../webhook-facts.js'
import { afterNow } from '../write-facts.js'
import { typed } from './value-fidelity.js'
import { createEndpoints, recordEvents } from './webhook-outbox.js'

/** `[WRITE_NOW + sinceMs, WRITE_NOW + untilMs)` of `types`, at most `limit`. */
function period(sinceMs: number, untilMs: number, types: string[], limit = 100): ReplayPeriod {
  return { since: afterNow(sinceMs), until: afterNow(untilMs), types, limit }
}

/** The endpoint's deliveries by event id: status, attempts, when due, and how many attempts are logged. */
async function deliveryStates(store: WebhookStore, endpoint: string): Promise<Record<string, unknown>> {
  const page = await store.listDeliveries(endpoint, { limit: 100 })
  return Object.fromEntries(page.deliveries.map((delivery: WebhookDeliveryWithAttempts) => [delivery.event_id, stateOf(delivery)]))
}

function stateOf(delivery: WebhookDeliveryWithAttempts): Record<string, unknown> {
  return { status: delivery.status, attempts: typed(delivery.attempts), next_attempt_at: typed(delivery.next_attempt_at), logged: delivery.attempts_made.length }
}

/**
 * `WebhookStore.replay` (src/ports/webhook-store.ts): an endpoint disabled for a while, or
 * created late, is sent the retained events of a period it never got or got only as a failed
 * delivery — of the given types, of its own company only, oldest first, at most `limit` per
 * call — while its delivered and pending deliveries are left alone.
 */
export const webhookReplay: ConformanceGroup = {
  title: 'webhook replay of a period',
  requires: ['writes', 'webhooks'],
  define(ctx) {
    it("replay makes due now the period's events of the given types that the endpoint never got or that failed, and leaves the rest alone", async () => {
      const store = ctx.webhooks()
      const types = ['todos.created']
      // Recorded before the endpoint existed: it never got these.
      const before = changeEvent('replay: before the period', 1, 'todos.created', 1, -10)
      const missed = changeEvent('replay: missed', 1, 'todos.created', 2, 5)
      await recordEvents(ctx, [before, missed])

      const target = endpointRecord('replay: target', 1, types)
      const theirs = endpointRecord('replay: company 2', 2, ['*'])
      await createEndpoints(store, [target, theirs])
      const delivered = changeEvent('replay: delivered', 1, 'todos.created', 3, 10)
      const failed = changeEvent('replay: failed', 1, 'todos.created', 4, 20)
      const retrying = changeEvent('replay: retrying', 1, 'todos.created', 5, 30)
      const otherType = changeEvent('replay: a type not replayed', 1, 'users.created', ctx.edges.person, 35)
      const otherCompany = changeEvent('replay: company 2 event', 2, 'todos.created', 7, 36)
      const atUntil = changeEvent('replay: at until', 1, 'todos.created', 8, 50)
      await recordEvents(ctx, [delivered, failed, retrying, otherType, otherCompany, atUntil])
      // A test event sent to company 2's endpoint: never another endpoint's.
      expect(await store.sendTest(theirs.id, changeEvent('replay: test event', 2, 'webhook.test', 0, 37), afterNow(37)), 'sendTest(company 2)').toBe(true)

      const claims = (await store.claimDue(afterNow(100), afterNow(100 + DELIVERY_LEASE_MS), 100)).filter((claim) => claim.endpoint.id === target.id)
      const finish = (event: { id: string }, result: ReturnType<(typeof outcome)['failed']>) =>
        store.finishAttempt(claims.find((claim) => claim.event.id === event.id) as ClaimedDelivery, result, afterNow(110))
      const finished = [
        await finish(delivered, outcome.delivered(attemptRecord(1, 101, 204))),
        await finish(failed, outcome.failed(attemptRecord(1, 102, 410))),
        await finish(retrying, outcome.retryAt(attemptRecord(1, 103, 503), 60_000)),
        await finish(atUntil, outcome.failed(attemptRecord(1, 104, 500))),
      ]
      expect(
        finished.map((done) => done !== null),
        'finishAttempt: delivered, failed, retrying, failed (the event at until)',
      ).toEqual([true, true, true, true])

      const now = afterNow(1_000)
      expect(await store.replay(target.id, period(0, 50, types), now), 'replay([0, 50), todos.created)').toEqual({ count: 2, more: false })
      expect(await deliveryStates(store, target.id), "the target's deliveries by event").toEqual({
        [missed.id]: { status: 'pending', attempts: typed(0), next_attempt_at: typed(now), logged: 0 },
        [failed.id]: { status: 'pending', attempts: typed(0), next_attempt_at: typed(now), logged: 1 },
        [delivered.id]: { status: 'delivered', attempts: typed(1), next_attempt_at: typed(null), logged: 1 },
        [retrying.id]: { status: 'pending', attempts: typed(1), next_attempt_at: typed(afterNow(60_000)), logged: 1 },
        [atUntil.id]: { status: 'failed', attempts: typed(1), next_attempt_at: typed(null), logged: 1 },
      })
      const theirsBefore = await deliveryStates(store, theirs.id)
      expect(Object.keys(theirsBefore).sort(), "company 2's endpoint: its own event and its test event only").toEqual(
        [otherCompany.id, changeEvent('replay: test event', 2, 'webhook.test', 0, 37).id].sort(),
      )

      const replayed = await store.claimDue(now, afterNow(1_000 + DELIVERY_LEASE_MS), 100)
      expect(
        replayed.map((claim) => `${claim.event.id} → ${claim.endpoint.id}, attempt ${claim.attempt}`).sort(),
        'claimDue at the replay: the two replayed deliveries, each a first attempt',
      ).toEqual([`${missed.id} → ${target.id}, attempt 1`, `${failed.id} → ${target.id}, attempt 1`].sort())
      const claimedMissed = replayed.find((claim) => claim.event.id === missed.id)
      expect(claimedMissed?.event, 'the missed event as claimed, payload byte for byte').toEqual({ id: missed.id, type: missed.type, company_id: 1, payload: missed.payload })

      expect(await store.replay(target.id, period(0, 50, types), afterNow(2_000)), 'the same replay again: nothing left').toEqual({ count: 0, more: false })
      expect(await store.replay(target.id, period(-1_000, 1_000, ['users.created']), afterNow(2_000)), 'replay of users.created').toEqual({ count: 1, more: false })
      expect(await store.replay(theirs.id, period(-1_000, 1_000, ['todos.created', 'users.created']), afterNow(2_000)), "company 2's endpoint, a wide period").toEqual({
        count: 0,
        more: false,
      })
      expect(await deliveryStates(store, theirs.id), "company 2's endpoint after its replay: unchanged").toEqual(theirsBefore)
      expect(await store.replay(endpointId('replay: no such endpoint'), period(-1_000, 1_000, types), afterNow(2_000)), 'replay of an unknown endpoint').toEqual({
        count: 0,
        more: false,
      })
      expect(await store.replay(target.id, period(-1_000, 1_000, []), afterNow(2_000)), 'replay of no types').toEqual({ count: 0, more: false })
    })

    it('replay takes at most limit per call, oldest first, and the same call again continues until more is false', async () => {
      const store = ctx.webhooks()
      const target = endpointRecord('replay batches: target', 1, ['*'])
      const types = ['todos.created', 'todos.updated']
      // Recorded out of time order: replay goes by occurred_at.
      const offsets = [40, 10, 30, 20, 50]
      const events = offsets.map((atMs, n) => changeEvent(`replay batches: ${n}`, 1, types[n % 2] as string, n + 1, atMs))
      await recordEvents(ctx, events)
      await createEndpoints(store, [target])
      const byTime = [...events].sort((a, b) => a.occurred_at.getTime() - b.occurred_at.getTime()).map((event) => event.id)

      const seen: string[][] = []
      const results = []
      let known = new Set<string>()
      for (let call = 0; call < 4; call += 1) {
        results.push(await store.replay(target.id, period(0, 100, types, 2), afterNow(1_000 + call)))
        const ids = (await store.listDeliveries(target.id, { limit: 100 })).deliveries.map((delivery) => delivery.event_id)
        seen.push(ids.filter((id) => !known.has(id)).sort())
        known = new Set(ids)
      }
      expect(results, 'four calls with limit 2').toEqual([
        { count: 2, more: true },
        { count: 2, more: true },
        { count: 1, more: false },
        { count: 0, more: false },
      ])
      expect(seen, 'the events each call sent, oldest first across calls').toEqual([
        byTime.slice(0, 2).sort(),
        byTime.slice(2, 4).sort(),
        byTime.slice(4).sort(),
        [],
      ])
    })

    if (ctx.supports.audit) {
      it('replay records its audit entry with the change, and none when it sends nothing', async () => {
        const store = ctx.webhooks()
        const target = endpointRecord('replay audit: target', 1, ['todos.created'])
        await recordEvents(ctx, [changeEvent('replay audit: missed', 1, 'todos.created', 1, 5)])
        await createEndpoints(store, [target])
        const target_ = { target_type: 'webhook_endpoint', target_id: target.id } as const
        const sent = auditEntry('replay audit: sent', 1, 'webhook_deliveries.replayed', target_, 1_000)
        const nothing = auditEntry('replay audit: nothing', 1, 'webhook_deliveries.replayed', target_, 2_000)
        expect(await store.replay(target.id, period(0, 100, ['todos.created']), afterNow(1_000), sent), 'replay with an entry').toEqual({ count: 1, more: false })
        expect(await store.replay(target.id, period(0, 100, ['todos.created']), afterNow(2_000), nothing), 'replay of nothing with an entry').toEqual({
          count: 0,
          more: false,
        })
        expect((await ctx.audit().list(1, { limit: 100 })).entries, 'list(1): the entry of the replay that sent something').toEqual([sent])
      })
    }
  },
}
