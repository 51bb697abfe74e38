import type { Kysely, Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * Issue 24: the events feed (`GET /v1/events`).
 * - `wfa_change_events.position`: the event's place in its company's feed, given after its
 *   transaction commits (by `readFeed`/`feedHead`), never at insert: on Postgres a transaction can
 *   take a sequence number and commit after a later one, and a reader must never be shown an event
 *   at a position it has already passed. Null until then.
 * - `wfa_event_queue`: the events still waiting for their position (one row each, inserted with
 *   the event, deleted when it gets its position). Existing events are queued here, so they get
 *   theirs, in id order, on their company's first feed reads.
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
      // The events waiting for a position, one row each, written with the event. A table of its
      // own, not "position is null" on the events: Postgres estimates that condition and the
      // company's as independent, and with many unread events it scanned the whole outbox to find
      // that one company had none. Here the company alone selects, on an index.
      await db.schema
        .createTable('wfa_event_queue')
        .addColumn('event_id', t.bigint, (c) => c.primaryKey())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .execute()
      await db.schema.createIndex('wfa_event_queue_company').on('wfa_event_queue').columns(['company_id', 'event_id']).execute()
      // Every event recorded before, with a body to show, waits for its position too: a company's
      // first feed reads give them theirs, in id order.
      await db
        .insertInto('wfa_event_queue')
        .columns(['event_id', 'company_id'])
        .expression(db.selectFrom('wfa_change_events').select(['id', 'company_id']).where('payload', 'is not', null))
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
      await db.schema.dropTable('wfa_event_queue').ifExists().execute()
      await db.schema.dropIndex('wfa_change_events_feed').ifExists().execute()
      await db.schema.alterTable('wfa_change_events').dropColumn('position').execute()
    },
  }
}
