import { sql } from 'kysely'
import pg from 'pg'
import type { CacheInvalidation, InvalidationFeed } from '../../src/ports/invalidation-feed.js'
import type { ChangeNotifier } from '../sql/change-notifier.js'

/** The LISTEN channel; one per schema, so two APIs in one database never hear each other. */
export function invalidationChannel(schema: string | undefined): string {
  return schema === undefined ? 'wfa_invalidations' : `wfa_invalidations_${schema}`
}

/** `pg_notify` in the change's own transaction: delivered at commit, never for a rollback. */
export function postgresNotifier(channel: string): ChangeNotifier {
  return async (trx, change) => {
    await sql`select pg_notify(${channel}, ${JSON.stringify(change)})`.execute(trx)
  }
}

/** Waits after a lost connection before listening again: 100 ms, doubling, at most 2 s. */
const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 2_000

/**
 * The `InvalidationFeed` over LISTEN/NOTIFY, on a connection of its own (not one of the pool's,
 * which a LISTEN would pin). When the connection is lost it listens again with backoff and then
 * reports a reset: notifications sent meanwhile were missed, so every cache must be dropped.
 */
export class PostgresInvalidationFeed implements InvalidationFeed {
  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly channel: string,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async subscribe(onChange: (change: CacheInvalidation) => void, onReset: () => void): Promise<() => Promise<void>> {
    let client: pg.Client | undefined
    let stopped = false
    let retry: NodeJS.Timeout | undefined
    let delay = RECONNECT_MIN_MS

    const listen = async (): Promise<void> => {
      const next = new pg.Client(this.connection)
      next.on('notification', (message) => {
        if (message.channel !== this.channel || message.payload === undefined) return
        const change = parseChange(message.payload)
        if (change !== null) onChange(change)
      })
      next.on('error', (error) => {
        this.onError(error)
        lost(next)
      })
      next.on('end', () => lost(next))
      await next.connect()
      await next.query(`listen ${pg.escapeIdentifier(this.channel)}`)
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
            if (!stopped) onReset()
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

    await listen()
    return async () => {
      stopped = true
      clearTimeout(retry)
      const current = client
      client = undefined
      await current?.end().catch(() => {})
    }
  }
}

function parseChange(payload: string): CacheInvalidation | null {
  try {
    const value = JSON.parse(payload) as Partial<CacheInvalidation>
    if (value.kind === 'key' && typeof value.keyId === 'string') return { kind: 'key', keyId: value.keyId }
    if (value.kind === 'module' && typeof value.companyId === 'number' && typeof value.module === 'string') {
      return { kind: 'module', companyId: value.companyId, module: value.module }
    }
  } catch {
    // A payload not of ours: ignore it.
  }
  return null
}
