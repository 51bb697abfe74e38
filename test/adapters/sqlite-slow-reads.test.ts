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

  it('keeps reads in process until one is seen slow; only that statement then goes to a worker, once, as a probe', () => {
    const router = new SlowReadRouter({ thresholdMs: 5 })
    expect(router.offLoop(1, todosByDue, page)).toBe(false)
    router.observeInProcess(1, todosByDue, page, 4.9)
    expect(router.offLoop(1, todosByDue, page)).toBe(false)
    router.observeInProcess(1, todosByDue, page, 190)
    // On probation: the other statement stays in process, and one probe runs at a time.
    expect(router.offLoop(1, todosByDue, count)).toBe(false)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    expect(router.offLoop(1, todosByDue, page)).toBe(false)
    // Another company with the same shape, or the same company with another shape, is untouched.
    expect(router.offLoop(2, todosByDue, page)).toBe(false)
    expect(router.offLoop(1, usersByEmail, page)).toBe(false)
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
    expect(router.offLoop(1, todosByDue, page)).toBe(false)
  })

  it('moves all of a company’s reads once enough of its shapes are confirmed slow', () => {
    const router = new SlowReadRouter({ thresholdMs: 5, shapesPerCompany: 2 })
    confirm(router, 7, todosByDue)
    expect(router.offLoop(7, {}, page)).toBe(false)
    confirm(router, 7, usersByEmail)
    expect(router.offLoop(7, {}, page)).toBe(true)
    expect(router.offLoop(8, {}, page)).toBe(false)
  })

  it('with a threshold of 0, every read goes off the loop', () => {
    const router = new SlowReadRouter({ thresholdMs: 0 })
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    router.observeOffLoop(1, todosByDue, page, 0)
    expect(router.offLoop(1, todosByDue, page)).toBe(true)
    expect(router.offLoop(2, {}, count)).toBe(true)
  })
})
