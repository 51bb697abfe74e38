import { expect } from '../vitest-api.js'
import { it, notApplicable } from '../harness.js'
import type { ClaimedDelivery, WebhookEndpointRecord, WebhookStore } from '../../ports/webhook-store.js'
import type { ChangeEvent } from '../../ports/write-storage.js'
import type { ConformanceGroup } from '../group.js'
import { DELIVERY_LEASE_MS, attemptRecord, changeEvent, endpointId, endpointRecord, eventId, outcome } from '../webhook-facts.js'
import { afterNow } from '../write-facts.js'
import { createEndpoints, deliveriesOf, deliveryFacts, freshDelivery, recordEvents } from './webhook-outbox.js'
import { typed } from './value-fidelity.js'

/** Claims due at `WRITE_NOW + atMs`, leased for `DELIVERY_LEASE_MS`. */
function claimAt(store: WebhookStore, atMs: number, limit = 100): Promise<ClaimedDelivery[]> {
  return store.claimDue(afterNow(atMs), afterNow(atMs + DELIVERY_LEASE_MS), limit)
}

/** A claim as the suite compares it: which event to which endpoint, and which attempt. */
function claimFacts(claim: ClaimedDelivery): string {
  return `${claim.event.id} → ${claim.endpoint.id}, attempt ${typed(claim.attempt)}`
}

/** The claims' facts, sorted: the port does not order a batch. */
function claimed(claims: readonly ClaimedDelivery[]): string[] {
  return claims.map(claimFacts).sort()
}

/** Which event goes to which endpoint, sorted, where the attempt numbers are beside the point. */
function claimedPairs(claims: readonly ClaimedDelivery[]): string[] {
  return claims.map((claim) => `${claim.event.id} → ${claim.endpoint.id}`).sort()
}

/** The claim of `event` in `claims`; fails the test if there is none. */
function claimOf(claims: readonly ClaimedDelivery[], event: { id: string }, endpoint: { id: string }): ClaimedDelivery {
  const claim = claims.find((candidate) => candidate.event.id === event.id && candidate.endpoint.id === endpoint.id)
  if (claim === undefined) throw new Error(`expected a claim of ${event.id} to ${endpoint.id} among: ${claimed(claims).join('; ') || 'none'}`)
  return claim
}

/**
 * `WebhookStore` deliveries (src/ports/webhook-store.ts): due deliveries are claimed by one
 * dispatcher at a time under a lease, attempts move them on, disabling an endpoint fails its
 * pending ones, and the history pages, redelivers, recovers, purges and deletes as the port says.
 */
export const webhookDeliveries: ConformanceGroup = {
  title: 'webhook deliveries',
  requires: ['writes', 'webhooks'],
  define(ctx) {
    /** The store with one endpoint of company 1, as `endpointRecord(label, 1, events)` makes it, created. */
    const storeWithEndpoint = async (label: string, events: string[]) => {
      const store = ctx.webhooks()
      const endpoint = endpointRecord(label, 1, events)
      await store.createEndpoint(endpoint)
      return { store, endpoint }
    }

    it('claimDue hands a due delivery out once, with its event and endpoint; not before it is due, nor while its endpoint is disabled', async () => {
      const store = ctx.webhooks()
      const live = endpointRecord('claim: live', 1, ['*'])
      const paused = endpointRecord('claim: paused', 1, ['todos.updated'])
      await createEndpoints(store, [live, paused])
      const event = changeEvent('claim: event', 1, 'todos.updated', ctx.edges.unicodeTodo, 1_000)
      await recordEvents(ctx, [event])
      expect(await store.disableEndpoint(paused.id, 'manual', afterNow(500)), 'disableEndpoint(paused)').toBe(true)
      expect(await store.redeliver(paused.id, event.id, afterNow(500)), 'redeliver to the disabled endpoint').toBe(true)

      expect(claimed(await claimAt(store, 999)), 'claimDue 1 ms before the delivery is due').toEqual([])
      const claims = await claimAt(store, 1_000)
      expect(claimed(claims), 'claimDue when it is due').toEqual([`${event.id} → ${live.id}, attempt number 1`])
      const [claim] = claims as [ClaimedDelivery]
      expect(claim.event, 'the claimed event').toEqual({ id: event.id, type: event.type, company_id: 1, payload: event.payload })
      expect(claim.event.payload, 'the claimed payload, byte for byte').toBe(event.payload)
      expect(claim.endpoint, 'the claimed endpoint').toEqual(await store.getEndpoint(live.id))
      expect([typeof claim.delivery_id, typeof claim.lease, claim.lease.length > 0], 'delivery_id and lease').toEqual(['number', 'string', true])
      expect(claimed(await claimAt(store, 1_001)), 'claimDue again while the claim is live').toEqual([])
      const [leased] = (await store.listDeliveries(live.id, { limit: 10 })).deliveries
      expect(
        leased && { status: leased.status, attempts: typed(leased.attempts), next_attempt_at: typed(leased.next_attempt_at), attempts_made: leased.attempts_made },
        'the claimed delivery: one attempt started, due again when the lease ends',
      ).toEqual({ status: 'pending', attempts: typed(1), next_attempt_at: typed(afterNow(1_000 + DELIVERY_LEASE_MS)), attempts_made: [] })

      expect(await store.enableEndpoint(paused.id, afterNow(2_000)), 'enableEndpoint(paused)').toBe(true)
      expect(claimed(await claimAt(store, 2_000)), 'claimDue once the endpoint is enabled again').toEqual([`${event.id} → ${paused.id}, attempt number 1`])
      expect(await store.claimDue(afterNow(1_000_000), afterNow(2_000_000), 0), 'claimDue with limit 0').toEqual([])
    })

    it('claimDue takes the oldest due first, up to the limit', async () => {
      const { store, endpoint } = await storeWithEndpoint('order: *', ['*'])
      const [late, early, middle] = [3_000, 1_000, 2_000].map((atMs) => changeEvent(`order: due at ${atMs}`, 1, 'todos.created', atMs, atMs)) as [
        ReturnType<typeof changeEvent>,
        ReturnType<typeof changeEvent>,
        ReturnType<typeof changeEvent>,
      ]
      await recordEvents(ctx, [late, early, middle])
      expect(claimed(await claimAt(store, 5_000, 2)), 'claimDue(limit 2) of three due deliveries').toEqual(
        [`${early.id} → ${endpoint.id}, attempt number 1`, `${middle.id} → ${endpoint.id}, attempt number 1`].sort(),
      )
      expect(claimed(await claimAt(store, 5_000, 2)), 'claimDue(limit 2) again').toEqual([`${late.id} → ${endpoint.id}, attempt number 1`])
    })

    it('a claim whose lease ran out is due again under a new lease, and the stale claim can no longer finish', async () => {
      const { store, endpoint } = await storeWithEndpoint('lease: *', ['*'])
      const event = changeEvent('lease: event', 1, 'users.created', 3)
      await recordEvents(ctx, [event])
      const [stale] = (await claimAt(store, 0)) as [ClaimedDelivery]
      expect(claimed(await claimAt(store, DELIVERY_LEASE_MS - 1)), 'claimDue 1 ms before the lease ends').toEqual([])
      const again = await claimAt(store, DELIVERY_LEASE_MS)
      expect(claimed(again), 'claimDue when the lease ends').toEqual([`${event.id} → ${endpoint.id}, attempt number 2`])
      const [fresh] = again as [ClaimedDelivery]
      expect(fresh.lease, 'the new claim has a lease of its own').not.toBe(stale.lease)
      expect(fresh.delivery_id, 'the same delivery').toBe(stale.delivery_id)

      const late = attemptRecord(1, 100, 200)
      expect(await store.finishAttempt(stale, outcome.delivered(late), afterNow(DELIVERY_LEASE_MS + 1)), 'finishAttempt of the stale claim').toBeNull()
      const [untouched] = (await store.listDeliveries(endpoint.id, { limit: 10 })).deliveries
      expect(untouched && { status: untouched.status, attempts: untouched.attempts, attempts_made: untouched.attempts_made }, 'the delivery after the refused finish').toEqual({
        status: 'pending',
        attempts: 2,
        attempts_made: [],
      })
      const attempt = attemptRecord(2, DELIVERY_LEASE_MS + 50, 204)
      expect(await store.finishAttempt(fresh, outcome.delivered(attempt), afterNow(DELIVERY_LEASE_MS + 100)), 'finishAttempt of the live claim').not.toBeNull()
      expect(await store.finishAttempt(fresh, outcome.delivered(attempt), afterNow(DELIVERY_LEASE_MS + 101)), 'finishAttempt of the same claim again').toBeNull()
      expect((await deliveriesOf(store, { endpoint })).endpoint, 'the delivered delivery').toEqual([
        {
          ...freshDelivery(endpoint, event),
          status: 'delivered',
          attempts: typed(2),
          next_attempt_at: typed(null),
          updated_at: typed(afterNow(DELIVERY_LEASE_MS + 100)),
          attempts_made: [attempt],
        },
      ])
    })

    it('finishAttempt moves a delivery to a retry, to failed or to delivered, records the attempt, and tracks the endpoint\'s failing_since', async () => {
      const { store, endpoint } = await storeWithEndpoint('finish: *', ['*'])
      const retried = changeEvent('finish: retried', 1, 'todos.created', 1)
      const abandoned = changeEvent('finish: abandoned', 1, 'todos.created', 2)
      await recordEvents(ctx, [retried, abandoned])
      const claims = await claimAt(store, 0)
      const failingSince = async () => (await store.getEndpoint(endpoint.id))?.failing_since ?? null

      const serverError = attemptRecord(1, 10, 500)
      expect(await store.finishAttempt(claimOf(claims, retried, endpoint), outcome.retryAt(serverError, 60_000), afterNow(100)), 'finish: 500, retry in a minute').not.toBeNull()
      expect(typed(await failingSince()), 'failing_since after the first failure').toBe(typed(afterNow(100)))
      const timeout = attemptRecord(1, 20, null, 'timeout after 15000 ms')
      expect(await store.finishAttempt(claimOf(claims, abandoned, endpoint), outcome.failed(timeout), afterNow(200)), 'finish: timeout, failed for good').not.toBeNull()
      expect(typed(await failingSince()), 'failing_since after a second failure: still the first').toBe(typed(afterNow(100)))
      expect((await deliveriesOf(store, { endpoint })).endpoint, 'the deliveries after the failures, newest first').toEqual([
        { ...freshDelivery(endpoint, abandoned), status: 'failed', attempts: typed(1), next_attempt_at: typed(null), updated_at: typed(afterNow(200)), attempts_made: [timeout] },
        {
          ...freshDelivery(endpoint, retried),
          attempts: typed(1),
          next_attempt_at: typed(afterNow(60_000)),
          updated_at: typed(afterNow(100)),
          attempts_made: [serverError],
        },
      ])

      expect(claimed(await claimAt(store, 59_999)), 'claimDue 1 ms before the retry is due').toEqual([])
      const [retry] = (await claimAt(store, 60_000)) as [ClaimedDelivery]
      expect(retry && claimFacts(retry), 'claimDue when the retry is due').toBe(`${retried.id} → ${endpoint.id}, attempt number 2`)
      const success = attemptRecord(2, 60_010, 200)
      expect(await store.finishAttempt(retry, outcome.delivered(success), afterNow(60_100)), 'finish: 200, delivered').not.toBeNull()
      expect(await failingSince(), 'failing_since after a success').toBeNull()
      const [, first] = (await store.listDeliveries(endpoint.id, { limit: 10 })).deliveries
      expect(first && deliveryFacts(first), 'the retried delivery, with both attempts oldest first').toEqual({
        ...freshDelivery(endpoint, retried),
        status: 'delivered',
        attempts: typed(2),
        next_attempt_at: typed(null),
        updated_at: typed(afterNow(60_100)),
        attempts_made: [serverError, success],
      })
    })

    it('finishAttempts records a batch as finishAttempt would one by one: each attempt and next state, the health in order, null for a lost or repeated claim only', async () => {
      const store = ctx.webhooks()
      if (store.finishAttempts === undefined) notApplicable('the store has no finishAttempts (optional: the dispatcher calls finishAttempt once per attempt)')
      const [a, b, c] = ['batch: a', 'batch: b', 'batch: c'].map((label) => endpointRecord(label, 1, ['*'])) as [WebhookEndpointRecord, WebhookEndpointRecord, WebhookEndpointRecord]
      await createEndpoints(store, [a, b, c])
      const [e1, e2, e3] = [1, 2, 3].map((n) => changeEvent(`batch: ${n}`, 1, 'todos.created', n, n)) as [ChangeEvent, ChangeEvent, ChangeEvent]
      await recordEvents(ctx, [e1, e2, e3])
      const claims = await claimAt(store, 10)
      const breaker = { threshold: 2, pauseMs: 10_000, maxPauseMs: 25_000 }
      // c is failing before the batch: one failure recorded alone.
      const earlier = attemptRecord(1, 40, 500)
      expect(await store.finishAttempt(claimOf(claims, e3, c), { ...outcome.retryAt(earlier, 60_000), breaker }, afterNow(50)), 'finishAttempt(c, e3): a failure').not.toBeNull()

      const fail = (event: ChangeEvent, endpoint: WebhookEndpointRecord, atMs: number) => {
        const claim = claimOf(claims, event, endpoint)
        return { claim, outcome: { ...outcome.retryAt(attemptRecord(1, atMs - 5, 500), 60_000), breaker }, now: afterNow(atMs) }
      }
      const succeed = (event: ChangeEvent, endpoint: WebhookEndpointRecord, atMs: number) => {
        const claim = claimOf(claims, event, endpoint)
        return { claim, outcome: { ...outcome.delivered(attemptRecord(1, atMs - 5, 204)), breaker }, now: afterNow(atMs) }
      }
      const bSuccess = succeed(e1, b, 110)
      const answers = await store.finishAttempts([
        fail(e1, a, 100),
        bSuccess,
        fail(e2, a, 120),
        succeed(e1, c, 130),
        fail(e2, c, 140),
        { ...bSuccess, now: afterNow(150) },
        { ...succeed(e2, b, 160), claim: { ...claimOf(claims, e2, b), lease: 'not-this-claims-lease' } },
      ])
      const health = (value: { consecutive_failures: number; paused_until: Date | null; pause_ms: number; failing_since: Date | null }) =>
        [value.consecutive_failures, value.paused_until, value.pause_ms, value.failing_since].map(typed)
      expect(
        answers.map((answer) => answer && { opened: answer.opened, closed: answer.closed, health: health(answer.health) }),
        'the answers, in order: [failures, paused_until, pause_ms, failing_since]',
      ).toEqual([
        { opened: false, closed: false, health: [1, null, 0, afterNow(100)].map(typed) },
        { opened: false, closed: false, health: [0, null, 0, null].map(typed) },
        { opened: true, closed: false, health: [2, afterNow(10_120), 10_000, afterNow(100)].map(typed) },
        { opened: false, closed: true, health: [0, null, 0, null].map(typed) },
        { opened: false, closed: false, health: [1, null, 0, afterNow(140)].map(typed) },
        null,
        null,
      ])
      const stored = async (endpoint: WebhookEndpointRecord) => health((await store.getEndpoint(endpoint.id)) as WebhookEndpointRecord)
      expect([await stored(a), await stored(b), await stored(c)], 'each endpoint\'s health after the batch').toEqual([
        [2, afterNow(10_120), 10_000, afterNow(100)].map(typed),
        [0, null, 0, null].map(typed),
        [1, null, 0, afterNow(140)].map(typed),
      ])
      const byEvent = async (endpoint: WebhookEndpointRecord) =>
        Object.fromEntries(
          (await store.listDeliveries(endpoint.id, { limit: 10 })).deliveries.map((delivery) => [
            delivery.event_id,
            [delivery.status, typed(delivery.next_attempt_at), typed(delivery.updated_at), delivery.attempts_made.map((made) => made.status_code)],
          ]),
        )
      const leased = afterNow(10 + DELIVERY_LEASE_MS)
      expect({ a: await byEvent(a), b: await byEvent(b) }, 'each delivery after the batch: [status, next_attempt_at, updated_at, attempts]').toEqual({
        a: {
          [e1.id]: ['pending', typed(afterNow(60_000)), typed(afterNow(100)), [500]],
          [e2.id]: ['pending', typed(afterNow(60_000)), typed(afterNow(120)), [500]],
          [e3.id]: ['pending', typed(leased), typed(afterNow(10)), []],
        },
        b: {
          [e1.id]: ['delivered', typed(null), typed(afterNow(110)), [204]],
          [e2.id]: ['pending', typed(leased), typed(afterNow(10)), []],
          [e3.id]: ['pending', typed(leased), typed(afterNow(10)), []],
        },
      })
      // The claim the wrong lease stood for is still live, and finishes.
      expect(await store.finishAttempts([succeed(e2, b, 170)]), 'finishAttempts of the live claim of (b, e2)').toMatchObject([{ opened: false, closed: false }])
      expect(await store.finishAttempts([]), 'finishAttempts of nothing').toEqual([])
    })

    it('finishAttempts of successes only: a failing endpoint\'s success closes its streak in the batch, a lost claim answers null, the rest are recorded', async () => {
      const store = ctx.webhooks()
      if (store.finishAttempts === undefined) notApplicable('the store has no finishAttempts (optional: the dispatcher calls finishAttempt once per attempt)')
      const [healthy, failing] = ['successes: healthy', 'successes: failing'].map((label) => endpointRecord(label, 1, ['*'])) as [WebhookEndpointRecord, WebhookEndpointRecord]
      await createEndpoints(store, [healthy, failing])
      const [e1, e2] = [1, 2].map((n) => changeEvent(`successes: ${n}`, 1, 'todos.created', n, n)) as [ChangeEvent, ChangeEvent]
      await recordEvents(ctx, [e1, e2])
      const claims = await claimAt(store, 10)
      // The failing endpoint has one failure on record before the batch.
      expect(await store.finishAttempt(claimOf(claims, e2, failing), outcome.retryAt(attemptRecord(1, 40, 500), 60_000), afterNow(50)), 'a failure first').not.toBeNull()
      const succeed = (claim: ClaimedDelivery, atMs: number) => ({ claim, outcome: outcome.delivered(attemptRecord(1, atMs - 5, 204)), now: afterNow(atMs) })
      // Each kind alone, and then together: a batch of successes answers as if each were recorded in turn.
      const lost = { ...claimOf(claims, e2, healthy), lease: 'not-this-claims-lease' }
      expect(await store.finishAttempts([succeed(claimOf(claims, e1, healthy), 100), succeed(lost, 110)]), 'a success and a lost claim').toMatchObject([
        { opened: false, closed: false },
        null,
      ])
      expect(await store.finishAttempts([succeed(claimOf(claims, e2, healthy), 120), succeed(claimOf(claims, e1, failing), 130)]), 'a success on each endpoint').toMatchObject([
        { opened: false, closed: false },
        { opened: false, closed: true },
      ])
      const health = (endpoint: WebhookEndpointRecord | null) => endpoint && [endpoint.consecutive_failures, typed(endpoint.failing_since)]
      expect(health(await store.getEndpoint(failing.id)), 'the failing endpoint after its success: [failures, failing_since]').toEqual([0, typed(null)])
      const states = async (endpoint: WebhookEndpointRecord) =>
        (await store.listDeliveries(endpoint.id, { limit: 10 })).deliveries.map((delivery) => [delivery.event_id, delivery.status, delivery.attempts_made.map((made) => made.status_code)])
      expect(await states(healthy), 'the healthy endpoint\'s deliveries: each recorded once').toEqual([
        [e2.id, 'delivered', [204]],
        [e1.id, 'delivered', [204]],
      ])
      expect(await states(failing), 'the failing endpoint\'s deliveries').toEqual([
        [e2.id, 'pending', [500]],
        [e1.id, 'delivered', [204]],
      ])
    })

    it('disableEndpoint fails its pending deliveries in the same step, and only the first of two disables succeeds', async () => {
      const store = ctx.webhooks()
      const failing = endpointRecord('disable: failing', 1, ['*'])
      const healthy = endpointRecord('disable: healthy', 1, ['*'])
      await createEndpoints(store, [failing, healthy])
      const done = changeEvent('disable: delivered first', 1, 'todos.created', 1)
      const cut = changeEvent('disable: cut off', 1, 'todos.created', 2)
      await recordEvents(ctx, [done, cut])
      const claims = await claimAt(store, 0)
      expect(claimedPairs(claims), 'claimDue: both events to both endpoints').toEqual(
        [`${done.id} → ${failing.id}`, `${done.id} → ${healthy.id}`, `${cut.id} → ${failing.id}`, `${cut.id} → ${healthy.id}`].sort(),
      )
      expect(await store.finishAttempt(claimOf(claims, done, failing), outcome.delivered(attemptRecord(1, 5, 200)), afterNow(10)), 'finish: delivered').not.toBeNull()
      expect(await store.finishAttempt(claimOf(claims, cut, failing), outcome.retryAt(attemptRecord(1, 15, 500), 50_000), afterNow(20)), 'finish: retry').not.toBeNull()
      expect(await store.finishAttempt(claimOf(claims, cut, healthy), outcome.retryAt(attemptRecord(1, 15, 503), 1_000), afterNow(20)), 'finish on the other endpoint: retry').not.toBeNull()
      const held = claimOf(await claimAt(store, 50_000), cut, failing)
      expect(claimFacts(held), 'a claim held while the endpoint is disabled').toBe(`${cut.id} → ${failing.id}, attempt number 2`)

      expect(
        [await store.disableEndpoint(failing.id, 'failing', afterNow(50_001)), await store.disableEndpoint(failing.id, 'manual', afterNow(50_002))],
        'disableEndpoint twice',
      ).toEqual([true, false])
      expect(await store.getEndpoint(failing.id), 'the disabled endpoint: failing since its first failure').toEqual({
        ...failing,
        status: 'disabled',
        disabled_reason: 'failing',
        failing_since: afterNow(20),
        consecutive_failures: 1,
        updated_at: afterNow(50_001),
      })
      expect(await store.finishAttempt(held, outcome.delivered(attemptRecord(2, 50_000, 200)), afterNow(50_003)), 'finish of the claim the disable cut off').toBeNull()
      const seen = await deliveriesOf(store, { failing, healthy })
      const statusOf = (deliveries: unknown[] | undefined) => (deliveries ?? []).map((delivery) => {
        const { status, next_attempt_at } = delivery as { status: string; next_attempt_at: string }
        return `${status}, next ${next_attempt_at}`
      })
      expect({ failing: statusOf(seen.failing), healthy: statusOf(seen.healthy).map((line) => line.split(',')[0]) }, 'each delivery, newest first').toEqual({
        failing: ['failed, next null', 'delivered, next null'],
        healthy: ['pending', 'pending'],
      })
      expect(claimedPairs(await claimAt(store, 1_000_000)), 'claimDue after the disable: the other endpoint only').toEqual(
        [`${done.id} → ${healthy.id}`, `${cut.id} → ${healthy.id}`].sort(),
      )

      expect(await store.enableEndpoint(failing.id, afterNow(60_000)), 'enableEndpoint').toBe(true)
      expect(await store.getEndpoint(failing.id), 'the enabled endpoint: healthy again').toEqual({ ...failing, updated_at: afterNow(60_000) })
      expect(claimedPairs(await claimAt(store, 2_000_000)), 'claimDue after enabling: the failed delivery stays failed').toEqual(
        [`${done.id} → ${healthy.id}`, `${cut.id} → ${healthy.id}`].sort(),
      )
    })

    it('listDeliveries pages newest first from a cursor, each delivery with its attempts oldest first', async () => {
      const store = ctx.webhooks()
      const endpoint = endpointRecord('paging: *', 1, ['*'])
      const other = endpointRecord('paging: other', 1, ['users.created'])
      await createEndpoints(store, [endpoint, other])
      const events = [1, 2, 3, 4, 5].map((n) => changeEvent(`paging: ${n}`, 1, 'todos.updated', n, n))
      await recordEvents(ctx, events)
      const [newestClaim] = (await claimAt(store, 5, 100)).filter((claim) => claim.event.id === events[4]?.id)
      const retry = attemptRecord(1, 6, 429)
      expect(await store.finishAttempt(newestClaim as ClaimedDelivery, outcome.retryAt(retry, 10), afterNow(7)), 'finish: retry').not.toBeNull()
      // The other four were claimed by the same call; their leases stay live.
      const [second] = (await claimAt(store, 10)) as [ClaimedDelivery]
      const delivered = attemptRecord(2, 11, 200)
      expect(await store.finishAttempt(second, outcome.delivered(delivered), afterNow(12)), 'finish: delivered').not.toBeNull()

      const pages: Array<{ events: string[]; has_more: boolean }> = []
      let before: number | undefined
      for (let page = 0; page < 4; page++) {
        const result = await store.listDeliveries(endpoint.id, before === undefined ? { limit: 2 } : { limit: 2, before })
        pages.push({ events: result.deliveries.map((delivery) => delivery.event_id), has_more: result.has_more })
        const ids = result.deliveries.map((delivery) => delivery.id)
        expect([...ids].sort((a, b) => b - a), `page ${page + 1}: ids descending`).toEqual(ids)
        if (before !== undefined) expect(ids.every((id) => id < (before as number)), `page ${page + 1}: every id before ${before}`).toBe(true)
        if (!result.has_more) break
        before = ids[ids.length - 1]
      }
      const [e1, e2, e3, e4, e5] = events.map((event) => event.id) as [string, string, string, string, string]
      expect(pages, 'pages of 2, following has_more with the last id as before').toEqual([
        { events: [e5, e4], has_more: true },
        { events: [e3, e2], has_more: true },
        { events: [e1], has_more: false },
      ])
      const [newest] = (await store.listDeliveries(endpoint.id, { limit: 1 })).deliveries
      expect(newest?.attempts_made, 'the newest delivery\'s attempts, oldest first').toEqual([retry, delivered])
      const whole = await store.listDeliveries(endpoint.id, { limit: 5 })
      expect([whole.deliveries.length, whole.has_more], 'listDeliveries(limit 5) of 5 deliveries').toEqual([5, false])
      expect(await store.listDeliveries(other.id, { limit: 5 }), 'listDeliveries of an endpoint without deliveries').toEqual({ deliveries: [], has_more: false })
      expect(await store.listDeliveries(endpointId('paging: unknown'), { limit: 5 }), 'listDeliveries of an unknown endpoint').toEqual({
        deliveries: [],
        has_more: false,
      })
    })

    it('redeliver makes an event\'s delivery due now with a fresh count, keeping its history, or creates it; recover does so for failed deliveries since an instant', async () => {
      const { store, endpoint } = await storeWithEndpoint('redeliver: todos.created', ['todos.created'])
      const sent = changeEvent('redeliver: sent', 1, 'todos.created', 1)
      const unsubscribed = changeEvent('redeliver: unsubscribed', 1, 'users.created', 2)
      await recordEvents(ctx, [sent, unsubscribed])
      const [claim] = (await claimAt(store, 0)) as [ClaimedDelivery]
      const gone = attemptRecord(1, 1, 502)
      expect(await store.finishAttempt(claim, outcome.failed(gone), afterNow(2)), 'finish: failed').not.toBeNull()

      expect(await store.redeliver(endpoint.id, sent.id, afterNow(5_000)), 'redeliver the failed delivery').toBe(true)
      expect(await store.redeliver(endpoint.id, unsubscribed.id, afterNow(6_000)), 'redeliver an event the endpoint was not subscribed to').toBe(true)
      expect(await store.redeliver(endpoint.id, eventId('redeliver: unknown'), afterNow(6_000)), 'redeliver an unknown event').toBe(false)
      expect(await store.redeliver(endpointId('redeliver: unknown'), sent.id, afterNow(6_000)), 'redeliver to an unknown endpoint').toBe(false)
      expect((await deliveriesOf(store, { endpoint })).endpoint, 'the deliveries after the redeliveries').toEqual([
        {
          ...freshDelivery(endpoint, unsubscribed),
          next_attempt_at: typed(afterNow(6_000)),
          created_at: typed(afterNow(6_000)),
          updated_at: typed(afterNow(6_000)),
        },
        { ...freshDelivery(endpoint, sent), next_attempt_at: typed(afterNow(5_000)), updated_at: typed(afterNow(5_000)), attempts_made: [gone] },
      ])
      expect(claimed(await claimAt(store, 6_000)), 'claimDue after the redeliveries: each starts over at attempt 1').toEqual(
        [`${sent.id} → ${endpoint.id}, attempt number 1`, `${unsubscribed.id} → ${endpoint.id}, attempt number 1`].sort(),
      )

      const recovering = endpointRecord('recover: *', 2, ['*'])
      await store.createEndpoint(recovering)
      const [before, since, after, fine] = [0, 1_000, 2_000, 3_000].map((atMs) => changeEvent(`recover: at ${atMs}`, 2, 'shifts.updated', atMs, atMs)) as [
        ReturnType<typeof changeEvent>,
        ReturnType<typeof changeEvent>,
        ReturnType<typeof changeEvent>,
        ReturnType<typeof changeEvent>,
      ]
      await recordEvents(ctx, [before, since, after, fine])
      const claims = (await claimAt(store, 10_000)).filter((candidate) => candidate.endpoint.id === recovering.id)
      for (const event of [before, since, after]) {
        expect(await store.finishAttempt(claimOf(claims, event, recovering), outcome.failed(attemptRecord(1, 10_001, 400)), afterNow(10_002)), `finish ${event.id}: failed`).not.toBeNull()
      }
      expect(await store.finishAttempt(claimOf(claims, fine, recovering), outcome.delivered(attemptRecord(1, 10_001, 200)), afterNow(10_002)), 'finish: delivered').not.toBeNull()
      expect(await store.recover(recovering.id, afterNow(1_000), afterNow(20_000)), 'recover since the second event').toBe(2)
      expect(await store.recover(recovering.id, afterNow(1_000), afterNow(20_001)), 'recover again: nothing failed since').toBe(0)
      expect(await store.recover(endpointId('recover: unknown'), afterNow(0), afterNow(20_002)), 'recover of an unknown endpoint').toBe(0)
      const statuses = (await store.listDeliveries(recovering.id, { limit: 10 })).deliveries.map((delivery) => [delivery.event_id, delivery.status, typed(delivery.next_attempt_at)])
      expect(statuses, 'event, status and next_attempt_at of each delivery, newest first').toEqual([
        [fine.id, 'delivered', typed(null)],
        [after.id, 'pending', typed(afterNow(20_000))],
        [since.id, 'pending', typed(afterNow(20_000))],
        [before.id, 'failed', typed(null)],
      ])
      expect(claimed(await claimAt(store, 20_000)), 'claimDue after the recovery: each starts over at attempt 1').toEqual(
        [`${since.id} → ${recovering.id}, attempt number 1`, `${after.id} → ${recovering.id}, attempt number 1`].sort(),
      )
    })

    it('purgeFinished deletes finished deliveries last changed before the cutoff with their attempts, then events no delivery needs, in batches', async () => {
      const { store, endpoint } = await storeWithEndpoint('purge: *', ['*'])
      const events = [0, 1, 2, 3].map((atMs) => changeEvent(`purge: ${atMs}`, 1, 'todos.updated', atMs, atMs))
      const unheard = changeEvent('purge: no endpoint', 2, 'users.created', 9, 4)
      const recent = changeEvent('purge: after the cutoff', 2, 'users.created', 9, 60_000)
      const [delivered, failed, pending, late] = events as [(typeof events)[number], (typeof events)[number], (typeof events)[number], (typeof events)[number]]
      await recordEvents(ctx, [...events, unheard, recent])
      const claims = await claimAt(store, 10)
      expect(await store.finishAttempt(claimOf(claims, delivered, endpoint), outcome.delivered(attemptRecord(1, 10, 200)), afterNow(10)), 'finish: delivered').not.toBeNull()
      expect(await store.finishAttempt(claimOf(claims, failed, endpoint), outcome.failed(attemptRecord(1, 20, 410)), afterNow(20)), 'finish: failed').not.toBeNull()
      expect(await store.finishAttempt(claimOf(claims, pending, endpoint), outcome.retryAt(attemptRecord(1, 30, 500), 90_000), afterNow(30)), 'finish: retry').not.toBeNull()
      expect(await store.finishAttempt(claimOf(claims, late, endpoint), outcome.delivered(attemptRecord(1, 100_000, 200)), afterNow(100_000)), 'finish: delivered after the cutoff').not.toBeNull()

      const cutoff = afterNow(50_000)
      expect(await store.purgeFinished(cutoff, 0), 'purgeFinished(limit 0)').toBe(0)
      const batches: number[] = []
      for (let batch = 0; batch < 10; batch++) {
        const deleted = await store.purgeFinished(cutoff, 2)
        batches.push(deleted)
        if (deleted === 0) break
      }
      expect(batches.every((deleted) => deleted <= 2), `purgeFinished(cutoff, 2) returned ${batches.join(', ')}: at most 2 each`).toBe(true)
      expect(batches.reduce((sum, deleted) => sum + deleted, 0), 'deleted in all: 2 deliveries, and the 3 events left without one').toBe(5)
      expect(batches[batches.length - 1], 'the last batch: nothing left').toBe(0)

      const left = (await store.listDeliveries(endpoint.id, { limit: 10 })).deliveries
      expect(
        left.map((delivery) => [delivery.event_id, delivery.status, delivery.attempts_made.length]),
        'deliveries left: the pending one and the one finished after the cutoff, with their attempts',
      ).toEqual([
        [late.id, 'delivered', 1],
        [pending.id, 'pending', 1],
      ])
      // Which events are left, through the port: a purged event can no longer be redelivered.
      const company2 = endpointRecord('purge: company 2', 2, ['*'])
      await store.createEndpoint(company2)
      const redeliverable = {
        delivered: await store.redeliver(endpoint.id, delivered.id, afterNow(60_000)),
        failed: await store.redeliver(endpoint.id, failed.id, afterNow(60_000)),
        pending: await store.redeliver(endpoint.id, pending.id, afterNow(60_000)),
        late: await store.redeliver(endpoint.id, late.id, afterNow(60_000)),
        'no endpoint': await store.redeliver(company2.id, unheard.id, afterNow(60_000)),
        'after the cutoff': await store.redeliver(company2.id, recent.id, afterNow(60_000)),
      }
      expect(redeliverable, 'redeliver of each event after the purge: false once purged').toEqual({
        delivered: false,
        failed: false,
        pending: true,
        late: true,
        'no endpoint': false,
        'after the cutoff': true,
      })
    })

    it('deleteEndpoint deletes the endpoint with its deliveries and attempts, and no other endpoint\'s', async () => {
      const store = ctx.webhooks()
      const doomed = endpointRecord('delete: doomed', 1, ['*'])
      const kept = endpointRecord('delete: kept', 1, ['*'])
      await createEndpoints(store, [doomed, kept])
      const event = changeEvent('delete: event', 1, 'todos.created', 1)
      await recordEvents(ctx, [event])
      const claims = await claimAt(store, 0)
      const doomedClaim = claimOf(claims, event, doomed)
      expect(await store.finishAttempt(doomedClaim, outcome.retryAt(attemptRecord(1, 1, 500), 1_000), afterNow(2)), 'finish: retry').not.toBeNull()
      const [again] = (await claimAt(store, 1_000)).filter((claim) => claim.endpoint.id === doomed.id) as [ClaimedDelivery]

      expect([await store.deleteEndpoint(doomed.id), await store.deleteEndpoint(doomed.id)], 'deleteEndpoint twice').toEqual([true, false])
      expect(await store.getEndpoint(doomed.id), 'getEndpoint of the deleted endpoint').toBeNull()
      expect(await store.listEndpoints(1), 'listEndpoints(1)').toEqual([kept])
      expect(await store.listDeliveries(doomed.id, { limit: 10 }), 'listDeliveries of the deleted endpoint').toEqual({ deliveries: [], has_more: false })
      expect(await store.finishAttempt(again, outcome.delivered(attemptRecord(2, 1_001, 200)), afterNow(1_002)), 'finish of a claim on the deleted endpoint').toBeNull()
      expect(await store.redeliver(doomed.id, event.id, afterNow(2_000)), 'redeliver to the deleted endpoint').toBe(false)
      expect((await store.listDeliveries(kept.id, { limit: 10 })).deliveries.map((delivery) => delivery.event_id), "the other endpoint's delivery").toEqual([event.id])
      expect(claimed(await claimAt(store, 1_000_000)), 'claimDue after the delete').toEqual([`${event.id} → ${kept.id}, attempt number 2`])
    })

    it('of 10 concurrent claimDue calls, each due delivery goes to exactly one', async () => {
      const { store, endpoint } = await storeWithEndpoint('race: *', ['*'])
      const events = Array.from({ length: 24 }, (_, n) => changeEvent(`race: ${n}`, 1, 'todos.created', n, n))
      await recordEvents(ctx, events)
      const batches = await Promise.all(Array.from({ length: 10 }, () => claimAt(store, 100, 3)))
      const rest = await claimAt(store, 100, 100)
      const ids = [...batches.flat(), ...rest].map((claim) => claim.event.id)
      expect(batches.every((batch) => batch.length <= 3), 'no batch exceeds its limit').toBe(true)
      expect([...ids].sort(), 'every event claimed, each exactly once').toEqual(events.map((event) => event.id).sort())
      expect(new Set([...batches.flat(), ...rest].map((claim) => claim.delivery_id)).size, 'distinct deliveries claimed').toBe(events.length)
    })

    it('claimDue shares a batch round-robin: every company, then every endpoint, before any second pick, whatever is older', async () => {
      const store = ctx.webhooks()
      const [a1, a2, b1] = [endpointRecord('fair: a1', 1, ['*']), endpointRecord('fair: a2', 1, ['*']), endpointRecord('fair: b1', 2, ['*'])]
      await createEndpoints(store, [a1, a2, b1])
      // Company 1's events are all older than company 2's: oldest-first would hand company 1 everything.
      const older = Array.from({ length: 6 }, (_, n) => changeEvent(`fair: company 1 #${n}`, 1, 'todos.created', n, n))
      const newer = Array.from({ length: 6 }, (_, n) => changeEvent(`fair: company 2 #${n}`, 2, 'todos.created', n, 100 + n))
      await recordEvents(ctx, [...older, ...newer])
      const policy = { endpointLimit: 2, companyLimit: 3, troubledCompanyLimit: 1, slowBefore: afterNow(-1_000_000) }
      const claim = (limit: number) => store.claimDue(afterNow(1_000), afterNow(1_000 + DELIVERY_LEASE_MS), limit, policy)
      const endpointsOf = (claims: readonly ClaimedDelivery[]) => claims.map((one) => one.endpoint.id).sort()

      const first = await claim(3)
      expect(endpointsOf(first), 'claimDue(limit 3): one per company, then the other endpoint of company 1').toEqual([a1.id, a2.id, b1.id].sort())
      expect(first.every((one) => [older[0]?.id, newer[0]?.id].includes(one.event.id)), 'each endpoint gets its oldest due first').toBe(true)
      const second = await claim(100)
      const perEndpoint = (claims: readonly ClaimedDelivery[]) =>
        Object.fromEntries([a1, a2, b1].map((endpoint) => [endpoint.id, claims.filter((one) => one.endpoint.id === endpoint.id).length]))
      const both = perEndpoint([...first, ...second])
      expect(both[b1.id], 'company 2 in flight: its endpoint up to endpointLimit (2)').toBe(2)
      expect((both[a1.id] ?? 0) + (both[a2.id] ?? 0), 'company 1 in flight: up to companyLimit (3)').toBe(3)
      expect(Math.max(both[a1.id] ?? 0, both[a2.id] ?? 0), 'no endpoint beyond endpointLimit (2)').toBe(2)
      expect(await claim(100), 'claimDue while every limit is reached').toEqual([])

      const done = first.find((one) => one.endpoint.id === b1.id) as ClaimedDelivery
      expect(await store.finishAttempt(done, outcome.delivered(attemptRecord(1, 1_001, 200)), afterNow(1_002)), 'finish one of company 2').not.toBeNull()
      expect(endpointsOf(await claim(100)), 'claimDue once it finished: its endpoint takes one more, nobody else').toEqual([b1.id])
      // A lease that ran out is no longer in flight: its dispatcher died, the claim is due again.
      const later = await store.claimDue(afterNow(1_000 + DELIVERY_LEASE_MS), afterNow(1_000 + 2 * DELIVERY_LEASE_MS), 100, policy)
      expect(perEndpoint(later)[b1.id], 'claimDue after every lease ran out: company 2 up to its limits again').toBe(2)
    })

    it('claimDue gives a troubled endpoint one attempt at a time: after a failure, or while an attempt of it is slow', async () => {
      const { store, endpoint } = await storeWithEndpoint('troubled: *', ['*'])
      await recordEvents(ctx, Array.from({ length: 6 }, (_, n) => changeEvent(`troubled: ${n}`, 1, 'todos.created', n, n)))
      const policy = (slowBeforeMs: number) => ({ endpointLimit: 4, companyLimit: 100, troubledCompanyLimit: 100, slowBefore: afterNow(slowBeforeMs) })
      const claim = (atMs: number, slowBeforeMs: number, limit = 100) => store.claimDue(afterNow(atMs), afterNow(atMs + DELIVERY_LEASE_MS), limit, policy(slowBeforeMs))

      const [first] = (await claim(10, -1_000, 1)) as [ClaimedDelivery]
      expect(await claim(2_000, 1_000), 'claimDue while its attempt claimed at +10 ms is slow (claimed before +1,000 ms)').toEqual([])
      expect(await claim(20, 0), 'claimDue while that attempt is not slow: up to endpointLimit (4) in flight').toHaveLength(3)
      const rest = await claim(30, 0)
      expect(rest, 'claimDue at endpointLimit').toEqual([])
      expect(await store.finishAttempt(first, outcome.retryAt(attemptRecord(1, 40, 500), 1_000_000), afterNow(50)), 'finish: 500').not.toBeNull()
      expect(typed((await store.getEndpoint(endpoint.id))?.consecutive_failures), 'consecutive_failures after a failure').toBe(typed(1))
      expect(await claim(60, 0), 'claimDue after a failure while 3 are in flight: none (one at a time)').toEqual([])
      const later = await store.claimDue(afterNow(DELIVERY_LEASE_MS + 100), afterNow(2 * DELIVERY_LEASE_MS), 100, policy(DELIVERY_LEASE_MS))
      expect(later, 'claimDue once the leases ran out: one attempt of the failing endpoint').toHaveLength(1)
    })

    it('claimDue holds the endpoint limit across concurrent claims', async () => {
      const { store, endpoint } = await storeWithEndpoint('capped race: *', ['*'])
      await recordEvents(ctx, Array.from({ length: 24 }, (_, n) => changeEvent(`capped race: ${n}`, 1, 'todos.created', n, n)))
      const policy = { endpointLimit: 2, companyLimit: 100, troubledCompanyLimit: 100, slowBefore: afterNow(-1_000_000) }
      const batches = await Promise.all(Array.from({ length: 10 }, () => store.claimDue(afterNow(100), afterNow(100 + DELIVERY_LEASE_MS), 5, policy)))
      expect(batches.flat().length, 'deliveries claimed by 10 concurrent claimDue(limit 5) under endpointLimit 2').toBe(2)
    })

    it('finishAttempt opens the breaker after threshold failures in a row; paused deliveries wait unclaimed, then one probe; a success closes it', async () => {
      const { store, endpoint } = await storeWithEndpoint('breaker: *', ['*'])
      const events = Array.from({ length: 5 }, (_, n) => changeEvent(`breaker: ${n}`, 1, 'todos.created', n, n))
      await recordEvents(ctx, events)
      const breaker = { threshold: 2, pauseMs: 10_000, maxPauseMs: 25_000 }
      const fail = (claim: ClaimedDelivery, atMs: number) =>
        store.finishAttempt(claim, { ...outcome.retryAt(attemptRecord(claim.attempt, atMs - 1, 500), 1), breaker }, afterNow(atMs))
      const health = async () => {
        const read = await store.getEndpoint(endpoint.id)
        return [read?.consecutive_failures, read?.paused_until, read?.pause_ms, read?.failing_since].map(typed)
      }
      const claims = await claimAt(store, 10)
      expect(claims, 'claimDue: all five').toHaveLength(5)
      const [c1, c2, c3, c4, c5] = claims as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery, ClaimedDelivery, ClaimedDelivery]

      expect(await fail(c1, 100), 'finish: the first failure').toMatchObject({ opened: false })
      expect(await fail(c2, 200), 'finish: the second failure in a row opens the breaker').toMatchObject({ opened: true })
      expect(await health(), 'health once open: [failures, paused_until, pause_ms, failing_since]').toEqual([2, afterNow(10_200), 10_000, afterNow(100)].map(typed))
      expect(await fail(c3, 300), 'finish: a failure of an attempt claimed before it opened').toMatchObject({ opened: false })
      expect(await health(), 'health after it: the pause unchanged').toEqual([3, afterNow(10_200), 10_000, afterNow(100)].map(typed))
      await fail(c4, 400)
      await fail(c5, 500)
      expect(await claimAt(store, 10_199), 'claimDue while paused: nothing (no attempt counted)').toEqual([])
      const [probe, ...more] = await claimAt(store, 10_200)
      expect(more, 'claimDue once the pause ended: one probe only').toEqual([])
      expect(await claimAt(store, 10_201), 'claimDue while the probe is in flight').toEqual([])
      expect(await fail(probe as ClaimedDelivery, 10_300), 'finish: the probe failed, the breaker re-opens (not a new opening)').toMatchObject({ opened: false })
      expect(await health(), 'health after the failed probe: the pause doubled').toEqual([6, afterNow(30_300), 20_000, afterNow(100)].map(typed))
      expect(await claimAt(store, 30_299), 'claimDue during the longer pause').toEqual([])
      const [second] = (await claimAt(store, 30_300)) as [ClaimedDelivery]
      await fail(second, 30_400)
      expect(await health(), 'health after another failed probe: the pause capped at maxPauseMs').toEqual([7, afterNow(55_400), 25_000, afterNow(100)].map(typed))
      const [third] = (await claimAt(store, 55_400)) as [ClaimedDelivery]
      expect(
        await store.finishAttempt(third, { ...outcome.delivered(attemptRecord(third.attempt, 55_401, 200)), breaker }, afterNow(55_402)),
        'finish: the probe succeeded',
      ).toMatchObject({ opened: false, closed: true })
      expect(await health(), 'health after a success: healthy').toEqual([0, null, 0, null].map(typed))
      expect(await claimAt(store, 55_403), 'claimDue once closed: the four waiting deliveries').toHaveLength(4)

      // Enabling a disabled endpoint starts it healthy.
      const [again] = (await claimAt(store, 55_403 + DELIVERY_LEASE_MS)) as [ClaimedDelivery]
      await fail(again, 55_500 + DELIVERY_LEASE_MS)
      expect(await store.disableEndpoint(endpoint.id, 'failing', afterNow(90_000)), 'disable').toBe(true)
      expect(await store.enableEndpoint(endpoint.id, afterNow(90_001)), 'enable').toBe(true)
      expect(await health(), 'health after enabling').toEqual([0, null, 0, null].map(typed))
    })
  },
}
