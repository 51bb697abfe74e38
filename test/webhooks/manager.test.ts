import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { portsOf } from '../../src/ports/index.js'
import { workforceApi } from '../../src/plugin.js'
import { EVENT_TYPES } from '../../src/api/index.js'
import { WebhookAdminError } from '../../src/webhooks/webhook-manager.js'
import { seedDataset } from '../helpers/build.js'
import { buildWriteApp, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'

const SECRET_KEY = randomBytes(32).toString('base64')
const URL_A = 'https://hooks.example.com/a'

describe.each(WRITE_ADAPTERS)('app.workforceApi.webhooks ($name)', (adapter) => {
  let t: WriteTestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  // A public address that needs no DNS; dispatcher off, so nothing is sent anywhere.
  const open = async () => {
    t = await buildWriteApp({ adapter, options: { webhookOptions: { secretKey: SECRET_KEY, dispatcher: false } } })
    return t.app.workforceApi.webhooks
  }

  it('create returns the secret once; the store keeps it sealed', async () => {
    const webhooks = await open()
    const { endpoint, secret } = await webhooks.create({ companyId: 1, url: 'https://93.184.215.14/hooks', events: ['todos.updated', 'users.created', 'todos.updated'], description: 'CRM sync' })
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(endpoint).toEqual({
      id: expect.stringMatching(/^we_[a-z2-7]{24}$/),
      company_id: 1,
      url: 'https://93.184.215.14/hooks',
      description: 'CRM sync',
      // De-duplicated, in catalogue order.
      events: ['users.created', 'todos.updated'],
      status: 'enabled',
      disabled_reason: null,
      failing_since: null,
      consecutive_failures: 0,
      paused_until: null,
      created_at: expect.any(Date),
      updated_at: expect.any(Date),
    })
    const stored = await t!.adapter.webhooks.getEndpoint(endpoint.id)
    expect(stored!.secret).not.toContain(secret.slice(6))
    expect(stored!.secret).not.toContain(secret)
    expect(JSON.stringify(await webhooks.get(endpoint.id))).not.toContain('whsec_')
  })

  it('refuses bad input with invalid_input naming the problem', async () => {
    const webhooks = await open()
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ companyId: 0, url: URL_A, events: ['*'] }, /companyId/],
      [{ companyId: 1, url: 'http://93.184.215.14/hooks', events: ['*'] }, /https/],
      [{ companyId: 1, url: 'https://127.0.0.1/hooks', events: ['*'] }, /non-public/],
      [{ companyId: 1, url: 'https://10.1.2.3/hooks', events: ['*'] }, /non-public/],
      [{ companyId: 1, url: 'https://[::1]/hooks', events: ['*'] }, /non-public/],
      [{ companyId: 1, url: 'https://169.254.169.254/latest', events: ['*'] }, /non-public/],
      [{ companyId: 1, url: 'not a url', events: ['*'] }, /absolute URL/],
      [{ companyId: 1, url: 'https://93.184.215.14/hooks', events: ['todos.created', 'roles.updated'] }, /unknown event types: roles.updated/],
      [{ companyId: 1, url: 'https://93.184.215.14/hooks', events: [] }, /at least one/],
      [{ companyId: 1, url: 'https://93.184.215.14/hooks', events: ['*'], description: 'x'.repeat(501) }, /description/],
    ]
    for (const [input, message] of cases) {
      const error = await webhooks.create(input as never).catch((caught: unknown) => caught)
      expect(error, JSON.stringify(input)).toBeInstanceOf(WebhookAdminError)
      expect(error).toMatchObject({ reason: 'invalid_input', message: expect.stringMatching(message) })
    }
    expect(await webhooks.list(1)).toEqual([])
  })

  it('lists a company’s endpoints only; get, update, disable, enable, delete', async () => {
    const webhooks = await open()
    const { endpoint: a } = await webhooks.create({ companyId: 1, url: 'https://93.184.215.14/a', events: ['*'] })
    const { endpoint: b } = await webhooks.create({ companyId: 1, url: 'https://93.184.215.14/b', events: [...EVENT_TYPES] })
    await webhooks.create({ companyId: 2, url: 'https://93.184.215.14/c', events: ['*'] })
    expect((await webhooks.list(1)).map((e) => e.id).sort()).toEqual([a.id, b.id].sort())

    t!.clock.advance(1_000)
    const updated = await webhooks.update(a.id, { events: ['shifts.updated'], description: 'shifts only' })
    expect(updated).toMatchObject({ events: ['shifts.updated'], description: 'shifts only', url: 'https://93.184.215.14/a' })
    expect(updated.updated_at.getTime()).toBe(a.updated_at.getTime() + 1_000)
    await expect(webhooks.update(a.id, { url: 'https://192.168.0.1/x' })).rejects.toMatchObject({ reason: 'invalid_input' })

    expect(await webhooks.disable(a.id)).toMatchObject({ status: 'disabled', disabled_reason: 'manual' })
    expect(await webhooks.enable(a.id)).toMatchObject({ status: 'enabled', disabled_reason: null })
    await webhooks.delete(a.id)
    await expect(webhooks.get(a.id)).rejects.toMatchObject({ reason: 'not_found' })
    await expect(webhooks.delete(a.id)).rejects.toMatchObject({ reason: 'not_found' })
    await expect(webhooks.get('we_nope')).rejects.toMatchObject({ reason: 'invalid_input' })
  })

  it('rotateSecret returns a new secret and keeps the old one signing for 24 hours', async () => {
    const webhooks = await open()
    const { endpoint, secret } = await webhooks.create({ companyId: 1, url: URL_A.replace('hooks.example.com', '93.184.215.14'), events: ['*'] })
    const rotated = await webhooks.rotateSecret(endpoint.id)
    expect(rotated.secret).not.toBe(secret)
    const stored = await t!.adapter.webhooks.getEndpoint(endpoint.id)
    expect(stored!.previous_secret_expires_at!.getTime()).toBe(t!.clock.now() + 24 * 60 * 60 * 1000)
    expect(stored!.previous_secret).not.toBeNull()
  })

  it('redeliver and recover need a known event of the endpoint’s company', async () => {
    const webhooks = await open()
    const { endpoint } = await webhooks.create({ companyId: 1, url: 'https://93.184.215.14/a', events: ['*'] })
    await expect(webhooks.redeliver(endpoint.id, 'evt_' + 'a'.repeat(24))).rejects.toMatchObject({ reason: 'not_found' })
    await expect(webhooks.redeliver(endpoint.id, 'nope')).rejects.toMatchObject({ reason: 'invalid_input' })
    await expect(webhooks.recover(endpoint.id, new Date('x'))).rejects.toMatchObject({ reason: 'invalid_input' })
    expect(await webhooks.recover(endpoint.id, new Date(0))).toEqual({ count: 0 })
    await expect(webhooks.deliveries(endpoint.id, { limit: 0 })).rejects.toMatchObject({ reason: 'invalid_input' })
  })

  it('deliveries page newest first', async () => {
    const webhooks = await open()
    const { endpoint } = await webhooks.create({ companyId: 1, url: 'https://93.184.215.14/a', events: ['*'] })
    const key = await t!.keyFor(1)
    for (let i = 0; i < 5; i += 1) {
      await t!.post('/v1/users', { email: `person${i}@example.com`, first_name: 'P', last_name: String(i) }, key)
    }
    const first = await webhooks.deliveries(endpoint.id, { limit: 2 })
    expect(first.has_more).toBe(true)
    const second = await webhooks.deliveries(endpoint.id, { limit: 2, before: first.deliveries[1]!.id })
    const third = await webhooks.deliveries(endpoint.id, { limit: 2, before: second.deliveries[1]!.id })
    expect(third.has_more).toBe(false)
    const ids = [...first.deliveries, ...second.deliveries, ...third.deliveries].map((d) => d.id)
    expect(ids).toHaveLength(5)
    expect([...ids].sort((x, y) => y - x)).toEqual(ids)
    expect(first.deliveries.every((d) => d.status === 'pending' && d.attempts_made.length === 0)).toBe(true)
  })
})

describe('webhooks without their prerequisites', () => {
  const apps: Array<{ close(): Promise<unknown> }> = []
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close()
  })

  it('without secretKey, administration is unavailable with a message saying what to set', async () => {
    const app = Fastify()
    apps.push(app)
    const adapter = createMemoryAdapter(seedDataset())
    await app.register(workforceApi, { ...portsOf(adapter) })
    await app.ready()
    await expect(app.workforceApi.webhooks.list(1)).rejects.toMatchObject({ reason: 'unavailable', message: expect.stringContaining('secretKey') })
  })

  it('a secretKey that is not 32 bytes fails registration', async () => {
    const app = Fastify()
    apps.push(app)
    const adapter = createMemoryAdapter(seedDataset())
    await expect(app.register(workforceApi, { ...portsOf(adapter), webhookOptions: { secretKey: 'c2hvcnQ=' } }).ready()).rejects.toMatchObject({
      code: 'WFA_ERR_OPTION_INVALID',
      option: 'webhookOptions.secretKey',
    })
  })

  it('leaseMs must exceed timeoutMs', async () => {
    const app = Fastify()
    apps.push(app)
    const adapter = createMemoryAdapter(seedDataset())
    await expect(
      app.register(workforceApi, { ...portsOf(adapter), webhookOptions: { secretKey: SECRET_KEY, timeoutMs: 5_000, leaseMs: 5_000 } }).ready(),
    ).rejects.toMatchObject({ option: 'webhookOptions.leaseMs' })
  })

  // Issue 21: the fairness and breaker options are checked at registration, by name.
  it.each([
    ['endpointConcurrency', { endpointConcurrency: 0 }],
    ['companyConcurrency', { companyConcurrency: 1.5 }],
    ['breakerThreshold', { breakerThreshold: 0 }],
    ['breakerPauseMs', { breakerPauseMs: -1 }],
    ['breakerMaxPauseMs', { breakerPauseMs: 60_000, breakerMaxPauseMs: 30_000 }],
    ['onEndpointFailing', { onEndpointFailing: 'notify' as unknown as () => void }],
  ] as const)('a bad webhookOptions.%s fails registration, naming it', async (name, options) => {
    const app = Fastify()
    apps.push(app)
    const adapter = createMemoryAdapter(seedDataset())
    await expect(app.register(workforceApi, { ...portsOf(adapter), webhookOptions: { secretKey: SECRET_KEY, ...options } }).ready()).rejects.toMatchObject({
      code: 'WFA_ERR_OPTION_INVALID',
      option: `webhookOptions.${name}`,
    })
  })
})
