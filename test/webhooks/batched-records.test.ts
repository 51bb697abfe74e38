import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AttemptFinish, WebhookStore } from '../../src/ports/webhook-store.js'
import type { WebhookRequest, WebhookTransport } from '../../src/ports/webhook-transport.js'
import type { CompanyRecord } from '../../src/ports/records.js'
import type { WebhookOptions } from '../../src/options.js'
import { recordingWebhookTransport } from '../../src/webhooks/recording-transport.js'
import { buildWriteApp, FakeClock, WRITE_ADAPTERS, type WriteAdapterFactory, type WriteTestApp } from '../helpers/write-app.js'
import { eventually } from '../helpers/eventually.js'

const SECRET_KEY = randomBytes(32).toString('base64')
const COMPANY: CompanyRecord = { id: 1, name: 'Acme', timezone: 'Europe/Berlin', country: 'DE', created_at: new Date(0), updated_at: new Date(0) }

/** `store` with some methods replaced (undefined removes one); the rest bound to the store itself (its private fields). */
function storeWith(store: WebhookStore, overrides: Partial<Record<keyof WebhookStore, unknown>>): WebhookStore {
  return new Proxy(store, {
    get(target, key) {
      if (key in overrides) return overrides[key as keyof WebhookStore]
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** Sends nothing until `count` requests are waiting, then answers them all 204 in one tick: attempts that end together. */
function answeringTogether(count: number): WebhookTransport & { sent: WebhookRequest[] } {
  const waiting: Array<() => void> = []
  const sent: WebhookRequest[] = []
  return {
    sent,
    async send(request) {
      sent.push(request)
      await new Promise<void>((resolve) => {
        waiting.push(resolve)
        if (waiting.length >= count) for (const release of waiting.splice(0)) release()
      })
      return { status: 204, retryAfter: null, body: '' }
    },
  }
}

// Issue 25: finished attempts are recorded in batches (one `finishAttempts` per loop turn).
describe.each(WRITE_ADAPTERS)('webhook attempts recorded in batches ($name)', (adapter: WriteAdapterFactory) => {
  let t: WriteTestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  async function setup(webhooks: (store: WebhookStore) => WebhookStore, options: Partial<WebhookOptions>) {
    // The clock starts at the real now: the attempts' timestamps are signed.
    const clock = new FakeClock(Date.now())
    const base = await adapter.open()
    const store = base.adapter.webhooks as WebhookStore
    t = await buildWriteApp({
      adapter: { name: adapter.name, open: async () => base },
      dataset: null,
      options: { clock, webhooks: webhooks(store), webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, pollIntervalMs: 20, ...options } },
    })
    const { endpoint } = await t.app.workforceApi.webhooks.create({ companyId: 1, url: 'http://127.0.0.1:9/hooks', events: ['*'] })
    const publish = async (count: number) => {
      const inputs = Array.from({ length: count }, (_, i) => ({ type: 'company.updated' as const, companyId: 1, record: { ...COMPANY, name: `Acme ${i}` } }))
      const app = (t as WriteTestApp).app
      const ports = base.adapter as unknown as { transaction?: (work: (trx: unknown) => Promise<string[]>) => Promise<string[]> }
      return typeof ports.transaction === 'function'
        ? ports.transaction((trx) => app.workforceApi.events.publish(trx, inputs))
        : base.adapter.writes.transaction((tx) => app.workforceApi.events.publish(tx, inputs))
    }
    return { clock, endpoint, publish }
  }

  it('attempts that end together are recorded together: one finishAttempts for the four', async () => {
    const batches: number[] = []
    const transport = answeringTogether(4)
    const { endpoint, publish } = await setup(
      (store) =>
        storeWith(store, {
          finishAttempts: async (finishes: readonly AttemptFinish[]) => {
            batches.push(finishes.length)
            return (store.finishAttempts as NonNullable<WebhookStore['finishAttempts']>).call(store, finishes)
          },
        }),
      { transport },
    )
    await publish(4)
    const page = await eventually(async () => {
      const listed = await t!.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries.length === 4 && listed.deliveries.every((d) => d.status === 'delivered') && listed
    })
    expect(transport.sent).toHaveLength(4)
    expect(batches, 'entries per finishAttempts call').toEqual([4])
    expect(page.deliveries.map((d) => [d.attempts, d.attempts_made.map((a) => [a.number, a.status_code])])).toEqual(Array.from({ length: 4 }, () => [1, [[1, 204]]]))
  })

  it('a batch the store could not record is attempted again once its leases run out, and recorded once', async () => {
    let failures = 0
    const transport = recordingWebhookTransport()
    const { clock, endpoint, publish } = await setup(
      (store) =>
        storeWith(store, {
          finishAttempts: async (finishes: readonly AttemptFinish[]) => {
            // The process "dies" between sending and recording: nothing of the first batch is recorded.
            if (failures++ === 0) throw new Error('connection lost')
            return (store.finishAttempts as NonNullable<WebhookStore['finishAttempts']>).call(store, finishes)
          },
        }),
      { transport, timeoutMs: 1_000, leaseMs: 5_000 },
    )
    const ids = await publish(3)
    await eventually(async () => transport.sent.length === 3)
    // Not before the leases run out: the claims still cover the unrecorded attempts.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(transport.sent).toHaveLength(3)
    const [pending] = (await t!.app.workforceApi.webhooks.deliveries(endpoint.id)).deliveries
    expect(pending && [pending.status, pending.attempts, pending.attempts_made]).toEqual(['pending', 1, []])

    clock.advance(5_000)
    const page = await eventually(async () => {
      const listed = await t!.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries.every((d) => d.status === 'delivered') && listed
    })
    const sentIds = transport.sent.map((sent) => sent.headers['webhook-id'])
    expect(sentIds.slice(0, 3).sort(), 'first attempts').toEqual([...ids].sort())
    expect(sentIds.slice(3).sort(), 'the same events again, same webhook-id').toEqual([...ids].sort())
    // The lost batch left no attempt behind; each delivery records its second attempt once.
    expect(page.deliveries.map((d) => [d.attempts, d.attempts_made.map((a) => a.number)])).toEqual([
      [2, [2]],
      [2, [2]],
      [2, [2]],
    ])
  })

  it('draining a backlog, a place freed under no cap is claimed again within a few ms, not after the 50 ms pause for idle claims', async () => {
    // Caps that never bind but the dispatcher's own (64), which claims 32 at a time. Answers come
    // back in bunches (each at the next multiple of 5 ms, as a busy loop reads them off its
    // sockets): with all 64 places taken, a bunch frees more than one claim of 32 takes, so the
    // claim at the record's wake-up fills its room and leaves the dispatcher under its cap; the
    // answers to that claim then free places under no cap. Before, such a place waited up to
    // 50 ms after the last claim (FREED_CLAIM_INTERVAL_MS), after every batch: a spread backlog on
    // SQLite drained at a third of its speed. Timers and performance.now() are fake, so the
    // milliseconds counted are the dispatcher's own waits.
    const sent: WebhookRequest[] = []
    const transport: WebhookTransport = {
      async send(request) {
        sent.push(request)
        await new Promise((resolve) => setTimeout(resolve, 5 - (performance.now() % 5)))
        return { status: 204, retryAfter: null, body: '' }
      },
    }
    let recorded = 0
    const { endpoint, publish } = await setup(
      (store) =>
        storeWith(store, {
          finishAttempts: async (finishes: readonly AttemptFinish[], wake?: boolean) => {
            const answers = await (store.finishAttempts as NonNullable<WebhookStore['finishAttempts']>).call(store, finishes, wake)
            recorded += answers.filter((answer) => answer !== null).length
            return answers
          },
        }),
      { transport, concurrency: 64, endpointConcurrency: 64, companyConcurrency: 64 },
    )
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    try {
      const backlog = 640
      await publish(backlog)
      let waited = 0
      while (recorded < backlog && waited < 10_000) {
        await vi.advanceTimersByTimeAsync(1)
        waited += 1
      }
      expect(sent).toHaveLength(backlog)
      expect(recorded, 'attempts recorded').toBe(backlog)
      // 640 deliveries claimed 32 at a time, answered in bunches every 5 ms. Waiting up to 50 ms
      // after the last claim before claiming the freed places again took 187 fake ms; claiming
      // them 2 ms after it takes 67.
      expect(waited, 'fake milliseconds until every attempt was recorded').toBeLessThan(120)
    } finally {
      vi.useRealTimers()
    }
    const { deliveries } = await t!.app.workforceApi.webhooks.deliveries(endpoint.id, { limit: 100 })
    expect(deliveries.map((d) => [d.status, d.attempts])).toEqual(deliveries.map(() => ['delivered', 1]))
  })

  it('draining a backlog, places announced to every instance are claimed at the wake-up, not before the other instances hear it', async () => {
    // The dispatcher's own cap (8) binds, so each answer holds the last place under a cap: the
    // record announces it (`finishAttempts(…, true)`), and every instance claims when it hears
    // that. The wake-ups are held back here, so a claim before one is delivered is a claim
    // ahead of the other instances. Fake timers and performance.now(), as above.
    const events: Array<'claim' | 'announce' | 'record'> = []
    let wakeUp: (() => void) | undefined
    const transport: WebhookTransport = {
      async send() {
        await new Promise((resolve) => setTimeout(resolve, 1))
        return { status: 204, retryAfter: null, body: '' }
      },
    }
    let recorded = 0
    const { publish } = await setup(
      (store) =>
        storeWith(store, {
          subscribeDue: async (wake: () => void) => {
            wakeUp = wake
            return async () => {}
          },
          claimDue: async (...args: Parameters<WebhookStore['claimDue']>) => {
            events.push('claim')
            return store.claimDue(...args)
          },
          finishAttempts: async (finishes: readonly AttemptFinish[], wake?: boolean) => {
            events.push(wake === true ? 'announce' : 'record')
            const answers = await (store.finishAttempts as NonNullable<WebhookStore['finishAttempts']>).call(store, finishes, wake)
            recorded += answers.filter((answer) => answer !== null).length
            return answers
          },
        }),
      { transport, concurrency: 8, endpointConcurrency: 8, companyConcurrency: 8, pollIntervalMs: 1_000 },
    )
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    try {
      await publish(16)
      expect(wakeUp, 'the dispatcher subscribed to wake-ups').toBeDefined()
      wakeUp!()
      // Until the first record that announces freed places.
      for (let ms = 0; ms < 200 && !events.includes('announce'); ms += 1) await vi.advanceTimersByTimeAsync(1)
      const announced = events.indexOf('announce')
      expect(announced, 'a record announced the places it freed').toBeGreaterThan(0)
      expect(events.slice(0, announced), 'the claim that filled the places').toContain('claim')
      // Held back for 40 ms: no claim of this dispatcher meanwhile (it would be 2 ms after its
      // last claim if it did not wait for the wake-up; FREED_CLAIM_INTERVAL_MS is 50).
      await vi.advanceTimersByTimeAsync(40)
      expect(events.slice(announced).filter((what) => what === 'claim'), 'claims before the wake-up was heard').toEqual([])
      // Heard: it claims, and the backlog drains.
      wakeUp!()
      for (let ms = 0; ms < 2_000 && recorded < 16; ms += 1) {
        await vi.advanceTimersByTimeAsync(1)
        if (events.at(-1) === 'announce') wakeUp!()
      }
      expect(events.slice(announced)).toContain('claim')
      expect(recorded).toBe(16)
    } finally {
      vi.useRealTimers()
    }
  })

  it('a claim runs beside the record of the attempts before it, and never puts more than the concurrency on the wire', async () => {
    // Only the dispatcher's own cap (4) binds. The first record is held open: the answered
    // attempts it records no longer count against the concurrency, so the next 4 are claimed
    // and sent while it runs. Before, a turn recorded and only then claimed, and the second
    // batch waited for the first record's commit (on Postgres a turn took the sum of both).
    let release: (() => void) | undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    let records = 0
    let onWire = 0
    let mostOnWire = 0
    const sent: WebhookRequest[] = []
    // Answers each 4 together, so each batch is recorded in one turn (two turns of 2 would
    // leave the second waiting behind the held record).
    const waiting: Array<() => void> = []
    const transport: WebhookTransport = {
      async send(request) {
        sent.push(request)
        mostOnWire = Math.max(mostOnWire, ++onWire)
        await new Promise<void>((resolve) => {
          waiting.push(resolve)
          if (waiting.length >= 4) for (const answer of waiting.splice(0)) answer()
        })
        onWire -= 1
        return { status: 204, retryAfter: null, body: '' }
      },
    }
    const { endpoint, publish } = await setup(
      (store) =>
        storeWith(store, {
          // No wake-ups: the freed places are this dispatcher's own, claimed by it at once.
          subscribeDue: undefined,
          finishAttempts: async (finishes: readonly AttemptFinish[], wake?: boolean) => {
            if (records++ === 0) await held
            return (store.finishAttempts as NonNullable<WebhookStore['finishAttempts']>).call(store, finishes, wake)
          },
        }),
      { transport, concurrency: 4, endpointConcurrency: 64, companyConcurrency: 64 },
    )
    await publish(8)
    try {
      await eventually(async () => sent.length === 8)
      expect(records, 'finishAttempts calls begun').toBe(1)
      const pending = await t!.app.workforceApi.webhooks.deliveries(endpoint.id)
      expect(pending.deliveries.filter((d) => d.status === 'delivered'), 'recorded while the first record is held').toEqual([])
    } finally {
      release?.()
    }
    const page = await eventually(async () => {
      const listed = await t!.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries.length === 8 && listed.deliveries.every((d) => d.status === 'delivered') && listed
    })
    expect(sent).toHaveLength(8)
    expect(mostOnWire, 'attempts awaiting their answer at once').toBeLessThanOrEqual(4)
    expect(page.deliveries.map((d) => [d.attempts, d.attempts_made.map((a) => a.number)])).toEqual(Array.from({ length: 8 }, () => [1, [1]]))
  })

  it('a store without finishAttempts records each attempt with finishAttempt', async () => {
    const single: number[] = []
    const transport = answeringTogether(3)
    const { endpoint, publish } = await setup(
      (store) =>
        storeWith(store, {
          finishAttempts: undefined,
          finishAttempt: (...args: Parameters<WebhookStore['finishAttempt']>) => {
            single.push(args[0].delivery_id)
            return store.finishAttempt(...args)
          },
        }),
      { transport },
    )
    await publish(3)
    const page = await eventually(async () => {
      const listed = await t!.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries.length === 3 && listed.deliveries.every((d) => d.status === 'delivered') && listed
    })
    expect(single).toHaveLength(3)
    expect(page.deliveries.map((d) => d.attempts_made.length)).toEqual([1, 1, 1])
  })
})
