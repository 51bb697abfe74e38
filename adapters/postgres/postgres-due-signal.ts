import { sql } from 'kysely'
import type * as pg from 'pg'
import type { DueSignal } from '../sql/due-signal.js'
import type { QueryDb } from '../sql/prepared.js'
import { startPostgresListener } from './postgres-listener.js'

/** Postgres refuses a `pg_notify` channel name of 64 bytes or more (NAMEDATALEN). */
const MAX_CHANNEL_LENGTH = 63

/**
 * The LISTEN channel of due deliveries; one per schema, like `invalidationChannel`. A name too
 * long is cut: two schemas sharing a long prefix then wake each other's dispatchers, which
 * costs an empty claim and nothing else.
 */
export function webhookChannel(schema: string | undefined): string {
  return (schema === undefined ? 'wfa_webhooks' : `wfa_webhooks_${schema}`).slice(0, MAX_CHANNEL_LENGTH)
}

/**
 * Wakes webhook dispatchers on every instance sharing the database: `pg_notify` in the
 * transaction that made deliveries due (so it is heard at commit, never after a rollback), and
 * LISTEN on a connection of each subscription's own (a pool's would be pinned). A subscription
 * whose connection is lost listens again with backoff and then wakes its dispatcher, since
 * notifications sent meanwhile were missed. `close` ends every subscription still open.
 */
export class PostgresDueSignal implements DueSignal {
  readonly #subscriptions = new Set<() => Promise<void>>()

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly channel: string,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  readonly notify = async (trx: QueryDb): Promise<void> => {
    // One notification per transaction reaches listeners: Postgres folds identical ones.
    await sql`select pg_notify(${this.channel}, '')`.execute(trx)
  }

  async subscribe(wake: () => void): Promise<() => Promise<void>> {
    const listener = startPostgresListener({
      connection: this.connection,
      channel: this.channel,
      onMessage: () => wake(),
      onReconnect: wake,
      onError: this.onError,
    })
    const stop = async () => {
      this.#subscriptions.delete(stop)
      await listener.stop()
    }
    // Registered before the first LISTEN, so a `close` meanwhile ends this one too.
    this.#subscriptions.add(stop)
    try {
      await listener.ready
    } catch (error) {
      this.#subscriptions.delete(stop)
      throw error
    }
    return stop
  }

  async close(): Promise<void> {
    await Promise.all([...this.#subscriptions].map((stop) => stop()))
  }
}
