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
 * stores each event in `wfa_change_events` and, on the same transaction `trx`, creates one
 * `pending` delivery (due at `occurred_at`, no attempt yet) for every enabled endpoint of the
 * event's company subscribed to its type or to `*`. So an event and its deliveries commit or
 * roll back with the change that caused them.
 *
 * @returns how many deliveries were created.
 * @example
 * await db.transaction().execute(async (trx) => {
 *   await trx.updateTable('shifts').set(changes).where('id', '=', id).execute()
 *   await recordOutboxEvents(trx, postgresCodec, [event], { lockRows: true, notify })
 * })
 */
export async function recordOutboxEvents(
  trx: QueryDb,
  codec: SqlCodec,
  events: readonly ChangeEvent[],
  options: SqlOutboxOptions = {},
): Promise<number> {
  const c = codec
  let created = 0
  // A company's endpoints are read once per call, however many of its events there are.
  const endpointsOf = new Map<number, Promise<Array<{ id: string; events: string[] }>>>()
  for (const event of events) {
    const row = await trx
      .insertInto('wfa_change_events')
      .values({
        event_id: event.id,
        company_id: event.company_id,
        type: event.type,
        resource_id: event.resource_id,
        occurred_at: c.instant(event.occurred_at),
        payload: event.payload,
      })
      .returning('id')
      .executeTakeFirstOrThrow()

    let endpoints = endpointsOf.get(event.company_id)
    if (endpoints === undefined) {
      endpoints = subscribedEndpoints(trx, codec, event.company_id, options.lockRows ?? false)
      endpointsOf.set(event.company_id, endpoints)
    }
    const targets = (await endpoints).filter((endpoint) => endpoint.events.includes(event.type) || endpoint.events.includes(ALL_EVENTS))
    if (targets.length === 0) continue
    const at = c.instant(event.occurred_at)
    await trx
      .insertInto('wfa_webhook_deliveries')
      .values(
        targets.map((endpoint) => ({
          endpoint_id: endpoint.id,
          company_id: event.company_id,
          change_event_id: c.readInt(row.id),
          event_id: event.id,
          event_type: event.type,
          status: 'pending',
          attempts: 0,
          next_attempt_at: at,
          lease: null,
          created_at: at,
          updated_at: at,
        })),
      )
      .execute()
    created += targets.length
  }
  if (created > 0) await options.notify?.(trx)
  return created
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
