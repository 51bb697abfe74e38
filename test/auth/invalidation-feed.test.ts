import { afterEach, describe, expect, it } from 'vitest'
import type { CacheInvalidation, InvalidationFeed } from '../../src/ports/invalidation-feed.js'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'

/** A feed the test drives by hand: what an adapter's LISTEN/NOTIFY or pub/sub would deliver. */
class ManualFeed implements InvalidationFeed {
  listeners: Array<{ onChange(change: CacheInvalidation): void; onReset(): void }> = []
  stopped = 0
  async subscribe(onChange: (change: CacheInvalidation) => void, onReset: () => void) {
    const listener = { onChange, onReset }
    this.listeners.push(listener)
    return async () => {
      this.listeners = this.listeners.filter((l) => l !== listener)
      this.stopped++
    }
  }
  change(change: CacheInvalidation): void {
    for (const listener of this.listeners) listener.onChange(change)
  }
  reset(): void {
    for (const listener of this.listeners) listener.onReset()
  }
}

describe.each(READ_ADAPTERS)('the invalidation feed ($name)', (adapter) => {
  let t: TestApp
  let feed: ManualFeed
  afterEach(() => t.close())

  const open = async () => {
    feed = new ManualFeed()
    // Long caches: without the feed, a change made behind the plugin's back would go unseen for 30 s.
    t = await build({ adapter, options: { invalidations: feed, keyCache: { ttlMs: 30_000 }, moduleCacheTtlMs: 60_000 } })
  }

  it('a key changed elsewhere is refused as soon as its invalidation arrives', async () => {
    await open()
    const created = await t.createKey(1, ['users:read'])
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    // Revoked behind this instance's back (another instance, the CLI): still cached here.
    await t.adapter.keyStore.setState(created.info.key_id, 'revoked', ['active'])
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(200)
    feed.change({ kind: 'key', keyId: created.info.key_id })
    expect((await t.get('/v1/users', created.key)).statusCode).toBe(401)
  })

  it('a module switched elsewhere takes effect as soon as its invalidation arrives', async () => {
    await open()
    const key = await t.keyFor(1, ['todos:read'])
    expect((await t.get('/v1/todos', key)).statusCode).toBe(200)
    await t.adapter.modules.setActive(1, 'todo', false)
    expect((await t.get('/v1/todos', key)).statusCode).toBe(200)
    feed.change({ kind: 'module', companyId: 1, module: 'todo' })
    expect((await t.get('/v1/todos', key)).statusCode).toBe(403)
  })

  it('after a gap in the feed (reset), every cached key and module is forgotten', async () => {
    await open()
    const created = await t.createKey(1, ['todos:read'])
    expect((await t.get('/v1/todos', created.key)).statusCode).toBe(200)
    await t.adapter.modules.setActive(1, 'todo', false)
    feed.reset()
    expect((await t.get('/v1/todos', created.key)).statusCode).toBe(403)
    await t.adapter.keyStore.setState(created.info.key_id, 'disabled', ['active'])
    feed.reset()
    expect((await t.get('/v1/todos', created.key)).statusCode).toBe(401)
  })

  it('subscribes once the app is ready and stops when it closes', async () => {
    await open()
    expect(feed.listeners).toHaveLength(1)
    await t.app.close()
    expect(feed.listeners).toHaveLength(0)
    expect(feed.stopped).toBe(1)
  })
})
