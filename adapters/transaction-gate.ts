/**
 * Serializes write transactions on a single connection (better-sqlite3) or a single store
 * (memory), and holds reads back while one is open, so a read never sees a write that might
 * still roll back. Readers pay nothing when no transaction is open: `idle()` returns
 * `undefined` and the read runs without an extra await.
 */
export class TransactionGate {
  #tail: Promise<unknown> = Promise.resolve()
  #pending = 0

  /** Runs `work` after every earlier exclusive section has finished, and alone. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#pending++
    const run = this.#tail.then(work)
    const settled = run.then(
      () => {},
      () => {},
    )
    this.#tail = settled
    void settled.then(() => {
      this.#pending--
    })
    return run
  }

  /** `undefined` when no exclusive section is queued or running; otherwise a promise of when none is. */
  idle(): Promise<void> | undefined {
    if (this.#pending === 0) return undefined
    return this.#tail.then(() => (this.#pending === 0 ? undefined : this.idle()))
  }
}
