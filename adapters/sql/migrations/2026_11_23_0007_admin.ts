import type { Kysely, Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * The admin API (issue 14): its audit trail, written by the key and webhook stores in the
 * transaction of the change each entry describes, and requests per key per UTC hour, added to
 * by every instance (`insert … on conflict do update`). No raw SQL: the schema builder's
 * names follow the migration's schema on Postgres. Self-contained like every migration.
 */
export function admin(t: SqlColumnTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('wfa_audit_events')
        // `aud_…`, chosen by the plugin.
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('at', t.instant, (c) => c.notNull())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('actor_name', 'text', (c) => c.notNull())
        .addColumn('ip', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        // 'api_key' | 'webhook_endpoint'
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text', (c) => c.notNull())
        // JSON as text on both dialects: read back exactly as written, key order included.
        .addColumn('details', 'text', (c) => c.notNull())
        .execute()
      // A company's trail, newest first, from a cursor.
      await db.schema.createIndex('wfa_audit_events_company_at').on('wfa_audit_events').columns(['company_id', 'at desc', 'id desc']).execute()

      await db.schema
        .createTable('wfa_key_usage')
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        // The start of the UTC hour.
        .addColumn('hour', t.instant, (c) => c.notNull())
        .addColumn('requests', t.bigint, (c) => c.notNull())
        .addColumn('client_errors', t.bigint, (c) => c.notNull())
        .addColumn('server_errors', t.bigint, (c) => c.notNull())
        .addColumn('rate_limited', t.bigint, (c) => c.notNull())
        .addColumn('last_rate_limited_at', t.instant)
        .addPrimaryKeyConstraint('wfa_key_usage_pkey', ['key_id', 'hour'])
        .execute()
      // The usage view: a company's hours since an instant.
      await db.schema.createIndex('wfa_key_usage_company_hour').on('wfa_key_usage').columns(['company_id', 'hour']).execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('wfa_key_usage').ifExists().execute()
      await db.schema.dropTable('wfa_audit_events').ifExists().execute()
    },
  }
}
