import { AsyncLocalStorage } from 'node:async_hooks'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { TransactionGate, untilReadable } from '../../adapters/transaction-gate.js'

describe('TransactionGate', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('holds reads from elsewhere while a transaction is open, and lets its own reads through', async () => {
    const gate = new TransactionGate()
    const order: string[] = []
    let inside: boolean | undefined
    let release!: () => void
    const transaction = gate.exclusive(async () => {
      inside = gate.inside()
      expect(gate.readable()).toBeUndefined()
      await new Promise<void>((resolve) => (release = resolve))
      order.push('transaction')
    })
    await vi.waitFor(() => expect(inside).toBe(true))
    expect(gate.inside()).toBe(false)
    const read = untilReadable(gate).then(() => order.push('read'))
    release()
    await Promise.all([transaction, read])
    expect(order).toEqual(['transaction', 'read'])
  })

  it("knows a gate's transaction from inside another gate's transaction run within it", async () => {
    const outer = new TransactionGate()
    const inner = new TransactionGate()
    const seen: Record<string, boolean> = {}
    await outer.exclusive(async () => {
      await inner.exclusive(async () => {
        seen.outer = outer.inside()
        seen.inner = inner.inside()
        seen.outerReadable = outer.readable() === undefined
      })
      seen.innerAfter = inner.inside()
    })
    expect(seen).toEqual({ outer: true, inner: true, outerReadable: true, innerAfter: false })
    // A transaction on the same gate from inside it would wait for itself: refused instead.
    await expect(outer.exclusive(() => outer.exclusive(async () => {}))).rejects.toThrow(/inside another one on the same adapter/)
  })

  // On Node 20 every AsyncLocalStorage in use costs each promise created afterwards: one per gate
  // made a process slower with every adapter it had opened (the SQLite conformance run took 2.5 ×).
  it('runs the transactions of every gate in one async context, however many gates there are', async () => {
    const run = vi.spyOn(AsyncLocalStorage.prototype, 'run')
    for (let i = 0; i < 5; i++) {
      const gate = new TransactionGate()
      await gate.exclusive(async () => {})
    }
    expect(run).toHaveBeenCalledTimes(5)
    expect(new Set(run.mock.contexts).size).toBe(1)
  })
})
