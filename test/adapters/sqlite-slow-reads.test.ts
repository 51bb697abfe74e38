import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SLOW_READ_TTL_MS, SlowReadRouter } from '../../adapters/sqlite/sqlite-slow-reads.js'

describe('SlowReadRouter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-05-01T00:00:00Z'))
  })
  afterEach(() => vi.useRealTimers())

  // Shapes and statements are compared by identity.
  const todosByDue = {}
  const usersByEmail = {}
  const page = {}
  const count = {}

  /** A statement seen slow in process, then twice on a worker: confirmed. */
  function confirm(router: SlowReadRouter, companyId: number, shape: object, ms = 200): void {
    router.observeInProcess(companyId, shape, page, ms)
    expect(router.offLoop(companyId, shape, page)).toBe(true)
    router.observeOffLoop(companyId, shape, page, ms)
    expect(router.offLoop(companyId, shape, page)).toBe(true)
    router.observeOffLoop(companyId, shape, page, ms)
  }

  it('times a shape\'s first run on a worker; fast there, it runs in process until a run on the loop looks slow; then every run of that statement goes to a worker, the others stay', () => {
    const router = new SlowReadRouter({ thresholdMs: 5 })
    // Never seen: on trial, on a worker, however expensive it may be.
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    router.observeOffLoop(1, todosByDue, page, 0.4)
    expect(router.offLoop(1, todosByDue, page)).toBe(false)
    expect(router.offLoop(1, todosByDue, count)).toBe(false)
    router.observeInProcess(1, todosByDue, page, 4.9)
    expect(router.offLoop(1, todosByDue, page)).toBe(false)
    router.observeInProcess(1, todosByDue, page, 190)
    // On probation: the other statement stays in process; every run of the probe goes to a
    // worker, so concurrent requests of a really slow query do not run it on the loop meanwhile.
    expect(router.offLoop(1, todosByDue, count)).toBe(false)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    // Another company with the same shape has its own trial.
    expect(router.offLoop(2, todosByDue, page)).toBe(true)
  })

  it('a new shape slow on its trial twice is confirmed without ever running on the loop', () => {
    const router = new SlowReadRouter({ thresholdMs: 5 })
    expect(router.offLoop(3, usersByEmail, page)).toBe(true)
    router.observeOffLoop(3, usersByEmail, page, 300)
    // Concurrent runs of the probe go to workers too; the other statement waits for a verdict in process.
    expect(router.offLoop(3, usersByEmail, page)).toBe(true)
    expect(router.offLoop(3, usersByEmail, count)).toBe(false)
    router.observeOffLoop(3, usersByEmail, page, 300)
    expect(router.offLoop(3, usersByEmail, count)).toBe(true)
    expect(router.offLoop(3, usersByEmail, page)).toBe(true)
  })

  it('a probe slow on its worker twice in a row confirms the shape: then all its statements go off the loop', () => {
    const router = new SlowReadRouter({ thresholdMs: 5 })
    router.observeInProcess(1, todosByDue, page, 400)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    router.observeOffLoop(1, todosByDue, page, 380)
    // Once is not enough: still on probation, the other statement stays in process.
    expect(router.offLoop(1, todosByDue, count)).toBe(false)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    router.observeOffLoop(1, todosByDue, page, 390)
    expect(router.offLoop(1, todosByDue, count)).toBe(true)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
  })

  it('a statement that only looked slow (a wait for a CPU) comes back in process after a fast probe', () => {
    const router = new SlowReadRouter({ thresholdMs: 5 })
    router.observeInProcess(2, usersByEmail, page, 30)
    expect(router.offLoop(2, usersByEmail, page)).toBe(true)
    router.observeOffLoop(2, usersByEmail, page, 0.2)
    expect(router.offLoop(2, usersByEmail, page)).toBe(false)
    expect(router.offLoop(2, usersByEmail, count)).toBe(false)
  })

  it('one slow worker measurement is not enough (a fresh worker\'s first statement, say): a fast next probe ends the probation', () => {
    const router = new SlowReadRouter({ thresholdMs: 5 })
    router.observeInProcess(2, usersByEmail, page, 12)
    expect(router.offLoop(2, usersByEmail, page)).toBe(true)
    router.observeOffLoop(2, usersByEmail, page, 197)
    expect(router.offLoop(2, usersByEmail, count)).toBe(false)
    expect(router.offLoop(2, usersByEmail, page)).toBe(true)
    router.observeOffLoop(2, usersByEmail, page, 0.1)
    expect(router.offLoop(2, usersByEmail, page)).toBe(false)
    expect(router.offLoop(2, usersByEmail, count)).toBe(false)
  })

  it('a probe the worker could not run ends the probation; a confirmed shape stays off the loop', () => {
    const router = new SlowReadRouter({ thresholdMs: 5 })
    router.observeInProcess(2, usersByEmail, page, 30)
    expect(router.offLoop(2, usersByEmail, page)).toBe(true)
    router.probeFailed(2, usersByEmail, page)
    expect(router.offLoop(2, usersByEmail, page)).toBe(false)

    confirm(router, 1, todosByDue)
    router.probeFailed(1, todosByDue, page)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
  })

  it('once confirmed, fast runs do not bring the shape back; it stays off the loop for the TTL after its last slow run', () => {
    const router = new SlowReadRouter({ thresholdMs: 5 })
    confirm(router, 1, todosByDue)
    router.observeOffLoop(1, todosByDue, page, 0.5)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    vi.advanceTimersByTime(SLOW_READ_TTL_MS - 1)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    router.observeOffLoop(1, todosByDue, count, 50)
    vi.advanceTimersByTime(SLOW_READ_TTL_MS - 1)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    vi.advanceTimersByTime(2)
    // Expired: tried again on a worker, and fast there, back in process.
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    router.observeOffLoop(1, todosByDue, page, 0.5)
    expect(router.offLoop(1, todosByDue, page)).toBe(false)
  })

  it('moves all of a company’s reads once enough of its shapes are confirmed slow', () => {
    const router = new SlowReadRouter({ thresholdMs: 5, shapesPerCompany: 2 })
    const other = {}
    confirm(router, 7, todosByDue)
    // A new shape is tried on a worker, and being fast there stays in process.
    expect(router.offLoop(7, other, page)).toBe(true)
    router.observeOffLoop(7, other, page, 0.1)
    expect(router.offLoop(7, other, page)).toBe(false)
    confirm(router, 7, usersByEmail)
    expect(router.offLoop(7, other, page)).toBe(true)
    // Company 8's shape, fast on its trial, stays in process.
    expect(router.offLoop(8, other, page)).toBe(true)
    router.observeOffLoop(8, other, page, 0.1)
    expect(router.offLoop(8, other, page)).toBe(false)
  })

  it('holds at most maxMarks marks over all companies: the least recently seen company is forgotten first, and its shapes are tried again', () => {
    const router = new SlowReadRouter({ thresholdMs: 5, maxMarks: 6 })
    const shapes = [{}, {}, {}]
    /** Each shape tried on a worker once and fast there: in process from then on. */
    const learn = (companyId: number) => {
      for (const shape of shapes) {
        expect(router.offLoop(companyId, shape, page)).toBe(true)
        router.observeOffLoop(companyId, shape, page, 0.1)
      }
    }
    learn(1)
    learn(2)
    expect(router.marks).toBe(6)
    // Company 1 is seen again, so company 2 is now the least recently seen.
    expect(router.offLoop(1, shapes[0] as object, page)).toBe(false)
    learn(3)
    expect(router.marks).toBe(6)
    expect(router.companies).toBe(2)
    // Company 1 kept its verdicts; company 2's were forgotten: its shape is on trial again.
    expect(router.offLoop(1, shapes[1] as object, page)).toBe(false)
    expect(router.offLoop(2, shapes[1] as object, page)).toBe(true)
    expect(router.marks).toBeLessThanOrEqual(6)
  })

  it('one company alone over the bound drops its expired marks, never the one it just set', () => {
    const router = new SlowReadRouter({ thresholdMs: 5, maxMarks: 2, ttlMs: 1_000 })
    const [a, b, c] = [{}, {}, {}]
    expect(router.offLoop(1, a, page)).toBe(true)
    expect(router.offLoop(1, b, page)).toBe(true)
    vi.setSystemTime(Date.now() + 1_000)
    expect(router.offLoop(1, c, page)).toBe(true)
    expect(router.marks).toBe(1)
    router.observeOffLoop(1, c, page, 0.1)
    expect(router.offLoop(1, c, page)).toBe(false)
  })

  it('with a threshold of 0, every read goes off the loop', () => {
    const router = new SlowReadRouter({ thresholdMs: 0 })
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    router.observeOffLoop(1, todosByDue, page, 0)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    expect(router.offLoop(2, {}, count)).toBe(true)
  })
})
