import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import { afterEach, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { portsOf, recordingWebhookTransport, verifyWebhook, workforceApi } from '../../src/index.js'
import { seedDataset } from '../helpers/build.js'
import { exclusiveMemberIds, listIds } from '../helpers/seed-facts.js'
import { withResponseChecks } from '../helpers/response-checks.js'

const apps: Array<{ close(): Promise<unknown> }> = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

it('the recording transport receives signed deliveries without a network, and its answers drive retries', async () => {
  let calls = 0
  const transport = recordingWebhookTransport(() => (++calls === 1 ? { status: 503, retryAfter: null, body: 'busy' } : { status: 200, retryAfter: null, body: 'ok' }))
  const app = withResponseChecks(Fastify())
  apps.push(app)
  await app.register(workforceApi, {
    prefix: '/api/public',
    ...portsOf(createMemoryAdapter(seedDataset())),
    webhookOptions: { secretKey: randomBytes(32).toString('base64'), transport, pollIntervalMs: 20, retrySchedule: [50] },
  })
  await app.ready()
  // A public destination: the recording transport never connects, so nothing leaves the machine.
  const { secret, endpoint } = await app.workforceApi.webhooks.create({ companyId: 1, url: 'https://93.184.215.14/hooks', events: ['todos.created'] })
  const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })
  const created = await app.inject({
    method: 'POST',
    url: '/api/public/v1/todos',
    headers: { 'x-api-key': key },
    payload: { title: 'Recorded', list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] },
  })
  expect(created.statusCode).toBe(201)
  for (let i = 0; i < 200 && transport.sent.length < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 10))
  expect(transport.sent).toHaveLength(2)
  const [first, second] = transport.sent
  expect(first!.url).toBe('https://93.184.215.14/hooks')
  expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id'])
  expect(verifyWebhook(secret, second!.headers, second!.body)).toMatchObject({ type: 'todos.created', data: created.json().data })
  for (let i = 0; i < 100; i += 1) {
    const [delivery] = (await app.workforceApi.webhooks.deliveries(endpoint.id)).deliveries
    if (delivery?.status === 'delivered') {
      expect(delivery.attempts_made.map((a) => [a.status_code, a.response_body])).toEqual([
        [503, 'busy'],
        [200, 'ok'],
      ])
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('never recorded as delivered')
})
