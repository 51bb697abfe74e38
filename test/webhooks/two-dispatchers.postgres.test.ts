import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import type { CompanyRecord } from '../../src/ports/records.js'
import type { WebhookTransport } from '../../src/ports/webhook-transport.js'
import { portsOf } from '../../src/ports/index.js'
import { workforceApi } from '../../src/plugin.js'
import { generateDataset } from '../../src/seed/generate.js'
import { httpWebhookTransport } from '../../src/webhooks/http-transport.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { startReceiver, type Receiver } from './receiver.js'

const SECRET_KEY = randomBytes(32).toString('base64')
const EVENTS = 500

/** The default transport, counting what this instance sent. */
function counting(): WebhookTransport & { sent: number } {
  const inner = httpWebhookTransport({ allowPrivate: true })
  const transport = {
    sent: 0,
    send: (request: Parameters<WebhookTransport['send']>[0]) => {
      transport.sent += 1
      return inner.send(request)
    },
    close: () => inner.close?.() ?? Promise.resolve(),
  }
  return transport
}

// Issue 10: several instances on one Postgres share the work; each attempt goes to one dispatcher.
describePostgres('two dispatchers on one Postgres', () => {
  const database = useTestDatabase()
  const instances: Array<{ app: FastifyInstance; adapter: PostgresAdapter; transport: ReturnType<typeof counting> }> = []
  let receiver: Receiver

  beforeAll(async () => {
    receiver = await startReceiver()
    for (let index = 0; index < 2; index += 1) {
      const adapter = await openPostgresAdapter({ connectionString: database.current.url })
      if (index === 0) await adapter.loadDataset(generateDataset())
      const transport = counting()
      const app = Fastify()
      await app.register(workforceApi, {
        ...portsOf(adapter),
        rateLimit: false,
        webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, transport },
      })
      await app.ready()
      instances.push({ app, adapter, transport })
    }
  })

  afterAll(async () => {
    for (const { app, adapter } of instances.splice(0)) {
      await app.close()
      await adapter.close()
    }
    await receiver?.close()
  })

  it(`deliver each of ${EVENTS} events exactly once when nothing fails`, async () => {
    const [a] = instances
    const { endpoint } = await a!.app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['company.updated'] })
    const company: CompanyRecord = { id: 1, name: 'Acme', timezone: 'Europe/Berlin', country: 'DE', created_at: new Date(0), updated_at: new Date(0) }
    const published: string[] = []
    // Published by the host in its own transactions, 50 per commit.
    for (let batch = 0; batch < EVENTS / 50; batch += 1) {
      await a!.adapter.db.transaction().execute(async (trx) => {
        const inputs = Array.from({ length: 50 }, (_, i) => ({ type: 'company.updated' as const, companyId: 1, record: { ...company, name: `Acme ${batch * 50 + i}` } }))
        published.push(...(await a!.app.workforceApi.events.publish(trx, inputs)))
      })
    }
    await receiver.waitFor(EVENTS, 30_000)
    // Anything sent twice would arrive within this.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const ids = receiver.received.map((entry) => entry.headers['webhook-id'])
    expect(ids).toHaveLength(EVENTS)
    expect(new Set(ids)).toEqual(new Set(published))
    expect(instances.map((i) => i.transport.sent).reduce((x, y) => x + y)).toBe(EVENTS)
    expect(instances.every((i) => i.transport.sent > 0), `sent per instance: ${instances.map((i) => i.transport.sent).join(', ')}`).toBe(true)
    const page = await a!.app.workforceApi.webhooks.deliveries(endpoint.id, { limit: 100 })
    expect(page.deliveries.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true)
  })
})
