import type { StoredResponse } from '../../src/ports/idempotency-store.js'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'

/**
 * Marks the slot completed with `response` if `token` still holds it in flight: one
 * conditional UPDATE, so an attempt whose lease was taken over cannot overwrite the winner.
 * Shared by `SqlIdempotencyStore.complete` and `WriteTransaction.completeIdempotency`.
 */
export async function completeIdempotencySlot(
  db: QueryDb,
  codec: SqlCodec,
  slot: string,
  token: string,
  response: StoredResponse,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('wfa_idempotency')
    .set({
      state: 'completed',
      completed_at: codec.instant(now),
      response_status: response.status,
      // As [name, value] pairs: jsonb reorders object keys, and a replay must be verbatim.
      response_headers: codec.json(Object.entries(response.headers)),
      response_body: response.body,
    })
    .where('slot', '=', slot)
    .where('token', '=', token)
    .where('state', '=', 'in_flight')
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}
