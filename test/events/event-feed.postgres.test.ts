import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { expect, it } from 'vitest'
import type { PostgresAdapter } from '../../adapters/postgres/index.js'
import { changeEvent } from '../../src/conformance/webhook-facts.js'
import { portsOf, workforceApi } from '../../src/index.js'
import type { FeedQuery, WebhookStore } from '../../src/ports/webhook-store.js'
import type { CompanyRecord } from '../../src/ports/records.js'
import { seedDataset } from '../helpers/build.js'
import { describePostgres, usePostgresAdapters, useTestDatabase } from '../helpers/postgres.js'

// The feed's one hard rule on Postgres, where transactions overlap: no event may appear at a
// position a reader has already passed. A transaction takes its event's identity value when it
// inserts and may commit after a later one; the feed must still show it after what was read.

const ALL_TYPES = ['todos.created', 'todos.updated', 'shifts.deleted', 'company.updated']

/** Follows company 1's feed from `after` to its end, collecting event ids. */
async function follow(store: WebhookStore, after: number | undefined, query: Partial<FeedQuery> = {}): Promise<{ ids: string[]; next: number | undefined }> {
  const ids: string[] = []
  let cursor = after
  for (;;) {
    const page = await store.readFeed(1, { types: ALL_TYPES, limit: 50, scan: 500, ...(cursor === undefined ? {} : { after: cursor }), ...query })
    if (page.expired) throw new Error('expired')
    ids.push(...page.events.map((event) => (JSON.parse(event.payload) as { id: string }).id))
    cursor = page.next
    if (!page.has_more) return { ids, next: cursor }
  }
}

/** A latch: `wait` settles once `open` is called. */
function latch(): { wait: Promise<void>; open(): void } {
  let open!: () => void
  const wait = new Promise<void>((resolve) => (open = resolve))
  return { wait, open }
}

describePostgres('the events feed on Postgres: commit order across overlapping transactions and instances', () => {
  const database = useTestDatabase()
  const adapters = usePostgresAdapters(database)

  const twoInstances = async (): Promise<[PostgresAdapter, PostgresAdapter]> => {
    const one = await adapters.open({ connectionString: database.current.url })
    const two = await adapters.open({ connectionString: database.current.url })
    return [one, two]
  }

  it('shows an event that committed after a later one at a position after what a reader has passed', async () => {
    const [one, two] = await twoInstances()
    const early = changeEvent('order: inserted first, committed last', 1, 'todos.created', 1)
    const late = changeEvent('order: inserted second, committed first', 1, 'todos.created', 2)
    const inserted = latch()
    const release = latch()
    // A inserts first (the smaller identity value) and stays open.
    const a = one.db.transaction().execute(async (trx) => {
      await one.webhooks.publish(trx, [early])
      inserted.open()
      await release.wait
    })
    await inserted.wait
    await two.db.transaction().execute((trx) => two.webhooks.publish(trx, [late]))

    const seen = await follow(two.webhooks, undefined)
    expect(seen.ids).toEqual([late.id])
    expect(await two.webhooks.feedHead(1)).toBe(seen.next)
    release.open()
    await a
    // From where the reader stopped: the early-inserted, late-committed event, not lost below it.
    expect((await follow(one.webhooks, seen.next)).ids).toEqual([early.id])
    expect((await follow(two.webhooks, undefined)).ids).toEqual([late.id, early.id])
    const [idOfEarly, idOfLate] = await Promise.all(
      [early, late].map(async (event) => Number((await one.db.selectFrom('wfa_change_events').select('id').where('event_id', '=', event.id).executeTakeFirstOrThrow()).id)),
    )
    expect(idOfEarly).toBeLessThan(idOfLate as number)
  })

  it('while two instances commit, roll back and hold transactions open, readers on both see each committed event once, in one order', async () => {
    const [one, two] = await twoInstances()
    const stores = [one, two]
    // The database is the file's: start after what the tests before left.
    const start = await one.webhooks.feedHead(1)
    const committed: string[] = []
    const committedElsewhere: string[] = []
    const rolledBack: string[] = []
    let writing = true
    const writer = async (instance: number, count: number) => {
      const adapter = stores[instance] as PostgresAdapter
      for (let index = 0; index < count; index += 1) {
        const label = `stress ${instance}-${index}`
        const events = [changeEvent(`${label} a`, 1, 'todos.updated', 1), changeEvent(`${label} b`, index % 3 === 0 ? 2 : 1, 'company.updated', 1)]
        const rollback = index % 7 === 3
        try {
          await adapter.db.transaction().execute(async (trx) => {
            await adapter.webhooks.publish(trx, events)
            // Held open across other commits, for a varying while.
            await new Promise((resolve) => setTimeout(resolve, (index * 7 + instance * 3) % 15))
            if (rollback) throw new Error('rolled back on purpose')
          })
          committed.push(...events.filter((event) => event.company_id === 1).map((event) => event.id))
          committedElsewhere.push(...events.filter((event) => event.company_id === 2).map((event) => event.id))
        } catch {
          rolledBack.push(...events.map((event) => event.id))
        }
      }
    }
    const reader = async (instance: number) => {
      const store = (stores[instance] as PostgresAdapter).webhooks
      const ids: string[] = []
      let cursor: number | undefined = start
      while (writing) {
        const page = await follow(store, cursor, { limit: 7, scan: 70 })
        ids.push(...page.ids)
        cursor = page.next
      }
      ids.push(...(await follow(store, cursor)).ids)
      return ids
    }
    const readers = [reader(0), reader(1), reader(0)]
    await Promise.all([writer(0, 60), writer(1, 60)])
    writing = false
    const seen = await Promise.all(readers)
    const final = (await follow(one.webhooks, start)).ids
    expect(new Set(final)).toEqual(new Set(committed))
    expect(final).toHaveLength(committed.length)
    for (const ids of seen) expect(ids).toEqual(final)
    expect(final.some((id) => rolledBack.includes(id))).toBe(false)
    // Company 2's events are in its own feed only.
    const company2 = await one.webhooks.readFeed(2, { types: ALL_TYPES, limit: 1_000, scan: 10_000 })
    expect(company2.expired === false && company2.events.map((event) => (JSON.parse(event.payload) as { id: string }).id).sort()).toEqual(committedElsewhere.sort())
  })

  it('over HTTP on two app instances: the cursor of one instance resumes on the other', async () => {
    const [one, two] = await twoInstances()
    await one.loadDataset(seedDataset())
    const secretKey = randomBytes(32).toString('base64')
    const apps: FastifyInstance[] = []
    for (const adapter of [one, two]) {
      const app = Fastify()
      await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter), webhookOptions: { secretKey, dispatcher: false } })
      await app.ready()
      apps.push(app)
    }
    try {
      const [a, b] = apps as [FastifyInstance, FastifyInstance]
      const { key } = await a.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })
      const get = (app: FastifyInstance, url: string) => app.inject({ method: 'GET', url: `/api/public${url}`, headers: { 'x-api-key': key } })
      const cursor = (await get(a, '/v1/events/cursor')).json().data.cursor as string
      const company: CompanyRecord = { id: 1, name: 'Acme', timezone: 'Europe/Berlin', country: 'DE', created_at: new Date(0), updated_at: new Date(0) }
      await one.db.transaction().execute((trx) => a.workforceApi.events.publish(trx, { type: 'company.updated', companyId: 1, record: company }))
      const created = await b.inject({ method: 'POST', url: '/api/public/v1/todos', headers: { 'x-api-key': key }, payload: { title: 'On b', list_id: 1, assigned_to: 1 } })
      expect(created.statusCode, created.body).toBe(201)
      const page = (await get(b, `/v1/events?after=${cursor}`)).json()
      expect(page.data.map((event: { type: string }) => event.type)).toEqual(['company.updated', 'todos.created'])
      expect((await get(a, `/v1/events?after=${page.next_cursor}`)).json()).toEqual({ data: [], next_cursor: page.next_cursor, has_more: false })
    } finally {
      for (const app of apps) await app.close()
    }
  })
})
