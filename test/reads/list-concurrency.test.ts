import { afterEach, describe, expect, it, vi } from 'vitest'
import { CompanyReadLimiter, DEFAULT_LIST_READS_PER_COMPANY, TooManyListReads } from '../../src/api/company-read-limiter.js'
import { StorageUnavailable } from '../../src/ports/errors.js'
import type { Storage } from '../../src/ports/storage.js'
import { build, type TestApp } from '../helpers/build.js'

/** A promise with its resolve function, to hold a storage call until the test lets it go. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

/** Lets every pending promise callback run (no timers involved). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * `storage` whose to-do lists of `blocked` wait for the test: each call is recorded, in order,
 * with the gate that releases it. Every other company's reads pass straight through.
 */
function blockingStorage(storage: Storage, blocked: number) {
  const calls: Array<{ companyId: number; gate: ReturnType<typeof gate> }> = []
  const todos = storage.todos
  const wrapped: Storage = Object.create(storage) as Storage
  Object.defineProperty(wrapped, 'todos', {
    value: {
      get: todos.get.bind(todos),
      async list(...args: Parameters<typeof todos.list>) {
        const [companyId] = args
        const held = gate()
        calls.push({ companyId, gate: held })
        if (companyId === blocked) await held.promise
        return todos.list(...args)
      },
    },
  })
  return { storage: wrapped, calls }
}

describe('CompanyReadLimiter', () => {
  it('runs up to perCompany reads of a company at once, queues the rest in arrival order, and never holds another company', async () => {
    const limiter = new CompanyReadLimiter({ perCompany: 2, queuePerCompany: 4 })
    const started: string[] = []
    const gates = new Map<string, ReturnType<typeof gate>>()
    const read = (companyId: number, name: string) =>
      limiter.run(companyId, async () => {
        started.push(name)
        const held = gate()
        gates.set(name, held)
        await held.promise
        return name
      })
    const a = ['a1', 'a2', 'a3', 'a4'].map((name) => read(1, name))
    const b = read(2, 'b1')
    await settle()
    expect(started).toEqual(['a1', 'a2', 'b1'])
    expect(limiter.load(1)).toEqual({ running: 2, waiting: 2 })
    gates.get('b1')?.open()
    await expect(b).resolves.toBe('b1')
    expect(limiter.load(2)).toEqual({ running: 0, waiting: 0 })
    // A slot freed by a2 goes to a3, the oldest waiting, then a4.
    gates.get('a2')?.open()
    await vi.waitFor(() => expect(started).toEqual(['a1', 'a2', 'b1', 'a3']))
    expect(limiter.load(1)).toEqual({ running: 2, waiting: 1 })
    gates.get('a1')?.open()
    await vi.waitFor(() => expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']))
    gates.get('a3')?.open()
    gates.get('a4')?.open()
    await expect(Promise.all(a)).resolves.toEqual(['a1', 'a2', 'a3', 'a4'])
    expect(limiter.load(1)).toEqual({ running: 0, waiting: 0 })
  })

  it('refuses a read beyond the queue with TooManyListReads (429, Retry-After), without running it; a failed read frees its slot', async () => {
    const limiter = new CompanyReadLimiter({ perCompany: 1, queuePerCompany: 1 })
    const held = gate()
    const first = limiter.run(1, () => held.promise)
    const second = limiter.run(1, async () => 'second')
    let ran = false
    const third = limiter.run(1, async () => {
      ran = true
    })
    await expect(third).rejects.toBeInstanceOf(TooManyListReads)
    await expect(third).rejects.toMatchObject({ statusCode: 429, retryAfterSeconds: 1 })
    expect(ran).toBe(false)
    held.open()
    await first
    await expect(second).resolves.toBe('second')
    await expect(limiter.run(1, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(limiter.load(1)).toEqual({ running: 0, waiting: 0 })
    await expect(limiter.run(1, async () => 'after')).resolves.toBe('after')
  })

  it('an outage stays a 503: a StorageUnavailable gives the waiting reads the same error at once, and a full queue answers it instead of 429 while it is fresh', async () => {
    const limiter = new CompanyReadLimiter({ perCompany: 1, queuePerCompany: 1 })
    const held = gate()
    const down = new StorageUnavailable('database unreachable')
    const first = limiter.run(1, async () => {
      await held.promise
      throw down
    })
    let waiterRan = false
    const waiting = limiter.run(1, async () => {
      waiterRan = true
    })
    // Before any failure, a full queue is the company's own concurrency: 429.
    await expect(limiter.run(1, async () => 'never')).rejects.toBeInstanceOf(TooManyListReads)
    held.open()
    await expect(first).rejects.toBe(down)
    await expect(waiting).rejects.toBe(down)
    expect(waiterRan).toBe(false)
    expect(limiter.load(1)).toEqual({ running: 0, waiting: 0 })
    // Right after the failure, a full queue answers the storage's 503, not 429.
    const hold = gate()
    const running = limiter.run(1, () => hold.promise)
    const queued = limiter.run(1, async () => 'queued')
    await expect(limiter.run(1, async () => 'never')).rejects.toBe(down)
    hold.open()
    await running
    await expect(queued).resolves.toBe('queued')
  })
})

describe('list reads beyond a company’s cap queue, and another company’s read passes them (over HTTP)', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it(`company 1's lists beyond ${DEFAULT_LIST_READS_PER_COMPANY} in flight wait without touching storage; company 2's list completes first; all of company 1's then answer 200`, async () => {
    let calls: ReturnType<typeof blockingStorage>['calls'] = []
    t = await build({
      options: (adapter) => {
        const blocking = blockingStorage(adapter.storage, 1)
        calls = blocking.calls
        return { storage: blocking.storage }
      },
    })
    const [key1, key2] = [await t.keyFor(1), await t.keyFor(2)]
    const company1 = Array.from({ length: DEFAULT_LIST_READS_PER_COMPANY + 2 }, () => t!.get('/v1/todos', key1))
    await settle()
    // Only the cap reached storage; the rest wait above the port.
    expect(calls.map((call) => call.companyId)).toEqual(Array(DEFAULT_LIST_READS_PER_COMPANY).fill(1))

    const order: string[] = []
    company1.forEach((response, index) => void response.then(() => order.push(`company 1 #${index}`)))
    const company2 = await t.get('/v1/todos', key2)
    order.push('company 2')
    expect(company2.statusCode).toBe(200)
    expect(order).toEqual(['company 2'])

    // Releasing company 1's reads one by one lets its queued ones through, in turn.
    const ofCompany1 = () => calls.filter((call) => call.companyId === 1)
    for (let released = 0; released < company1.length; released++) {
      await vi.waitFor(() => expect(ofCompany1().length).toBeGreaterThan(released))
      ofCompany1()[released]?.gate.open()
    }
    const answers = await Promise.all(company1)
    expect(answers.map((response) => response.statusCode)).toEqual(Array(company1.length).fill(200))
    expect(calls.filter((call) => call.companyId === 1)).toHaveLength(company1.length)
  })

  it('a list beyond the cap and the queue gets 429 rate_limited with Retry-After in the error envelope; by-id reads are not capped', async () => {
    let calls: ReturnType<typeof blockingStorage>['calls'] = []
    t = await build({
      options: (adapter) => {
        const blocking = blockingStorage(adapter.storage, 1)
        calls = blocking.calls
        return { storage: blocking.storage, listConcurrency: { perCompany: 1, queuePerCompany: 1 } }
      },
    })
    const key1 = await t.keyFor(1)
    const running = t.get('/v1/todos', key1)
    const queued = t.get('/v1/todos', key1)
    await settle()
    const refused = await t.get('/v1/todos?status=open', key1)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining('retry after 1 s'), status: 429 } })
    const { rows } = await t.adapter.storage.todos.list(1, {}, { offset: 0, limit: 1 })
    const byId = await t.get(`/v1/todos/${String(rows[0]?.id)}`, key1)
    expect(byId.statusCode).toBe(200)
    calls[0]?.gate.open()
    await vi.waitFor(() => expect(calls).toHaveLength(2))
    calls[1]?.gate.open()
    expect((await running).statusCode).toBe(200)
    expect((await queued).statusCode).toBe(200)
  })

  it('listConcurrency: false turns the cap off; bad values fail registration naming the option', async () => {
    let calls: ReturnType<typeof blockingStorage>['calls'] = []
    t = await build({
      options: (adapter) => {
        const blocking = blockingStorage(adapter.storage, 1)
        calls = blocking.calls
        return { storage: blocking.storage, listConcurrency: false }
      },
    })
    const key1 = await t.keyFor(1)
    const lists = Array.from({ length: 5 }, () => t!.get('/v1/todos', key1))
    await settle()
    expect(calls).toHaveLength(5)
    for (const call of calls) call.gate.open()
    expect((await Promise.all(lists)).map((response) => response.statusCode)).toEqual([200, 200, 200, 200, 200])
    await t.close()
    t = undefined
    await expect(build({ options: { listConcurrency: { perCompany: 0 } } })).rejects.toThrow('option "listConcurrency.perCompany" must be an integer from 1 to 10000')
    await expect(build({ options: { listConcurrency: { perCompnay: 2 } as never } })).rejects.toThrow('did you mean "listConcurrency.perCompany"?')
  })
})
