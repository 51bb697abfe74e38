import { sql } from 'kysely'
import type * as pg from 'pg'
import type { CacheInvalidation, InvalidationFeed } from '../../src/ports/invalidation-feed.js'
import type { ChangeNotifier } from '../sql/change-notifier.js'
import { startPostgresListener } from './postgres-listener.js'

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
    const listener = startPostgresListener({
      connection: this.connection,
      channel: this.channel,
      onMessage: (payload) => {
        const change = parseChange(payload)
        if (change !== null) onChange(change)
      },
      onReconnect: onReset,
      onError: this.onError,
    })
    await listener.ready
    return listener.stop
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
