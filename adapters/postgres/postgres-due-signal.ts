import { sql } from 'kysely'
import pg from 'pg'
import type { DueSignal } from '../sql/due-signal.js'
import type { QueryDb } from '../sql/prepared.js'

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

/** Waits after a lost connection before listening again: 100 ms, doubling, at most 2 s. */
const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 2_000

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
    let client: pg.Client | undefined
    let stopped = false
    let retry: NodeJS.Timeout | undefined
    let delay = RECONNECT_MIN_MS

    const listen = async (): Promise<void> => {
      const next = new pg.Client(this.connection)
      next.on('notification', (message) => {
        if (message.channel === this.channel) wake()
      })
      next.on('error', (error) => {
        this.onError(error)
        lost(next)
      })
      next.on('end', () => lost(next))
      try {
        await next.connect()
        await next.query(`listen ${pg.escapeIdentifier(this.channel)}`)
      } catch (error) {
        await next.end().catch(() => {})
        throw error
      }
      if (stopped) {
        await next.end().catch(() => {})
        return
      }
      client = next
      delay = RECONNECT_MIN_MS
    }

    const lost = (which: pg.Client) => {
      if (stopped || which !== client) return
      client = undefined
      which.end().catch(() => {})
      schedule()
    }

    const schedule = () => {
      if (stopped || retry !== undefined) return
      retry = setTimeout(() => {
        retry = undefined
        listen().then(
          () => {
            if (!stopped) wake()
          },
          (error: unknown) => {
            this.onError(error)
            delay = Math.min(delay * 2, RECONNECT_MAX_MS)
            schedule()
          },
        )
      }, delay)
      retry.unref()
    }

    const stop = async () => {
      if (stopped) return
      stopped = true
      this.#subscriptions.delete(stop)
      clearTimeout(retry)
      const current = client
      client = undefined
      await current?.end().catch(() => {})
    }

    // Registered before the first LISTEN, so a `close` meanwhile ends this one too.
    this.#subscriptions.add(stop)
    try {
      await listen()
    } catch (error) {
      this.#subscriptions.delete(stop)
      stopped = true
      throw error
    }
    return stop
  }

  async close(): Promise<void> {
    await Promise.all([...this.#subscriptions].map((stop) => stop()))
  }
}
