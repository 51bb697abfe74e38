import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openSqliteAdapter, type SqliteAdapter } from '../../adapters/sqlite/index.js'
import { changeEvent, endpointRecord } from '../../src/conformance/webhook-facts.js'
import { afterNow } from '../../src/conformance/write-facts.js'

/** What each wake saw: whether a transaction was still open on the connection, and how many deliveries were visible. */
interface Wake {
  inTransaction: boolean
  pending: number
}

// SQLite has no NOTIFY: the adapter wakes this process's dispatchers after the commit itself.
describe('SqlWebhookStore on SQLite: waking the dispatcher', () => {
  let adapter: SqliteAdapter
  let wakes: Wake[]
  let stop: () => Promise<void>
  const subscribed = endpointRecord('wake: todos', 1, ['todos.created', 'todos.updated'])

  const pending = async () => (await adapter.webhooks.listDeliveries(subscribed.id, { limit: 100 })).deliveries.filter((d) => d.status === 'pending').length

  beforeEach(async () => {
    adapter = await openSqliteAdapter({ filename: ':memory:' })
    await adapter.webhooks.createEndpoint(subscribed)
    wakes = []
    const subscribe = adapter.webhooks.subscribeDue
    if (subscribe === undefined) throw new Error('the SQLite store should offer subscribeDue')
    stop = await subscribe(() => {
      // Counted synchronously: what the dispatcher's first query would find.
      const inTransaction = adapter.database.inTransaction
      const count = adapter.database.prepare(`select count(*) as n from wfa_webhook_deliveries where status = 'pending'`).get() as { n: number }
      wakes.push({ inTransaction, pending: count.n })
    })
  })
  afterEach(async () => {
    await stop()
    await adapter.close()
  })

  it('wakes once a write that created deliveries has committed, with the deliveries visible', async () => {
    await adapter.writes.transaction(async (tx) => {
      await tx.recordEvent(changeEvent('wake: first', 1, 'todos.created', 1))
      await tx.recordEvent(changeEvent('wake: second', 1, 'todos.updated', 1))
      expect(wakes, 'no wake before the commit').toEqual([])
    })
    expect(wakes).toEqual([{ inTransaction: false, pending: 2 }])
  })

  it('finishAttempts wakes after its commit when asked to (places freed under a cap), and only then', async () => {
    await adapter.writes.transaction(async (tx) => {
      for (const n of [1, 2]) await tx.recordEvent(changeEvent(`wake: finish ${n}`, 1, 'todos.created', n))
    })
    wakes.length = 0
    const [first, second] = await adapter.webhooks.claimDue(afterNow(0), afterNow(60_000), 10)
    const delivered = (claim: NonNullable<typeof first>) => ({
      claim,
      outcome: { attempt: { number: 1, attempted_at: afterNow(1), status_code: 204, duration_ms: 1, response_body: '', error: null, succeeded: true }, next: { status: 'delivered' as const } },
      now: afterNow(2),
    })
    await adapter.webhooks.finishAttempts!([delivered(first!)])
    expect(wakes, 'after a batch recorded without wake').toEqual([])
    await adapter.webhooks.finishAttempts!([delivered(second!)], true)
    expect(wakes, 'after a batch recorded with wake: once, after the commit').toEqual([{ inTransaction: false, pending: 0 }])
  })

  it('does not wake for a write that rolls back, nor for one whose events no endpoint subscribes to', async () => {
    await expect(
      adapter.writes.transaction(async (tx) => {
        await tx.recordEvent(changeEvent('wake: rolled back', 1, 'todos.created', 1))
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    await adapter.writes.transaction((tx) => tx.recordEvent(changeEvent('wake: unheard', 1, 'users.created', 1)))
    await adapter.writes.transaction((tx) => tx.recordEvent(changeEvent('wake: other company', 2, 'todos.created', 1)))
    expect(wakes).toEqual([])
    expect(await pending()).toBe(0)
  })

  it("wakes after the adapter's own transaction commits a host's publish, not after it rolls back", async () => {
    await expect(
      adapter.transaction(async (trx) => {
        await adapter.webhooks.publish(trx, [changeEvent('wake: host rolled back', 1, 'todos.created', 1)])
        throw new Error('host changed its mind')
      }),
    ).rejects.toThrow('host changed its mind')
    expect(wakes).toEqual([])
    await adapter.transaction(async (trx) => {
      await adapter.webhooks.publish(trx, [changeEvent('wake: host', 1, 'todos.created', 1)])
      expect(wakes, 'no wake before the commit').toEqual([])
    })
    expect(wakes).toEqual([{ inTransaction: false, pending: 1 }])
  })

  it("commits a publish on the adapter's own Kysely instance in one transaction, then wakes; and wakes for redeliveries and recoveries", async () => {
    const event = changeEvent('wake: autocommit', 1, 'todos.created', 1)
    await adapter.webhooks.publish(adapter.db, [event])
    expect(wakes).toEqual([{ inTransaction: false, pending: 1 }])
    // One transaction for the whole call: a failing insert takes the events before it along.
    const clash = changeEvent('wake: autocommit', 1, 'todos.created', 1)
    await expect(adapter.webhooks.publish(adapter.db, [changeEvent('wake: autocommit 2', 1, 'todos.created', 1), clash])).rejects.toThrow(/UNIQUE/)
    expect((await adapter.db.selectFrom('wfa_change_events').select('event_id').execute()).map((row) => row.event_id)).toEqual([event.id])
    expect(wakes).toHaveLength(1)
    const [claim] = await adapter.webhooks.claimDue(afterNow(0), afterNow(30_000), 10)
    const attempt = { number: 1, attempted_at: afterNow(1), status_code: 500, duration_ms: 3, response_body: null, error: null, succeeded: false }
    expect(await adapter.webhooks.finishAttempt(claim!, { attempt, next: { status: 'failed' } }, afterNow(2))).not.toBeNull()
    expect(await adapter.webhooks.recover(subscribed.id, afterNow(-1), afterNow(3))).toBe(1)
    expect(await adapter.webhooks.redeliver(subscribed.id, event.id, afterNow(4))).toBe(true)
    expect(wakes).toEqual([
      { inTransaction: false, pending: 1 },
      { inTransaction: false, pending: 1 },
      { inTransaction: false, pending: 1 },
    ])
  })

  it('stops waking a stopped subscription, and only that one', async () => {
    const other: string[] = []
    const stopOther = await adapter.webhooks.subscribeDue!(() => other.push('woken'))
    await stopOther()
    await adapter.writes.transaction((tx) => tx.recordEvent(changeEvent('wake: after stop', 1, 'todos.created', 1)))
    expect(other).toEqual([])
    expect(wakes).toHaveLength(1)
  })

  it('refuses a publish handle that is not a Kysely transaction or instance', async () => {
    await expect(adapter.webhooks.publish({}, [changeEvent('wake: bad handle', 1, 'todos.created', 1)])).rejects.toThrow(TypeError)
    await expect(adapter.webhooks.publish(null, [])).rejects.toThrow(/Kysely/)
  })
})
