import type { QueryDb } from './prepared.js'

/**
 * Announces, from inside the transaction that makes deliveries due (creates, redelivers or
 * recovers them), that the dispatcher has work — heard if and only if that transaction commits
 * (Postgres: `pg_notify`; SQLite: an in-process wake after the commit). Like `ChangeNotifier`.
 */
export type DueNotifier = (trx: QueryDb) => Promise<void>

/**
 * How a dialect wakes dispatchers: `notify` inside the transaction, `subscribe` for
 * `WebhookStore.subscribeDue`, and `close` to stop every subscription when the adapter closes.
 */
export interface DueSignal {
  notify: DueNotifier
  /** Calls `wake` soon after a transaction that made deliveries due commits. @returns a function that stops it. */
  subscribe(wake: () => void): Promise<() => Promise<void>>
  /** Stops every subscription still running (the adapter's `close`). */
  close(): Promise<void>
}
