import type { IdempotencyBegin, IdempotencyBeginResult, IdempotencyStore, StoredResponse } from '../../src/ports/idempotency-store.js'
import type { SqlCodec } from './codec.js'
import { completeIdempotencySlot } from './idempotency-slot.js'
import type { QueryDb } from './prepared.js'
import { sqlTransactor, type SqlTransactor, type SqlWriteOptions } from './sql-transactor.js'

/**
 * How often `begin` retries when the slot's row vanishes between its insert and its read
 * (a concurrent `release` or purge). Each retry starts over; two are plenty in practice.
 */
const BEGIN_ATTEMPTS = 3

/**
 * The `IdempotencyStore` port over `wfa_idempotency`, shared by every app instance on the
 * database. `begin` is one transaction that first makes sure the row exists
 * (`INSERT … ON CONFLICT DO NOTHING`), then reads it — locked with `FOR UPDATE` where
 * transactions are concurrent (`lockRows`) — and decides; so of many identical concurrent
 * requests exactly one gets `started`, in one process or many.
 *
 * @example
 * const idempotency = new SqlIdempotencyStore(db, postgresCodec, { lockRows: true })
 * const begun = await idempotency.begin({ slot, fingerprint, companyId, token, now, leaseUntil, expiredBefore })
 */
export class SqlIdempotencyStore implements IdempotencyStore {
  readonly #transact: SqlTransactor
  readonly #lockRows: boolean

  constructor(
    db: QueryDb,
    private readonly codec: SqlCodec,
    options: SqlWriteOptions = {},
  ) {
    this.#transact = sqlTransactor(db, options)
    this.#lockRows = options.lockRows ?? false
  }

  begin(request: IdempotencyBegin): Promise<IdempotencyBeginResult> {
    return this.#transact(async (trx) => {
      for (let attempt = 0; attempt < BEGIN_ATTEMPTS; attempt++) {
        const result = await this.#beginOnce(trx, request)
        if (result !== null) return result
      }
      throw new Error(`Idempotency slot ${request.slot} kept disappearing during begin`)
    })
  }

  complete(slot: string, token: string, response: StoredResponse, now: Date): Promise<boolean> {
    return this.#transact((trx) => completeIdempotencySlot(trx, this.codec, slot, token, response, now))
  }

  renew(slot: string, token: string, leaseUntil: Date): Promise<boolean> {
    return this.#transact(async (trx) => {
      const result = await trx
        .updateTable('wfa_idempotency')
        .set({ lease_until: this.codec.instant(leaseUntil) })
        .where('slot', '=', slot)
        .where('token', '=', token)
        .where('state', '=', 'in_flight')
        .executeTakeFirst()
      return result.numUpdatedRows > 0n
    })
  }

  async release(slot: string, token: string): Promise<void> {
    await this.#transact((trx) =>
      trx.deleteFrom('wfa_idempotency').where('slot', '=', slot).where('token', '=', token).where('state', '=', 'in_flight').execute(),
    )
  }

  purgeExpired(before: Date, limit: number): Promise<number> {
    if (!Number.isInteger(limit) || limit < 1) return Promise.resolve(0)
    return this.#transact(async (trx) => {
      // A bounded batch keeps the transaction (and on SQLite, the write lock) short; the
      // caller loops until fewer than `limit` come back.
      const oldest = trx
        .selectFrom('wfa_idempotency')
        .select('slot')
        .where('created_at', '<', this.codec.instant(before))
        .orderBy('created_at')
        .limit(limit)
      const result = await trx.deleteFrom('wfa_idempotency').where('slot', 'in', oldest).executeTakeFirst()
      return Number(result.numDeletedRows)
    })
  }

  /** One pass of `begin`; `null` if the row vanished between the insert and the read. */
  async #beginOnce(trx: QueryDb, request: IdempotencyBegin): Promise<IdempotencyBeginResult | null> {
    const c = this.codec
    const fresh = {
      company_id: request.companyId,
      fingerprint: request.fingerprint,
      state: 'in_flight',
      token: request.token,
      lease_until: c.instant(request.leaseUntil),
      created_at: c.instant(request.now),
      completed_at: null,
      response_status: null,
      response_headers: null,
      response_body: null,
    }
    // On Postgres a concurrent insert of the same slot waits here until the first commits.
    const inserted = await trx
      .insertInto('wfa_idempotency')
      .values({ slot: request.slot, ...fresh })
      .onConflict((oc) => oc.column('slot').doNothing())
      .executeTakeFirst()
    if (inserted.numInsertedOrUpdatedRows !== undefined && inserted.numInsertedOrUpdatedRows > 0n) return { state: 'started' }

    let read = trx.selectFrom('wfa_idempotency').selectAll().where('slot', '=', request.slot)
    if (this.#lockRows) read = read.forUpdate()
    const row = await read.executeTakeFirst()
    if (row === undefined) return null

    if (c.readInstant(row.created_at).getTime() < request.expiredBefore.getTime()) {
      // Past its retention: the key is fresh again, whatever the old record held.
      await trx.updateTable('wfa_idempotency').set(fresh).where('slot', '=', request.slot).execute()
      return { state: 'started' }
    }
    if (row.fingerprint !== request.fingerprint) return { state: 'mismatch' }
    if (row.state === 'completed') {
      return {
        state: 'replay',
        response: {
          status: c.readInt(row.response_status),
          headers: Object.fromEntries(c.readJson<Array<[string, string]>>(row.response_headers)),
          body: row.response_body as string,
        },
      }
    }
    if (c.readInstant(row.lease_until).getTime() > request.now.getTime()) return { state: 'in_flight' }
    // The holder's lease ran out (it crashed or hung): take the slot over, keeping its age.
    await trx
      .updateTable('wfa_idempotency')
      .set({ token: request.token, lease_until: c.instant(request.leaseUntil) })
      .where('slot', '=', request.slot)
      .execute()
    return { state: 'started' }
  }
}
