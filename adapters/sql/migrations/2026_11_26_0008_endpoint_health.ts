import { sql, type Kysely, type Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * Issue 21: each endpoint's health, shared by every instance — failed attempts in a row and
 * the circuit breaker (`paused_until`, and the pause it last used, doubled by each failed
 * probe). Two partial indexes serve the fair claim: an endpoint's due deliveries in due order,
 * and the deliveries under a lease (attempts in flight), which are few. One column per ALTER
 * TABLE: SQLite adds one at a time. Self-contained like every migration.
 */
export function endpointHealth(t: SqlColumnTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_webhook_endpoints').addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0)).execute()
      await db.schema.alterTable('wfa_webhook_endpoints').addColumn('paused_until', t.instant).execute()
      await db.schema.alterTable('wfa_webhook_endpoints').addColumn('pause_ms', 'integer', (c) => c.notNull().defaultTo(0)).execute()
      await db.schema
        .createIndex('wfa_webhook_deliveries_endpoint_due')
        .on('wfa_webhook_deliveries')
        .columns(['endpoint_id', 'next_attempt_at', 'id'])
        .where(sql.ref('status'), '=', 'pending')
        .execute()
      await db.schema
        .createIndex('wfa_webhook_deliveries_leased')
        .on('wfa_webhook_deliveries')
        .columns(['endpoint_id', 'next_attempt_at'])
        .where(sql.ref('lease'), 'is not', null)
        .execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.dropIndex('wfa_webhook_deliveries_leased').ifExists().execute()
      await db.schema.dropIndex('wfa_webhook_deliveries_endpoint_due').ifExists().execute()
      for (const column of ['pause_ms', 'paused_until', 'consecutive_failures']) {
        await db.schema.alterTable('wfa_webhook_endpoints').dropColumn(column).execute()
      }
    },
  }
}
