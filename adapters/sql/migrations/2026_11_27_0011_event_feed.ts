import { sql, type Kysely, type Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * Issue 24: the events feed (`GET /v1/events`).
 * - `wfa_change_events.position`: the event's place in its company's feed, given after its
 *   transaction commits (by `readFeed`/`feedHead`), never at insert: on Postgres a transaction can
 *   take a sequence number and commit after a later one, and a reader must never be shown an event
 *   at a position it has already passed. Null until then. Existing events get theirs, in id
 *   order, on their company's first feed read.
 * - `wfa_event_feeds`: per company, the last position given (`head`) and the feed's horizon
 *   (`purged_through`: events at or below it may have been purged; a cursor below it is expired).
 *   Its row is the lock that gives positions one transaction at a time per company.
 * - An index on a company's events by time: replaying a period to an endpoint (`replay`) reads
 *   the period's events only, not every retained event of the company.
 * Self-contained like every migration.
 */
export function eventFeed(t: SqlColumnTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_change_events').addColumn('position', t.bigint).execute()
      // The feed reads a company's events in position order; unique, so no position is given twice.
      await db.schema.createIndex('wfa_change_events_feed').unique().on('wfa_change_events').columns(['company_id', 'position']).execute()
      // The events still waiting for a position, found without scanning the positioned ones.
      await db.schema
        .createIndex('wfa_change_events_unpositioned')
        .on('wfa_change_events')
        .columns(['company_id', 'id'])
        .where(sql.ref('position'), 'is', null)
        .execute()
      await db.schema.createIndex('wfa_change_events_company_occurred').on('wfa_change_events').columns(['company_id', 'occurred_at']).execute()
      await db.schema
        .createTable('wfa_event_feeds')
        .addColumn('company_id', t.bigint, (c) => c.primaryKey())
        .addColumn('head', t.bigint, (c) => c.notNull())
        .addColumn('purged_through', t.bigint, (c) => c.notNull())
        .execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('wfa_event_feeds').ifExists().execute()
      await db.schema.dropIndex('wfa_change_events_company_occurred').ifExists().execute()
      await db.schema.dropIndex('wfa_change_events_unpositioned').ifExists().execute()
      await db.schema.dropIndex('wfa_change_events_feed').ifExists().execute()
      await db.schema.alterTable('wfa_change_events').dropColumn('position').execute()
    },
  }
}
