import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { portsOf } from '../../src/ports/index.js'
import { workforceApi } from '../../src/plugin.js'
import { generateDataset } from '../../src/seed/generate.js'
import { killed, spawnUntil } from '../helpers/child-process.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { startReceiver, type Receiver } from './receiver.js'
import { withResponseChecks } from '../helpers/response-checks.js'

const SECRET_KEY = randomBytes(32).toString('base64')
const FIXTURE = join(import.meta.dirname, 'fixtures/dispatcher-process.ts')

async function startDispatcher(db: string): Promise<ChildProcess> {
  const env = { ...process.env, DB_URL: db, SECRET_KEY }
  const { child } = await spawnUntil('dispatcher', process.execPath, ['--import', 'tsx', FIXTURE], { env, until: /ready/ })
  return child
}

// Issue 10: at-least-once — no event is lost when a dispatcher dies between claim and acknowledgement.
describePostgres('a dispatcher killed (SIGKILL) mid-attempt', () => {
  const database = useTestDatabase()
  const children: ChildProcess[] = []
  let admin: { app: FastifyInstance; adapter: PostgresAdapter } | undefined
  let receiver: Receiver | undefined
  afterEach(async () => {
    for (const child of children.splice(0)) await killed(child)
    await admin?.app.close()
    await admin?.adapter.close()
    await receiver?.close()
  })

  it('the event still arrives, with the same webhook-id, once the claim’s lease runs out', async () => {
    const db = database.current.url
    const adapter = await openPostgresAdapter({ connectionString: db })
    await adapter.loadDataset(generateDataset())
    // This instance only serves the API and administers endpoints: no dispatcher.
    const app = withResponseChecks(Fastify())
    admin = { app, adapter }
    await app.register(workforceApi, {
      prefix: '/api/public',
      ...portsOf(adapter),
      rateLimit: false,
      webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, dispatcher: false },
    })
    await app.ready()
    receiver = await startReceiver()
    receiver.answer = () => (receiver!.received.length === 1 ? 'hang' : { status: 204 })
    const { endpoint } = await app.workforceApi.webhooks.create({ companyId: 1, url: receiver.url, events: ['todos.created'] })
    const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })

    const first = await startDispatcher(db)
    children.push(first)
    const created = await app.inject({ method: 'POST', url: '/api/public/v1/todos', headers: { 'x-api-key': key }, payload: { title: 'Survive a crash', list_id: 1, assigned_to: 1 } })
    expect(created.statusCode).toBe(201)
    // Claimed and sent; the receiver holds the request, so the attempt is never acknowledged.
    const [held] = await receiver.waitFor(1, 10_000)
    // The dead claim's lease: the delivery is due again at its end, and not before.
    const [claimed] = (await app.workforceApi.webhooks.deliveries(endpoint.id)).deliveries
    const leaseEnd = claimed?.next_attempt_at?.getTime() ?? Number.NaN
    // The claim's lease (2 s in the fixture, from before the attempt arrived), not the due time.
    expect(leaseEnd - held!.at).toBeLessThanOrEqual(2_000)
    expect(leaseEnd).toBeGreaterThan(held!.at)
    await killed(first)
    const killedAt = Date.now()

    children.push(await startDispatcher(db))
    const [, again] = await receiver.waitFor(2, 15_000)
    expect(again!.headers['webhook-id']).toBe(held!.headers['webhook-id'])
    expect(again!.body).toBe(held!.body)
    expect(JSON.parse(again!.body)).toMatchObject({ type: 'todos.created', data: { title: 'Survive a crash' } })
    // Not before the dead claim's lease ran out. Measured against the lease's end, not the first
    // arrival: on a loaded machine the first attempt arrived over 100 ms after its claim, and a
    // bound of 1.9 s after that arrival failed though the lease was kept (CI, Node 24).
    expect(again!.at).toBeGreaterThanOrEqual(leaseEnd)
    expect(Date.now() - killedAt).toBeLessThan(15_000)

    for (let i = 0; i < 100; i += 1) {
      const [delivery] = (await app.workforceApi.webhooks.deliveries(endpoint.id)).deliveries
      if (delivery?.status === 'delivered') {
        // The killed attempt was never recorded; the second claim counts as attempt 2.
        expect(delivery.attempts).toBe(2)
        expect(delivery.attempts_made).toEqual([expect.objectContaining({ number: 2, status_code: 204, succeeded: true })])
        return
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error('the delivery was never recorded as delivered')
    // Two TypeScript processes started through tsx and a dataset load: 26 s here on a slow day
    // (the code before this timeout was set, too). A hang is caught at 60 s; what is checked is
    // bounded by the waits above (10 s, then 15 s from the kill).
  }, 60_000)
})
