import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import type { WebhookOptions } from '../../src/options.js'
import type { EndpointDisabledNotice, EndpointFailingNotice } from '../../src/webhooks/dispatcher.js'
import { SecretBox } from '../../src/webhooks/secret-box.js'
import { generateWebhookSecret, verifyWebhook, WebhookVerificationError } from '../../src/webhooks/signature.js'
import { endpointView, type WebhookEndpoint } from '../../src/webhooks/webhook-manager.js'
import { exclusiveMemberIds, listIds } from '../helpers/seed-facts.js'
import { buildWriteApp, FakeClock, WRITE_ADAPTERS, type WriteAdapterFactory, type WriteTestApp } from '../helpers/write-app.js'
import { startReceiver, type Receiver } from './receiver.js'
import { eventually } from '../helpers/eventually.js'

const SECRET_KEY = randomBytes(32).toString('base64')
const SECOND = 1_000
const DAY = 24 * 60 * 60 * SECOND

const todoBody = (title = 'Inspect crane') => ({ title, list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] })

interface Harness {
  t: WriteTestApp
  clock: FakeClock
  receiver: Receiver
  endpoint: WebhookEndpoint
  secret: string
  key: string
  disabled: EndpointDisabledNotice[]
  failing: EndpointFailingNotice[]
}

// Spec 6: signed deliveries, retries with backoff, auto-disable, payload = GET.
describe.each(WRITE_ADAPTERS)('webhook delivery ($name)', (adapter: WriteAdapterFactory) => {
  let h: Harness | undefined
  afterEach(async () => {
    await h?.t.close()
    await h?.receiver.close()
    h = undefined
  })

  /** An app whose clock starts at the real now (receivers check timestamps), an endpoint for all events, and a receiver. */
  async function setup(options: Partial<WebhookOptions> = {}, events: string[] = ['*'], url?: (receiver: Receiver) => string): Promise<Harness> {
    const receiver = await startReceiver()
    const clock = new FakeClock(Date.now())
    const disabled: EndpointDisabledNotice[] = []
    const failing: EndpointFailingNotice[] = []
    const t = await buildWriteApp({
      adapter,
      options: {
        clock,
        webhookOptions: {
          secretKey: SECRET_KEY,
          allowPrivateDestinations: true,
          pollIntervalMs: 20,
          onEndpointDisabled: (notice) => void disabled.push(notice),
          onEndpointFailing: (notice) => void failing.push(notice),
          ...options,
        },
      },
    })
    let endpoint: WebhookEndpoint
    let secret: string
    if (url === undefined) {
      ;({ endpoint, secret } = await t.app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events }))
    } else {
      // Stored directly, as if its host had resolved to a public address when it was created.
      secret = generateWebhookSecret()
      const id = 'we_' + 'a'.repeat(24)
      const now = new Date(clock.now())
      const record = {
        id, company_id: 1, url: url(receiver), description: null, events, status: 'enabled' as const, disabled_reason: null,
        secret: new SecretBox(SECRET_KEY).seal(secret, id), previous_secret: null, previous_secret_expires_at: null, failing_since: null,
        consecutive_failures: 0, paused_until: null, pause_ms: 0, created_at: now, updated_at: now,
      }
      await t.adapter.webhooks.createEndpoint(record)
      endpoint = endpointView(record)
    }
    h = { t, clock, receiver, endpoint, secret, key: await t.keyFor(1), disabled, failing }
    return h
  }

  /** Waits until the endpoint's newest delivery has `count` attempts recorded (the clock may move only then). */
  async function recorded(count: number) {
    const { t, endpoint } = h as Harness
    return eventually(async () => {
      const [delivery] = (await t.app.workforceApi.webhooks.deliveries(endpoint.id)).deliveries
      return delivery !== undefined && delivery.attempts_made.length === count ? delivery : undefined
    })
  }

  it('delivers a signed todos.created whose data is the to-do exactly as GET returns it', async () => {
    const { t, receiver, secret, key, endpoint } = await setup()
    const created = await t.post('/v1/todos', todoBody(), key)
    expect(created.statusCode).toBe(201)
    const [delivery] = await receiver.waitFor(1)
    const payload = JSON.parse(delivery!.body)
    const get = await t.get(`/v1/todos/${created.json().data.id}`, key)
    expect(payload).toEqual({ id: expect.stringMatching(/^evt_[a-z2-7]{24}$/), type: 'todos.created', created_at: expect.any(String), company_id: 1, data: get.json().data })
    // The same bytes as GET's `data`, not only the same values.
    expect(delivery!.body).toContain(`"data":${JSON.stringify(get.json().data)}`)
    expect(delivery!.headers['webhook-id']).toBe(payload.id)
    expect(delivery!.headers['x-service-signature']).toBe(delivery!.headers['webhook-signature'])
    expect(delivery!.headers['content-type']).toBe('application/json')
    // Both the standard library and ours verify it; a changed byte fails both.
    const headers = delivery!.headers as Record<string, string>
    expect(new Webhook(secret).verify(delivery!.body, headers)).toEqual(payload)
    expect(verifyWebhook(secret, headers, delivery!.body)).toEqual(payload)
    const tampered = delivery!.body.replace('Inspect crane', 'Inspect cranf')
    expect(() => new Webhook(secret).verify(tampered, headers)).toThrow()
    expect(() => verifyWebhook(secret, headers, tampered)).toThrow(WebhookVerificationError)

    const page = await eventually(async () => {
      const listed = await t.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries[0]?.status === 'delivered' ? listed : undefined
    })
    expect(page.deliveries).toHaveLength(1)
    expect(page.deliveries[0]).toMatchObject({ event_id: payload.id, event_type: 'todos.created', attempts: 1, next_attempt_at: null })
    expect(page.deliveries[0]!.attempts_made).toEqual([
      { number: 1, attempted_at: expect.any(Date), status_code: 204, duration_ms: expect.any(Number), response_body: '', error: null, succeeded: true },
    ])
  })

  it('emits users.created, users.updated on acceptance, deactivate and activate, and nothing for a PATCH that changes nothing', async () => {
    const { t, receiver, key } = await setup()
    const user = await t.post('/v1/users', { email: 'new.person@example.com', first_name: 'New', last_name: 'Person' }, key)
    expect(user.statusCode).toBe(201)
    const id = user.json().data.id
    // Every addition is an invitation (issue 21): the login is the company's to change once accepted.
    await t.app.workforceApi.invitations.accept({ companyId: 1, userId: id })
    expect((await t.post(`/v1/users/${id}/deactivate`, undefined, key)).statusCode).toBe(200)
    expect((await t.post(`/v1/users/${id}/activate`, undefined, key)).statusCode).toBe(200)
    const todo = (await t.post('/v1/todos', todoBody(), key)).json().data
    expect((await t.patch(`/v1/todos/${todo.id}`, { title: todo.title }, key)).statusCode).toBe(200)
    expect((await t.patch(`/v1/todos/${todo.id}`, { title: 'Renamed' }, key)).statusCode).toBe(200)
    const got = await receiver.waitFor(6)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(receiver.received).toHaveLength(6)
    const payloads = got.map((entry) => JSON.parse(entry.body))
    expect(payloads.map((p) => p.type).sort()).toEqual(['todos.created', 'todos.updated', 'users.created', 'users.updated', 'users.updated', 'users.updated'])
    expect(payloads.find((p) => p.type === 'users.created').data).toMatchObject({ id, invitation_status: 'pending', active: false })
    const activeStates = payloads.filter((p) => p.type === 'users.updated').map((p) => p.data.active)
    expect(activeStates.sort()).toEqual([false, true, true])
    expect(payloads.find((p) => p.type === 'todos.updated').data.title).toBe('Renamed')
  })

  it('delivers only the types an endpoint subscribes to, and only to its own company', async () => {
    const { t, receiver, key } = await setup({}, ['users.created'])
    const other = await startReceiver()
    try {
      await t.app.workforceApi.webhooks.create({ companyId: 2, url: other.url, events: ['*'] })
      await t.post('/v1/todos', todoBody(), key)
      await t.post('/v1/users', { email: 'only.this@example.com', first_name: 'Only', last_name: 'This' }, key)
      const [delivery] = await receiver.waitFor(1)
      expect(JSON.parse(delivery!.body).type).toBe('users.created')
      await new Promise((resolve) => setTimeout(resolve, 150))
      expect(receiver.received).toHaveLength(1)
      expect(other.received).toHaveLength(0)
    } finally {
      await other.close()
    }
  })

  it('retries a failure with the same webhook-id after the scheduled delay, then succeeds', async () => {
    const { t, clock, receiver, key, endpoint } = await setup()
    let calls = 0
    receiver.answer = () => (++calls === 1 ? { status: 500, body: 'boom' } : { status: 200 })
    await t.post('/v1/todos', todoBody(), key)
    const [first] = await receiver.waitFor(1)
    await recorded(1)
    // The first retry is due 5 s (±10%) later on the plugin's clock: not before.
    clock.advance(4 * SECOND)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(receiver.received).toHaveLength(1)
    clock.advance(2 * SECOND)
    const [, second] = await receiver.waitFor(2)
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id'])
    expect(second!.body).toBe(first!.body)
    expect(Number(second!.headers['webhook-timestamp'])).toBeGreaterThan(Number(first!.headers['webhook-timestamp']))
    const page = await eventually(async () => {
      const listed = await t.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries[0]?.status === 'delivered' ? listed : undefined
    })
    expect(page.deliveries[0]!.attempts_made.map((a) => [a.status_code, a.succeeded, a.response_body])).toEqual([
      [500, false, 'boom'],
      [200, true, ''],
    ])
    expect((await t.app.workforceApi.webhooks.get(endpoint.id)).failing_since).toBeNull()
  })

  it('a 3xx is a failure and the redirect is never followed', async () => {
    const { t, receiver, key, endpoint } = await setup()
    receiver.answer = (request) => (request.path === '/hooks' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 })
    await t.post('/v1/todos', todoBody(), key)
    await receiver.waitFor(1)
    const page = await eventually(async () => {
      const listed = await t.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries[0]?.attempts_made.length === 1 ? listed : undefined
    })
    expect(page.deliveries[0]).toMatchObject({ status: 'pending' })
    expect(page.deliveries[0]!.attempts_made[0]).toMatchObject({ status_code: 302, succeeded: false, error: expect.stringContaining('redirect') })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(receiver.received.map((r) => r.path)).toEqual(['/hooks'])
  })

  it('a 410 disables the endpoint at once and tells the host', async () => {
    const { t, receiver, key, endpoint, disabled } = await setup()
    receiver.answer = () => ({ status: 410 })
    await t.post('/v1/todos', todoBody('first'), key)
    await receiver.waitFor(1)
    await eventually(() => disabled.length === 1 || undefined)
    expect(disabled[0]).toMatchObject({ reason: 'gone', endpoint: { id: endpoint.id, status: 'disabled', disabled_reason: 'gone' } })
    expect(disabled[0]!.endpoint).not.toHaveProperty('secret')
    expect(await t.app.workforceApi.webhooks.get(endpoint.id)).toMatchObject({ status: 'disabled', disabled_reason: 'gone' })
    const [delivery] = (await t.app.workforceApi.webhooks.deliveries(endpoint.id)).deliveries
    expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null })
    // A disabled endpoint gets nothing more.
    await t.post('/v1/todos', todoBody('second'), key)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(receiver.received).toHaveLength(1)
  })

  it('honours Retry-After on a 503 beyond the schedule', async () => {
    const { t, clock, receiver, key } = await setup({ retrySchedule: [SECOND] })
    let calls = 0
    receiver.answer = () => (++calls === 1 ? { status: 503, headers: { 'retry-after': '120' } } : { status: 200 })
    await t.post('/v1/todos', todoBody(), key)
    await receiver.waitFor(1)
    await recorded(1)
    clock.advance(60 * SECOND) // the schedule said 1 s; the receiver asked for 120 s
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(receiver.received).toHaveLength(1)
    clock.advance(61 * SECOND)
    await receiver.waitFor(2)
  })

  it('fails a delivery once the schedule is spent', async () => {
    const { t, clock, receiver, key, endpoint } = await setup({ retrySchedule: [SECOND, SECOND] })
    receiver.answer = () => ({ status: 500 })
    await t.post('/v1/todos', todoBody(), key)
    await recorded(1)
    clock.advance(2 * SECOND)
    await recorded(2)
    clock.advance(2 * SECOND)
    await recorded(3)
    const page = await eventually(async () => {
      const listed = await t.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries[0]?.status === 'failed' ? listed : undefined
    })
    expect(page.deliveries[0]!.attempts_made).toHaveLength(3)
    clock.advance(60 * SECOND)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(receiver.received).toHaveLength(3)
    // recover sends the failed delivery again, with the same id.
    receiver.answer = () => ({ status: 200 })
    expect(await t.app.workforceApi.webhooks.recover(endpoint.id, new Date(0))).toEqual({ count: 1 })
    const [, , , again] = await receiver.waitFor(4)
    expect(again!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id'])
  })

  it('disables an endpoint whose deliveries have all failed for 5 days, and tells the host', async () => {
    const { t, clock, receiver, key, endpoint, disabled } = await setup({ retrySchedule: [DAY, DAY, DAY, DAY, DAY, DAY, DAY] })
    receiver.answer = () => ({ status: 500 })
    await t.post('/v1/todos', todoBody(), key)
    await recorded(1)
    for (let day = 1; day <= 4; day += 1) {
      clock.advance(1.2 * DAY)
      await recorded(day + 1)
    }
    // 4.8 days of failures: still enabled.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await t.app.workforceApi.webhooks.get(endpoint.id)).status).toBe('enabled')
    clock.advance(1.2 * DAY)
    await receiver.waitFor(6)
    await eventually(() => disabled.length === 1 || undefined)
    expect(disabled[0]).toMatchObject({ reason: 'failing', endpoint: { id: endpoint.id, status: 'disabled', disabled_reason: 'failing' } })
    clock.advance(2 * DAY)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(receiver.received).toHaveLength(6)
  })

  it('an attempt without an answer within the timeout fails, and is retried', async () => {
    const { t, clock, receiver, key, endpoint } = await setup({ timeoutMs: 300 })
    receiver.answer = () => 'hang'
    await t.post('/v1/todos', todoBody(), key)
    // Generous: the first attempt of a run pays for cold imports on a busy machine.
    await receiver.waitFor(1, 15_000)
    const page = await eventually(async () => {
      const listed = await t.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries[0]?.attempts_made.length === 1 ? listed : undefined
    })
    expect(page.deliveries[0]!.attempts_made[0]).toMatchObject({ status_code: null, succeeded: false, error: 'timed out: no response within 300 ms' })
    // Ended by its deadline, not by the receiver or a socket timeout far later (issue 21).
    expect(page.deliveries[0]!.attempts_made[0]!.duration_ms).toBeGreaterThanOrEqual(295)
    expect(page.deliveries[0]!.attempts_made[0]!.duration_ms).toBeLessThan(2_000)
    receiver.answer = () => ({ status: 200 })
    clock.advance(6 * SECOND)
    await receiver.waitFor(2)
  })

  it('an endpoint that keeps failing is paused, the host hears once, deliveries wait unattempted, then one probe; a success resumes the rest', async () => {
    const { t, clock, receiver, key, endpoint, failing } = await setup({ breakerThreshold: 2, breakerPauseMs: 60 * SECOND })
    receiver.answer = () => ({ status: 500 })
    for (const title of ['one', 'two', 'three']) await t.post('/v1/todos', todoBody(title), key)
    await receiver.waitFor(3)
    await eventually(() => failing.length === 1 || undefined)
    expect(failing[0]).toMatchObject({ endpoint: { id: endpoint.id, status: 'enabled', consecutive_failures: 2, paused_until: new Date(clock.now() + 60 * SECOND) }, lastError: 'HTTP 500' })
    const paused = await eventually(async () => {
      const read = await t.app.workforceApi.webhooks.get(endpoint.id)
      return read.consecutive_failures === 3 ? read : undefined
    })
    expect(paused.paused_until).toEqual(new Date(clock.now() + 60 * SECOND))

    // Paused: the retries (due after 5 s) and a new event wait; nothing is attempted or failed.
    await t.post('/v1/todos', todoBody('four'), key)
    clock.advance(30 * SECOND)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.received).toHaveLength(3)
    const waiting = (await t.app.workforceApi.webhooks.deliveries(endpoint.id)).deliveries
    expect(waiting.map((delivery) => [delivery.status, delivery.attempts_made.length])).toEqual([['pending', 0], ['pending', 1], ['pending', 1], ['pending', 1]])

    receiver.answer = () => ({ status: 204 })
    clock.advance(31 * SECOND)
    await receiver.waitFor(7)
    const page = await eventually(async () => {
      const listed = await t.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries.every((delivery) => delivery.status === 'delivered') ? listed : undefined
    })
    expect(page.deliveries).toHaveLength(4)
    expect(await t.app.workforceApi.webhooks.get(endpoint.id)).toMatchObject({ failing_since: null, consecutive_failures: 0, paused_until: null })
    expect(failing).toHaveLength(1)
  })

  it('a hanging endpoint holds at most endpointConcurrency attempts; the company\'s other endpoint keeps receiving', async () => {
    const { t, receiver, key } = await setup({ endpointConcurrency: 2, concurrency: 6, timeoutMs: 20_000 })
    const hanging = await startReceiver()
    hanging.answer = () => 'hang'
    try {
      await t.app.workforceApi.webhooks.create({ companyId: 1, url: hanging.url, events: ['*'] })
      for (let n = 0; n < 10; n += 1) await t.post('/v1/todos', todoBody(`todo ${n}`), key)
      await receiver.waitFor(10, 5_000)
      expect(hanging.received.length).toBeLessThanOrEqual(2)
    } finally {
      await h?.t.close()
      await hanging.close()
    }
  })

  it('during a rotation every delivery is signed with the new secret and the old one, for 24 hours', async () => {
    const { t, clock, receiver, key, endpoint, secret: oldSecret } = await setup()
    const { secret: newSecret } = await t.app.workforceApi.webhooks.rotateSecret(endpoint.id)
    expect(newSecret).not.toBe(oldSecret)
    await t.post('/v1/todos', todoBody('during'), key)
    const [during] = await receiver.waitFor(1)
    const headers = during!.headers as Record<string, string>
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2)
    expect(verifyWebhook(oldSecret, headers, during!.body, { now: clock.now() })).toMatchObject({ type: 'todos.created' })
    expect(verifyWebhook(newSecret, headers, during!.body, { now: clock.now() })).toMatchObject({ type: 'todos.created' })
    expect(new Webhook(oldSecret).verify(during!.body, headers)).toBeTruthy()
    expect(new Webhook(newSecret).verify(during!.body, headers)).toBeTruthy()

    clock.advance(DAY + SECOND)
    await t.post('/v1/todos', todoBody('after'), key)
    const [, after] = await receiver.waitFor(2)
    const later = after!.headers as Record<string, string>
    expect(later['webhook-signature']!.split(' ')).toHaveLength(1)
    expect(verifyWebhook(newSecret, later, after!.body, { now: clock.now() })).toMatchObject({ type: 'todos.created' })
    expect(() => verifyWebhook(oldSecret, later, after!.body, { now: clock.now() })).toThrow(WebhookVerificationError)
  })

  it('a rolled-back write delivers nothing', async () => {
    const { t, receiver, key } = await setup()
    t.writes.failNextAt('completeIdempotency')
    const failed = await t.post('/v1/todos', todoBody('rolled back'), { authorization: `Bearer ${key}`, 'idempotency-key': 'rollback-1' })
    expect(failed.statusCode).toBeGreaterThanOrEqual(500)
    await t.post('/v1/todos', todoBody('kept'), key)
    const [only] = await receiver.waitFor(1)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(receiver.received).toHaveLength(1)
    expect(JSON.parse(only!.body).data.title).toBe('kept')
  })

  it('a destination that resolves to a private address is refused at connect time (DNS rebinding)', async () => {
    // `localhost` resolves to 127.0.0.1: the connect-time check must refuse it.
    const { t, receiver, key, endpoint } = await setup({ allowPrivateDestinations: false }, ['*'], (r) => r.url.replace('http://127.0.0.1', 'https://localhost'))
    await expect(t.app.workforceApi.webhooks.create({ companyId: 1, url: 'https://localhost/hooks', events: ['*'] })).rejects.toMatchObject({ reason: 'invalid_input' })
    await t.post('/v1/todos', todoBody(), key)
    const page = await eventually(async () => {
      const listed = await t.app.workforceApi.webhooks.deliveries(endpoint.id)
      return listed.deliveries[0]?.attempts_made.length === 1 ? listed : undefined
    })
    expect(page.deliveries[0]!.attempts_made[0]).toMatchObject({ status_code: null, succeeded: false, error: expect.stringContaining('non-public address') })
    expect(receiver.received).toHaveLength(0)
  })
})
