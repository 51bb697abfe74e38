import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * One write transaction at a time on a single store — the SQLite adapter's one
 * better-sqlite3 connection, or the memory adapter's arrays — and reads held back while one is open.
 *
 * Why it is needed: a transaction spans several awaits. Two must not interleave, and a read
 * (the SQLite hot path calls better-sqlite3 directly, beside Kysely; memory reads the arrays)
 * must not run in the middle of one — it would see rows that may still roll back.
 *
 * Reads are synchronous once they start: a read that finds the gate open runs to the
 * end before anything else can begin a transaction, so it only waits while one is open.
 * Unlike a plain mutex, waiting reads run as soon as a transaction ends, before the next
 * queued one begins: a stream of writes cannot starve them.
 *
 * Code running inside the transaction (its async context) reads straight through: it is on
 * the same connection, sees its own writes, and waiting for itself would never end.
 *
 * Reads on other connections (the SQLite adapter's read workers, over WAL) need no gate: they
 * see committed data only. They only ask `inside()`, to leave a transaction's own reads here.
 */
export class TransactionGate {
  /** Settles when the last queued transaction has finished: the next one waits for it. */
  #tail: Promise<void> = Promise.resolve()
  /** The open transaction, if any: its identity (for its own reads) and its end. */
  #open: { owner: object; closed: Promise<void> } | null = null

  /** Runs `work` alone, after every earlier transaction; reads from elsewhere wait until it settles. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.inside()) {
      // Waiting for the gate from inside it would deadlock: fail loudly instead.
      throw new Error('A write transaction was started inside another one on the same adapter')
    }
    const previous = this.#tail
    let release!: () => void
    this.#tail = new Promise((resolve) => (release = resolve))
    await previous

    const owner = {}
    let close!: () => void
    this.#open = { owner, closed: new Promise((resolve) => (close = resolve)) }
    try {
      return await transactions.run({ owner, outer: transactions.getStore() }, work)
    } finally {
      this.#open = null
      // Resolved in this order, waiting reads run before the next transaction begins.
      close()
      release()
    }
  }

  /**
   * `undefined` when a read may run now (no transaction open, or the caller is inside it);
   * otherwise a promise that settles when the open transaction ends — then ask again.
   */
  readable(): Promise<void> | undefined {
    const open = this.#open
    if (open === null || runsInside(open.owner)) return undefined
    return open.closed
  }

  /**
   * Whether the caller runs inside the open transaction (its async context). Such a read must
   * use the transaction's own connection: another one (a SQLite read worker) would not see its writes.
   */
  inside(): boolean {
    return this.#open !== null && runsInside(this.#open.owner)
  }
}

/** The transactions the caller runs inside, innermost first (a transaction on one gate may run inside another's). */
interface Inside {
  owner: object
  outer: Inside | undefined
}

/**
 * One async context for every gate in the process, not one per gate. On Node 20 each
 * `AsyncLocalStorage` that has been used costs every promise created afterwards, in every
 * context, until it is disabled: a gate per adapter made a process that opens adapters one after
 * another (a test suite, a host opening one per tenant) slower with each one it had opened.
 */
const transactions = new AsyncLocalStorage<Inside>()

function runsInside(owner: object): boolean {
  for (let inside = transactions.getStore(); inside !== undefined; inside = inside.outer) {
    if (inside.owner === owner) return true
  }
  return false
}

/** Waits until `gate` lets a read run now. The SQLite hot path checks `gate.readable()` first to skip even this await. */
export async function untilReadable(gate: TransactionGate): Promise<void> {
  for (let wait = gate.readable(); wait !== undefined; wait = gate.readable()) await wait
}
