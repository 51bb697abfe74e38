import type { CacheInvalidation } from '../../src/ports/invalidation-feed.js'
import type { QueryDb } from './prepared.js'

/**
 * Announces a key or module change from inside the transaction that makes it, so the
 * announcement is delivered if and only if the change commits (Postgres: `pg_notify`).
 */
export type ChangeNotifier = (trx: QueryDb, change: CacheInvalidation) => Promise<void>
