import type { DueSignal } from '../sql/due-signal.js'
import type { QueryDb } from '../sql/prepared.js'
import type { SqlTransactor } from '../sql/sql-transactor.js'
import type { SqliteDatabase } from './sqlite-database.js'

/**
 * Wakes this process's webhook dispatchers after a commit that made deliveries due. SQLite
 * has no NOTIFY, and a file shared by several processes is the host's business: other
 * processes find the deliveries by polling.
 *
 * `notify` runs inside the transaction, so it only marks it; the adapter's transactor, wrapped
 * by `transactor()`, wakes the subscribers once that transaction has committed (never after a
 * rollback). Outside any transaction (a `publish` on the plain `Kysely` instance) the rows are
 * already committed and the wake is immediate. A transaction the host opened by other means
 * than the adapter's `transaction` is not seen committing: its deliveries wait for a poll.
 */
export class SqliteDueSignal implements DueSignal {
  readonly #listeners = new Set<() => void>()
  /** Handles of open transactions that made deliveries due. */
  readonly #due = new WeakSet<object>()

  constructor(private readonly database: SqliteDatabase) {}

  readonly notify = async (trx: QueryDb): Promise<void> => {
    if (this.database.inTransaction) this.#due.add(trx)
    else this.#wake()
  }

  /** `inner`, waking the subscribers after each commit of a transaction that called `notify`. */
  transactor(inner: SqlTransactor): SqlTransactor {
    return async (work) => {
      let handle: QueryDb | undefined
      const result = await inner((trx) => {
        handle = trx
        return work(trx)
      })
      if (handle !== undefined && this.#due.delete(handle)) this.#wake()
      return result
    }
  }

  async subscribe(wake: () => void): Promise<() => Promise<void>> {
    // Wrapped, so one function subscribed twice is two subscriptions.
    const listener = () => wake()
    this.#listeners.add(listener)
    return async () => {
      this.#listeners.delete(listener)
    }
  }

  async close(): Promise<void> {
    this.#listeners.clear()
  }

  #wake(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener()
      } catch {
        // A dispatcher's failure to wake must not fail the write that committed.
      }
    }
  }
}
