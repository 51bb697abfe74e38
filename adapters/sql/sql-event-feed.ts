import { sql, type ExpressionBuilder } from 'kysely'
import type { FeedPage, FeedQuery } from '../../src/ports/webhook-store.js'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'
import type { SqlTransactor } from './sql-transactor.js'

const EVENTS = 'wfa_change_events'
const FEEDS = 'wfa_event_feeds'
const QUEUE = 'wfa_event_queue'
/** Ids per `in (…)` list: far below both dialects' bound-parameter limits. */
const IDS_PER_STATEMENT = 500
const DELIVERIES = 'wfa_webhook_deliveries'

/**
 * Positions given in one transaction at most: a company's first read after a long quiet time
 * (or after the migration, over every older event) stays a bounded write. Events left without a
 * position get theirs on the next read, after every position given now: still commit order.
 */
export const POSITION_BATCH = 5_000

/**
 * The company's events feed over `wfa_change_events` (positions) and `wfa_event_feeds` (head and
 * horizon), for SQLite and Postgres alike.
 *
 * **Commit order.** An insert cannot take its feed position: on Postgres two transactions take
 * identity values in one order and may commit in the other, so a reader could pass position 11
 * before 10 commits. Instead, events are inserted without a position, with a row in
 * `wfa_event_queue`, and a reader gives positions to the queued events that have committed, one
 * transaction at a time per company (the
 * company's `wfa_event_feeds` row is locked `FOR UPDATE` on Postgres; SQLite's write transaction
 * is exclusive). A transaction that commits later is seen by a later positioning and gets
 * greater positions: no event ever appears below a position already handed out.
 */
export class SqlEventFeed {
  constructor(
    private readonly db: QueryDb,
    private readonly codec: SqlCodec,
    private readonly transact: SqlTransactor,
    private readonly lockRows: boolean,
  ) {}

  async read(companyId: number, query: FeedQuery): Promise<FeedPage> {
    const waiting = await this.#position(companyId)
    const { head, horizon } = await this.#feed(companyId)
    const after = query.after ?? horizon
    if (after < horizon) return { expired: true }
    const upper = Math.min(after + query.scan, head)
    if (upper <= after) return { expired: false, events: [], next: after, has_more: after < head || waiting, head }
    const rows = await this.db
      .selectFrom(EVENTS)
      .select(['position', 'payload'])
      .where('company_id', '=', companyId)
      .where('position', '>', after)
      .where('position', '<=', upper)
      .where('type', 'in', query.types)
      // Events recorded before webhooks existed (migration 0005) have no body to show.
      .where('payload', 'is not', null)
      .orderBy('position')
      .limit(query.limit)
      .execute()
    // A purge that committed between the horizon's read and the rows' may have taken events from
    // the middle of this answer: read the horizon again, and if it has passed `after`, the answer
    // is expired (never silently short). One primary-key lookup; SQLite's reads are two statements too.
    if (after < (await this.#feed(companyId)).horizon) return { expired: true }
    const events = rows.map((row) => ({ position: this.codec.readInt(row.position), payload: row.payload as string }))
    const next = events.length === query.limit ? (events.at(-1)?.position ?? upper) : upper
    return { expired: false, events, next, has_more: next < head || waiting, head }
  }

  async head(companyId: number): Promise<number> {
    await this.#position(companyId)
    return (await this.#feed(companyId)).head
  }

  /**
   * Gives the company's committed, queued events their positions, oldest id first, in one
   * transaction of at most `POSITION_BATCH`, and takes them off the queue.
   * @returns whether events may still be waiting for theirs (the batch was full): the reader has more to read
   */
  async #position(companyId: number): Promise<boolean> {
    // On the queue's company index, without a write transaction in the common case: nothing new.
    const waiting = await this.db.selectFrom(QUEUE).select('event_id').where('company_id', '=', companyId).limit(1).executeTakeFirst()
    if (waiting === undefined) return false
    return this.transact(async (trx) => {
      const head = await lockFeeds(trx, this.codec, [companyId], this.lockRows).then((feeds) => feeds[0]?.head ?? 0)
      const batch = trx
        .selectFrom(QUEUE)
        .select(['event_id', sql<number>`row_number() over (order by event_id)`.as('seq')])
        .where('company_id', '=', companyId)
        .orderBy('event_id')
        .limit(POSITION_BATCH)
        .as('batch')
      const given = await trx
        .updateTable(`${EVENTS} as e`)
        .from(batch)
        .set({ position: sql`${sql.lit(head)} + batch.seq` })
        .whereRef('e.id', '=', 'batch.event_id')
        .returning(['id', 'position'])
        .execute()
      // Exactly the events just positioned leave the queue: one that committed meanwhile stays queued.
      const ids = given.map((row) => this.codec.readInt(row.id))
      for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
        await trx.deleteFrom(QUEUE).where('event_id', 'in', ids.slice(start, start + IDS_PER_STATEMENT)).execute()
      }
      const last = given.reduce((max, row) => Math.max(max, this.codec.readInt(row.position)), head)
      if (last > head) await trx.updateTable(FEEDS).set({ head: last }).where('company_id', '=', companyId).execute()
      return given.length === POSITION_BATCH
    })
  }

  async #feed(companyId: number): Promise<{ head: number; horizon: number }> {
    const row = await this.db.selectFrom(FEEDS).select(['head', 'purged_through']).where('company_id', '=', companyId).executeTakeFirst()
    return row === undefined ? { head: 0, horizon: 0 } : { head: this.codec.readInt(row.head), horizon: this.codec.readInt(row.purged_through) }
  }
}

/** `ev` (the event, aliased so) has no delivery: nothing will send it, so age alone decides its purge. */
const noDeliveryNeeds = (eb: ExpressionBuilder<any, any>) =>
  eb.not(eb.exists(eb.selectFrom(`${DELIVERIES} as dl`).select(sql<number>`1`.as('one')).whereRef('dl.change_event_id', '=', 'ev.id')))

interface FeedRow {
  company_id: number
  head: number
  horizon: number
}

/**
 * Creates the companies' feed rows if missing and locks them (Postgres), in company order so
 * two transactions locking several never deadlock. Every change to positions or to the horizon
 * takes these locks first, then touches events.
 */
async function lockFeeds(trx: QueryDb, codec: SqlCodec, companies: readonly number[], lockRows: boolean): Promise<FeedRow[]> {
  await trx
    .insertInto(FEEDS)
    .values(companies.map((company_id) => ({ company_id, head: 0, purged_through: 0 })))
    .onConflict((conflict) => conflict.column('company_id').doNothing())
    .execute()
  let query = trx.selectFrom(FEEDS).select(['company_id', 'head', 'purged_through']).where('company_id', 'in', companies).orderBy('company_id')
  if (lockRows) query = query.forUpdate()
  const rows = await query.execute()
  return rows.map((row) => ({ company_id: codec.readInt(row.company_id), head: codec.readInt(row.head), horizon: codec.readInt(row.purged_through) }))
}

/**
 * Deletes up to `limit` events older than `cutoff` that no delivery needs, in id order, and
 * moves each affected company's horizon over them, in the caller's transaction `trx`: a cursor
 * at or below a purged position is expired from then on, never silently shortened. An event
 * purged while still queued for its position burns the next one (`head + 1`) and the horizon
 * moves there: every cursor handed out so far would have missed it.
 * @returns how many events were deleted
 */
export async function purgeFeedEvents(trx: QueryDb, codec: SqlCodec, cutoff: unknown, limit: number, lockRows: boolean): Promise<number> {
  const candidates = await trx
    .selectFrom(`${EVENTS} as ev`)
    .select(['ev.id', 'ev.company_id'])
    .where('ev.occurred_at', '<', cutoff)
    .where(noDeliveryNeeds)
    .orderBy('ev.id')
    .limit(limit)
    .execute()
  if (candidates.length === 0) return 0
  const companies = [...new Set(candidates.map((row) => codec.readInt(row.company_id)))].sort((a, b) => a - b)
  const feeds = await lockFeeds(trx, codec, companies, lockRows)
  // The conditions again on the rows themselves: a redelivery that committed meanwhile keeps its event.
  const deleted = await trx
    .deleteFrom(`${EVENTS} as ev`)
    .where(
      'ev.id',
      'in',
      candidates.map((row) => codec.readInt(row.id)),
    )
    .where(noDeliveryNeeds)
    .returning(['id', 'company_id', 'position'])
    .execute()
  // An event purged while still queued for its position: every cursor so far would have missed it.
  // (An event never queued, a `webhook.test` one, is in no feed.)
  const unpositioned = deleted.filter((row) => row.position === null).map((row) => codec.readInt(row.id))
  const missed = new Set<number>()
  for (let start = 0; start < unpositioned.length; start += IDS_PER_STATEMENT) {
    const rows = await trx.deleteFrom(QUEUE).where('event_id', 'in', unpositioned.slice(start, start + IDS_PER_STATEMENT)).returning('company_id').execute()
    for (const row of rows) missed.add(codec.readInt(row.company_id))
  }
  for (const feed of feeds) {
    const gone = deleted.filter((row) => codec.readInt(row.company_id) === feed.company_id && row.position !== null)
    const burnt = missed.has(feed.company_id)
    if (gone.length === 0 && !burnt) continue
    const head = burnt ? feed.head + 1 : feed.head
    const horizon = Math.max(feed.horizon, burnt ? head : Math.max(...gone.map((row) => codec.readInt(row.position))))
    if (head === feed.head && horizon === feed.horizon) continue
    await trx.updateTable(FEEDS).set({ head, purged_through: horizon }).where('company_id', '=', feed.company_id).execute()
  }
  return deleted.length
}
