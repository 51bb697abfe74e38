import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { AttemptDeadlines } from '../../src/webhooks/attempt-deadline.js'

const never = <T>() => new Promise<T>(() => {})

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

it('settles like the work when it answers first, and a cleared deadline leaves nothing live', async () => {
  const deadlines = new AttemptDeadlines(new AbortController().signal)
  const deadline = deadlines.start(1_000)
  expect(deadlines.live).toBe(1)
  await expect(deadline.bound(Promise.resolve('answered'))).resolves.toBe('answered')
  const failing = deadlines.start(1_000)
  await expect(failing.bound(Promise.reject(new Error('refused')))).rejects.toThrow('refused')
  deadline.clear()
  failing.clear()
  expect(deadlines.live).toBe(0)
  expect(vi.getTimerCount(), 'timers left behind').toBe(0)
  await vi.advanceTimersByTimeAsync(2_000)
  expect(deadline.signal.aborted, 'a cleared deadline never fires').toBe(false)
})

it('aborts the signal and rejects at the timeout, even for work that ignores the signal', async () => {
  const deadlines = new AttemptDeadlines(new AbortController().signal)
  const deadline = deadlines.start(1_000)
  const bound = deadline.bound(never<string>())
  const settled = bound.then(
    () => 'resolved',
    (error: unknown) => error,
  )
  await vi.advanceTimersByTimeAsync(999)
  expect(deadline.signal.aborted).toBe(false)
  await vi.advanceTimersByTimeAsync(1)
  expect(deadline.signal.aborted).toBe(true)
  const error = (await settled) as DOMException
  expect(error.name).toBe('TimeoutError')
  expect(error.message).toBe('no response within 1000 ms')
  expect(deadline.signal.reason).toBe(error)
  deadline.clear()
  expect(deadlines.live).toBe(0)
})

it('ends every live attempt at shutdown with its reason, and a deadline started after it at once', async () => {
  const shutdown = new AbortController()
  const deadlines = new AttemptDeadlines(shutdown.signal)
  const done = deadlines.start(1_000)
  done.clear()
  const live = [deadlines.start(1_000), deadlines.start(5_000)]
  const bound = live.map((deadline) => deadline.bound(never<void>()).catch((error: unknown) => error))
  const reason = new Error('shutting down')
  shutdown.abort(reason)
  expect(await Promise.all(bound)).toEqual([reason, reason])
  expect(live.map((deadline) => deadline.signal.reason)).toEqual([reason, reason])
  expect(done.signal.aborted, 'an attempt already over is left alone').toBe(false)
  const late = deadlines.start(1_000)
  expect(late.signal.aborted).toBe(true)
  // A late failure of the work it no longer waits for is handled, not an unhandled rejection.
  await expect(late.bound(Promise.reject(new Error('late')))).rejects.toBe(reason)
  for (const deadline of [...live, late]) deadline.clear()
  expect(deadlines.live).toBe(0)
})
