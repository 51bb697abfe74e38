import type { Kysely, Migration, CreateTableBuilder } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * Webhook delivery (issue 10): each change event gets its `evt_…` id and its rendered body,
 * and endpoints, deliveries (one per event and endpoint) and their attempts get tables.
 * Events recorded before this migration keep null in both columns: none has a delivery.
 * One column per ALTER TABLE: SQLite adds one at a time. Self-contained like every migration.
 */
export function webhooks(t: SqlColumnTypes): Migration {
  const withId = <N extends string>(table: CreateTableBuilder<N, never>) =>
    t.dialect === 'sqlite'
      ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      : table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_change_events').addColumn('event_id', 'text').execute()
      await db.schema.alterTable('wfa_change_events').addColumn('payload', 'text').execute()
      // Redelivery finds an event by its public id; unique, and null only on older rows.
      await db.schema.createIndex('wfa_change_events_event_id').unique().on('wfa_change_events').column('event_id').execute()

      await db.schema
        .createTable('wfa_webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('events', t.json, (c) => c.notNull())
        // 'enabled' | 'disabled'
        .addColumn('status', 'text', (c) => c.notNull())
        // 'manual' | 'gone' | 'failing', set while disabled
        .addColumn('disabled_reason', 'text')
        // Sealed by the plugin: never a plain secret.
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_expires_at', t.instant)
        .addColumn('failing_since', t.instant)
        .addColumn('created_at', t.instant, (c) => c.notNull())
        .addColumn('updated_at', t.instant, (c) => c.notNull())
        .execute()

      await withId(db.schema.createTable('wfa_webhook_deliveries'))
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        // wfa_change_events.id; no foreign key, so purging can go in batches in any order.
        .addColumn('change_event_id', t.bigint, (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        // 'pending' | 'delivered' | 'failed'
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', t.instant)
        // The current claim's token; null while no dispatcher holds the delivery.
        .addColumn('lease', 'text')
        .addColumn('created_at', t.instant, (c) => c.notNull())
        .addColumn('updated_at', t.instant, (c) => c.notNull())
        .execute()

      await withId(db.schema.createTable('wfa_webhook_attempts'))
        .addColumn('delivery_id', t.bigint, (c) => c.notNull())
        .addColumn('number', 'integer', (c) => c.notNull())
        .addColumn('attempted_at', t.instant, (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('response_body', 'text')
        .addColumn('error', 'text')
        .addColumn('succeeded', t.bool, (c) => c.notNull())
        .execute()

      const indexes: Array<[string, string, string[], boolean]> = [
        // The settings screen lists a company's endpoints oldest first.
        ['wfa_webhook_endpoints_company', 'wfa_webhook_endpoints', ['company_id', 'created_at'], false],
        // The dispatcher's claim: pending rows in due order.
        ['wfa_webhook_deliveries_due', 'wfa_webhook_deliveries', ['status', 'next_attempt_at'], false],
        // An endpoint's deliveries, newest first, from a cursor.
        ['wfa_webhook_deliveries_endpoint', 'wfa_webhook_deliveries', ['endpoint_id', 'id'], false],
        // Purging finished deliveries by age.
        ['wfa_webhook_deliveries_finished', 'wfa_webhook_deliveries', ['status', 'updated_at'], false],
        // Purging events no delivery needs any more.
        ['wfa_webhook_deliveries_change_event', 'wfa_webhook_deliveries', ['change_event_id'], false],
        // One delivery per event and endpoint: a redelivery reuses it.
        ['wfa_webhook_deliveries_endpoint_event', 'wfa_webhook_deliveries', ['endpoint_id', 'event_id'], true],
        ['wfa_webhook_attempts_delivery', 'wfa_webhook_attempts', ['delivery_id', 'number'], false],
      ]
      for (const [name, table, columns, unique] of indexes) {
        const index = db.schema.createIndex(name).on(table).columns(columns)
        await (unique ? index.unique() : index).execute()
      }
    },
    async down(db: Kysely<any>) {
      for (const table of ['wfa_webhook_attempts', 'wfa_webhook_deliveries', 'wfa_webhook_endpoints']) {
        await db.schema.dropTable(table).ifExists().execute()
      }
      await db.schema.dropIndex('wfa_change_events_event_id').ifExists().execute()
      await db.schema.alterTable('wfa_change_events').dropColumn('payload').execute()
      await db.schema.alterTable('wfa_change_events').dropColumn('event_id').execute()
    },
  }
}
