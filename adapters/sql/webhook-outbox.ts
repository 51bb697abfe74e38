import type { ChangeEvent } from '../../src/ports/write-storage.js'
import type { SqlCodec } from './codec.js'
import type { DueNotifier } from './due-signal.js'
import type { QueryDb } from './prepared.js'

/** Subscribes to every event type (`WebhookEndpointRecord.events`). */
const ALL_EVENTS = '*'

/** How the outbox adapts to a dialect; every field is optional. */
export interface SqlOutboxOptions {
  /**
   * Read the company's endpoints `FOR SHARE` (Postgres): a concurrent `disableEndpoint` then
   * waits for this transaction and fails the deliveries it created, instead of leaving them
   * pending on an endpoint it has just disabled. SQLite's write transaction is exclusive already.
   */
  lockRows?: boolean
  /** Announces the new deliveries in this transaction, when there are any. */
  notify?: DueNotifier
}

/**
 * The transactional outbox, shared by `WriteTransaction.recordEvent` and `WebhookStore.publish`:
 * stores each event in `wfa_change_events`, queues it for its feed position
 * (`wfa_event_queue`, sql-event-feed.ts) and, on the same transaction `trx`, creates one
 * `pending` delivery (due at `occurred_at`, no attempt yet) for every enabled endpoint of the
 * event's company subscribed to its type or to `*`. So an event and its deliveries commit or
 * roll back with the change that caused them.
 *
 * @returns how many deliveries were created.
 * @example
 * await db.transaction().execute(async (trx) => {
 *   await trx.updateTable('timesheets').set(changes).where('id', '=', id).execute()
 *   await recordOutboxEvents(trx, postgresCodec, [event], { lockRows: true, notify })
 * })
 */
export async function recordOutboxEvents(
  trx: QueryDb,
  codec: SqlCodec,
  events: readonly ChangeEvent[],
  options: SqlOutboxOptions = {},
): Promise<number> {
  if (events.length === 0) return 0
  const c = codec
  // One multi-row insert for the events and one for their deliveries, however many there are:
  // a host publishing a batch pays a few round trips, not two per event.
  const rows: Array<{ id: unknown; event_id: unknown }> = []
  for (const chunk of chunks(events)) {
    const inserted = await trx
      .insertInto('wfa_change_events')
      .values(
        chunk.map((event) => changeEventRow(c, event)),
      )
      .returning(['id', 'event_id'])
      .execute()
    rows.push(...inserted)
  }
  const rowIdOf = new Map(rows.map((row) => [row.event_id as string, c.readInt(row.id)]))
  // Each event waits in the feed's queue until a reader gives it its position, after this commits.
  for (const chunk of chunks(events)) {
    await trx
      .insertInto('wfa_event_queue')
      .values(chunk.map((event) => ({ event_id: rowIdOf.get(event.id), company_id: event.company_id })))
      .execute()
  }

  // A company's endpoints are read once per call, however many of its events there are.
  const endpointsOf = new Map<number, Array<{ id: string; events: string[] }>>()
  const deliveries: Array<Record<string, unknown>> = []
  for (const event of events) {
    let endpoints = endpointsOf.get(event.company_id)
    if (endpoints === undefined) {
      endpoints = await subscribedEndpoints(trx, codec, event.company_id, options.lockRows ?? false)
      endpointsOf.set(event.company_id, endpoints)
    }
    const at = c.instant(event.occurred_at)
    for (const endpoint of endpoints) {
      if (!endpoint.events.includes(event.type) && !endpoint.events.includes(ALL_EVENTS)) continue
      deliveries.push(pendingDelivery(endpoint.id, event, rowIdOf.get(event.id), at))
    }
  }
  const created = deliveries.length
  for (const chunk of chunks(deliveries)) await trx.insertInto('wfa_webhook_deliveries').values(chunk).execute()
  if (created > 0) await options.notify?.(trx)
  return created
}

/** The `wfa_change_events` row of an event (its `id` is the database's). */
export function changeEventRow(codec: SqlCodec, event: ChangeEvent): Record<string, unknown> {
  return {
    event_id: event.id,
    company_id: event.company_id,
    type: event.type,
    resource_id: event.resource_id,
    occurred_at: codec.instant(event.occurred_at),
    payload: event.payload,
  }
}

/** A new delivery row: pending, due at once (at the event's time), not leased. */
export function pendingDelivery(
  endpointId: string,
  event: Pick<ChangeEvent, 'id' | 'type' | 'company_id'>,
  changeEventId: number | undefined,
  at: unknown,
): Record<string, unknown> {
  return {
    endpoint_id: endpointId,
    company_id: event.company_id,
    change_event_id: changeEventId,
    event_id: event.id,
    event_type: event.type,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    lease: null,
    created_at: at,
    updated_at: at,
  }
}

async function subscribedEndpoints(trx: QueryDb, codec: SqlCodec, companyId: number, lockRows: boolean): Promise<Array<{ id: string; events: string[] }>> {
  let query = trx
    .selectFrom('wfa_webhook_endpoints')
    .select(['id', 'events'])
    .where('company_id', '=', companyId)
    .where('status', '=', 'enabled')
    .orderBy('created_at')
    .orderBy('id')
  if (lockRows) query = query.forShare()
  const rows = await query.execute()
  return rows.map((row) => ({ id: row.id as string, events: codec.readJson<string[]>(row.events) }))
}

/** Rows per multi-row insert: far below both dialects' bound-parameter limits (SQLite 32,766; Postgres 65,535). */
const ROWS_PER_INSERT = 500

function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = []
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) out.push(rows.slice(start, start + ROWS_PER_INSERT))
  return out
}
