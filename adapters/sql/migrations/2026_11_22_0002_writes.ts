import type { Kysely, Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * The write path (issue 4): the change-event outbox the webhook deliverer will read, and the
 * durable idempotency records of spec 4.4. Self-contained like every migration.
 */
export function writes(t: SqlColumnTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      const events = db.schema.createTable('wfa_change_events')
      await (
        t.dialect === 'sqlite'
          ? events.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          : events.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      )
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('resource_id', t.bigint, (c) => c.notNull())
        .addColumn('occurred_at', t.instant, (c) => c.notNull())
        .execute()
      // The outbox reads a company's events in id order from a cursor.
      await db.schema.createIndex('wfa_change_events_company_id').on('wfa_change_events').columns(['company_id', 'id']).execute()

      await db.schema
        .createTable('wfa_idempotency')
        // SHA-256 hex of the Authorization header and the Idempotency-Key; never the raw header.
        .addColumn('slot', 'text', (c) => c.primaryKey())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        // 'in_flight' | 'completed'
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('token', 'text', (c) => c.notNull())
        .addColumn('lease_until', t.instant, (c) => c.notNull())
        .addColumn('created_at', t.instant, (c) => c.notNull())
        .addColumn('completed_at', t.instant)
        .addColumn('response_status', 'integer')
        .addColumn('response_headers', t.json)
        .addColumn('response_body', 'text')
        .execute()
      // Purging expired records scans by age.
      await db.schema.createIndex('wfa_idempotency_created').on('wfa_idempotency').column('created_at').execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('wfa_idempotency').ifExists().execute()
      await db.schema.dropTable('wfa_change_events').ifExists().execute()
    },
  }
}
