import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import type { AuditEntry } from '../../src/ports/audit-store.js'
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryPage,
  DeliveryQuery,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookDisabledReason,
  WebhookEndpointChanges,
  WebhookEndpointRecord,
  WebhookStore,
} from '../../src/ports/webhook-store.js'
import type { ChangeEvent } from '../../src/ports/write-storage.js'
import type { SqlCodec } from './codec.js'
import type { DueNotifier, DueSignal } from './due-signal.js'
import type { QueryDb } from './prepared.js'
import { auditedChange, insertAuditEntry } from './sql-audit-store.js'
import { sqlTransactor, type SqlTransactor, type SqlWriteOptions } from './sql-transactor.js'
import { changeEventRow, pendingDelivery, recordOutboxEvents, type SqlOutboxOptions } from './webhook-outbox.js'

const ENDPOINTS = 'wfa_webhook_endpoints'
const DELIVERIES = 'wfa_webhook_deliveries'
const ATTEMPTS = 'wfa_webhook_attempts'
const EVENTS = 'wfa_change_events'

/** How the store adapts to a dialect; see `SqlWriteOptions` for the shared fields. */
export interface SqlWebhookOptions extends SqlWriteOptions {
  /**
   * The schema our tables live in (the Postgres adapter's `schema`): `publish` applies it to
   * the host's handle, whose queries name our tables unqualified.
   */
  schema?: string
  /** Backs the optional `subscribeDue`; without it the store has none and dispatchers poll. */
  subscribeDue?: DueSignal['subscribe']
}

/**
 * The `WebhookStore` port over `wfa_webhook_endpoints`, `wfa_webhook_deliveries`,
 * `wfa_webhook_attempts` and the `wfa_change_events` outbox, for SQLite and Postgres alike.
 *
 * Every operation of more than one statement is one transaction of the dialect's transactor.
 * On Postgres (`lockRows`) claims skip rows another dispatcher is claiming
 * (`FOR UPDATE SKIP LOCKED`), and every transaction that locks an endpoint and its deliveries
 * takes the endpoint first, so two of them cannot deadlock. SQLite's write transactions run
 * one at a time and need neither.
 *
 * A change handed an audit entry writes it last in the change's transaction, and only when
 * the change happened; a plain single-statement change stays one statement.
 *
 * @example
 * const webhooks = new SqlWebhookStore(db, postgresCodec, { lockRows: true, notifyDue: due.notify, subscribeDue: (wake) => due.subscribe(wake) })
 * const claims = await webhooks.claimDue(now, new Date(now.getTime() + 60_000), 10)
 */
export class SqlWebhookStore implements WebhookStore {
  readonly #transact: SqlTransactor
  readonly #lockRows: boolean
  readonly #notify: DueNotifier | undefined
  readonly #outbox: SqlOutboxOptions
  readonly #schema: string | undefined
  readonly subscribeDue?: (wake: () => void) => Promise<() => Promise<void>>

  constructor(
    private readonly db: QueryDb,
    private readonly codec: SqlCodec,
    options: SqlWebhookOptions = {},
  ) {
    this.#transact = sqlTransactor(db, options)
    this.#lockRows = options.lockRows ?? false
    this.#notify = options.notifyDue
    this.#outbox = { lockRows: this.#lockRows, notify: options.notifyDue }
    this.#schema = options.schema
    const subscribe = options.subscribeDue
    if (subscribe !== undefined) this.subscribeDue = (wake) => subscribe(wake)
  }

  async createEndpoint(endpoint: WebhookEndpointRecord, audit?: AuditEntry): Promise<void> {
    const c = this.codec
    await this.#audited(audit, (db) =>
      db
        .insertInto(ENDPOINTS)
        .values({
          id: endpoint.id,
          company_id: endpoint.company_id,
          url: endpoint.url,
          description: endpoint.description,
          events: c.json(endpoint.events),
          status: endpoint.status,
          disabled_reason: endpoint.disabled_reason,
          secret: endpoint.secret,
          previous_secret: endpoint.previous_secret,
          previous_secret_expires_at: this.#instantOrNull(endpoint.previous_secret_expires_at),
          failing_since: this.#instantOrNull(endpoint.failing_since),
          created_at: c.instant(endpoint.created_at),
          updated_at: c.instant(endpoint.updated_at),
        })
        .execute(),
    )
  }

  async getEndpoint(id: string): Promise<WebhookEndpointRecord | null> {
    const row = await this.db.selectFrom(ENDPOINTS).selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? null : this.#endpoint(row)
  }

  async listEndpoints(companyId: number): Promise<WebhookEndpointRecord[]> {
    const rows = await this.db.selectFrom(ENDPOINTS).selectAll().where('company_id', '=', companyId).orderBy('created_at').orderBy('id').execute()
    return rows.map((row) => this.#endpoint(row))
  }

  async updateEndpoint(id: string, changes: WebhookEndpointChanges, now: Date, audit?: AuditEntry): Promise<WebhookEndpointRecord | null> {
    const c = this.codec
    const columns: Record<string, unknown> = { updated_at: c.instant(now) }
    if (changes.url !== undefined) columns.url = changes.url
    if (changes.description !== undefined) columns.description = changes.description
    if (changes.events !== undefined) columns.events = c.json(changes.events)
    if (changes.secret !== undefined) columns.secret = changes.secret
    if (changes.previous_secret !== undefined) columns.previous_secret = changes.previous_secret
    if (changes.previous_secret_expires_at !== undefined) {
      columns.previous_secret_expires_at = this.#instantOrNull(changes.previous_secret_expires_at)
    }
    const row = await this.#audited(
      audit,
      (db) => db.updateTable(ENDPOINTS).set(columns).where('id', '=', id).returningAll().executeTakeFirst(),
      (updated) => updated !== undefined,
    )
    return row === undefined ? null : this.#endpoint(row)
  }

  enableEndpoint(id: string, now: Date, audit?: AuditEntry): Promise<boolean> {
    return this.#audited(
      audit,
      async (db) => {
        const result = await db
          .updateTable(ENDPOINTS)
          .set({ status: 'enabled', disabled_reason: null, failing_since: null, updated_at: this.codec.instant(now) })
          .where('id', '=', id)
          .where('status', '=', 'disabled')
          .executeTakeFirst()
        return result.numUpdatedRows > 0n
      },
      (enabled) => enabled,
    )
  }

  disableEndpoint(id: string, reason: WebhookDisabledReason, now: Date, audit?: AuditEntry): Promise<boolean> {
    const at = this.codec.instant(now)
    return this.#transact(async (trx) => {
      // Conditional, so of two instances disabling at once exactly one changes the row.
      const disabled = await trx
        .updateTable(ENDPOINTS)
        .set({ status: 'disabled', disabled_reason: reason, updated_at: at })
        .where('id', '=', id)
        .where('status', '=', 'enabled')
        .executeTakeFirst()
      if (disabled.numUpdatedRows === 0n) return false
      await trx
        .updateTable(DELIVERIES)
        .set({ status: 'failed', next_attempt_at: null, lease: null, updated_at: at })
        .where('endpoint_id', '=', id)
        .where('status', '=', 'pending')
        .execute()
      await this.#audit(trx, audit)
      return true
    })
  }

  deleteEndpoint(id: string, audit?: AuditEntry): Promise<boolean> {
    return this.#transact(async (trx) => {
      // The endpoint first: the lock order of every transaction here (see the class).
      const deleted = await trx.deleteFrom(ENDPOINTS).where('id', '=', id).executeTakeFirst()
      if (deleted.numDeletedRows === 0n) return false
      const deliveries = trx.selectFrom(DELIVERIES).select('id').where('endpoint_id', '=', id)
      await trx.deleteFrom(ATTEMPTS).where('delivery_id', 'in', deliveries).execute()
      await trx.deleteFrom(DELIVERIES).where('endpoint_id', '=', id).execute()
      await this.#audit(trx, audit)
      return true
    })
  }

  async publish(transaction: unknown, events: readonly ChangeEvent[]): Promise<void> {
    // The adapter's own instance means "no transaction of mine": the events and their
    // deliveries still commit together, in a transaction of the store's.
    if (transaction === this.db) {
      await this.#transact((trx) => recordOutboxEvents(trx, this.codec, events, this.#outbox))
      return
    }
    await recordOutboxEvents(this.#hostHandle(transaction), this.codec, events, this.#outbox)
  }

  claimDue(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
    if (!Number.isInteger(limit) || limit < 1) return Promise.resolve([])
    const c = this.codec
    const lease = randomBytes(16).toString('base64url')
    return this.#transact(async (trx) => {
      let due = trx
        .selectFrom(`${DELIVERIES} as d`)
        .select('d.id')
        .where('d.status', '=', 'pending')
        .where('d.next_attempt_at', '<=', c.instant(now))
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom(`${ENDPOINTS} as e`)
              .select(sql<number>`1`.as('one'))
              .whereRef('e.id', '=', 'd.endpoint_id')
              .where('e.status', '=', 'enabled'),
          ),
        )
        .orderBy('d.next_attempt_at')
        .orderBy('d.id')
        .limit(limit)
      // Rows another dispatcher is claiming are skipped, not waited for (Postgres).
      if (this.#lockRows) due = due.forUpdate().skipLocked()
      const claimed = await trx
        .updateTable(DELIVERIES)
        .set((eb) => ({
          attempts: eb('attempts', '+', 1),
          next_attempt_at: c.instant(leaseUntil),
          lease,
          updated_at: c.instant(now),
        }))
        .where('id', 'in', due)
        .where('status', '=', 'pending')
        .returning(['id', 'endpoint_id', 'change_event_id', 'attempts'])
        .execute()
      if (claimed.length === 0) return []

      const eventIds = [...new Set(claimed.map((row) => c.readInt(row.change_event_id)))]
      const endpointIds = [...new Set(claimed.map((row) => row.endpoint_id as string))]
      const events = new Map(
        (await trx.selectFrom(EVENTS).select(['id', 'event_id', 'type', 'company_id', 'payload']).where('id', 'in', eventIds).execute()).map((row) => [
          c.readInt(row.id),
          row,
        ]),
      )
      const endpoints = new Map(
        (await trx.selectFrom(ENDPOINTS).selectAll().where('id', 'in', endpointIds).execute()).map((row) => [row.id as string, this.#endpoint(row)]),
      )

      const claims: ClaimedDelivery[] = []
      const orphans: number[] = []
      for (const row of claimed) {
        const deliveryId = c.readInt(row.id)
        const event = events.get(c.readInt(row.change_event_id))
        const endpoint = endpoints.get(row.endpoint_id as string)
        if (event === undefined || event.payload === null || endpoint === undefined) {
          orphans.push(deliveryId)
          continue
        }
        claims.push({
          delivery_id: deliveryId,
          lease,
          attempt: c.readInt(row.attempts),
          event: { id: event.event_id as string, type: event.type as string, company_id: c.readInt(event.company_id), payload: event.payload as string },
          endpoint,
        })
      }
      if (orphans.length > 0) {
        // Its event was purged by a race with a redelivery: nothing is left to send.
        await trx
          .updateTable(DELIVERIES)
          .set({ status: 'failed', next_attempt_at: null, lease: null, updated_at: c.instant(now) })
          .where('id', 'in', orphans)
          .execute()
      }
      return claims.sort((a, b) => a.delivery_id - b.delivery_id)
    })
  }

  async finishAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Promise<boolean> {
    const c = this.codec
    const at = c.instant(now)
    const { attempt, next } = outcome
    try {
      return await this.#transact(async (trx) => {
        const held = await trx
          .selectFrom(DELIVERIES)
          .select('endpoint_id')
          .where('id', '=', claim.delivery_id)
          .where('lease', '=', claim.lease)
          .where('status', '=', 'pending')
          .executeTakeFirst()
        if (held === undefined) return false
        // The endpoint's health first, and only when it changes: a healthy endpoint's row is not
        // even locked, so attempts to one endpoint finish side by side instead of queueing on it.
        // When it is locked, it is before the delivery, in the order `disableEndpoint` and
        // `deleteEndpoint` take them, so neither can deadlock with this.
        const health = trx.updateTable(ENDPOINTS).where('id', '=', held.endpoint_id as string)
        if (attempt.succeeded) await health.set({ failing_since: null }).where('failing_since', 'is not', null).execute()
        else await health.set({ failing_since: at }).where('failing_since', 'is', null).execute()
        const moved = await trx
          .updateTable(DELIVERIES)
          .set({
            status: next.status,
            next_attempt_at: next.status === 'pending' ? c.instant(next.at) : null,
            lease: null,
            updated_at: at,
          })
          .where('id', '=', claim.delivery_id)
          .where('lease', '=', claim.lease)
          .where('status', '=', 'pending')
          .executeTakeFirst()
        // Taken over (or failed by a disable) between the read and here: undo the health change too.
        if (moved.numUpdatedRows === 0n) throw new ClaimLost()
        await trx
          .insertInto(ATTEMPTS)
          .values({
            delivery_id: claim.delivery_id,
            number: attempt.number,
            attempted_at: c.instant(attempt.attempted_at),
            status_code: attempt.status_code,
            duration_ms: attempt.duration_ms,
            response_body: attempt.response_body,
            error: attempt.error,
            succeeded: c.bool(attempt.succeeded),
          })
          .execute()
        return true
      })
    } catch (error) {
      if (error instanceof ClaimLost) return false
      throw error
    }
  }

  async listDeliveries(endpointId: string, page: DeliveryQuery): Promise<DeliveryPage> {
    const c = this.codec
    const limit = Math.max(0, Math.floor(page.limit))
    let query = this.db.selectFrom(DELIVERIES).selectAll().where('endpoint_id', '=', endpointId)
    if (page.before !== undefined) query = query.where('id', '<', page.before)
    if (page.status !== undefined) query = query.where('status', '=', page.status)
    if (page.event_type !== undefined) query = query.where('event_type', '=', page.event_type)
    const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute()
    const shown = rows.slice(0, limit).map((row) => this.#delivery(row))
    const attempts = new Map<number, WebhookAttemptRecord[]>(shown.map((delivery) => [delivery.id, []]))
    if (shown.length > 0) {
      const attemptRows = await this.db
        .selectFrom(ATTEMPTS)
        .selectAll()
        .where(
          'delivery_id',
          'in',
          shown.map((delivery) => delivery.id),
        )
        .orderBy('delivery_id')
        .orderBy('number')
        .orderBy('id')
        .execute()
      for (const row of attemptRows) attempts.get(c.readInt(row.delivery_id))?.push(this.#attempt(row))
    }
    return {
      deliveries: shown.map((delivery) => ({ ...delivery, attempts_made: attempts.get(delivery.id) ?? [] })),
      has_more: rows.length > limit,
    }
  }

  redeliver(endpointId: string, eventId: string, now: Date, audit?: AuditEntry): Promise<boolean> {
    const c = this.codec
    const at = c.instant(now)
    return this.#transact(async (trx) => {
      const endpoint = await trx.selectFrom(ENDPOINTS).select('company_id').where('id', '=', endpointId).executeTakeFirst()
      if (endpoint === undefined) return false
      const event = await trx
        .selectFrom(EVENTS)
        .select(['id', 'type'])
        .where('event_id', '=', eventId)
        .where('company_id', '=', c.readInt(endpoint.company_id))
        .executeTakeFirst()
      if (event === undefined) return false
      // A fresh start: no attempt counted, so the plugin's retry schedule begins again.
      const due = { status: 'pending', attempts: 0, next_attempt_at: at, lease: null, updated_at: at }
      await trx
        .insertInto(DELIVERIES)
        .values({
          endpoint_id: endpointId,
          company_id: c.readInt(endpoint.company_id),
          change_event_id: c.readInt(event.id),
          event_id: eventId,
          event_type: event.type as string,
          created_at: at,
          ...due,
        })
        // The delivery the event already has is reused; its attempts stay in its history.
        .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doUpdateSet(due))
        .execute()
      await this.#notify?.(trx)
      await this.#audit(trx, audit)
      return true
    })
  }

  recover(endpointId: string, since: Date, now: Date, audit?: AuditEntry): Promise<number> {
    const c = this.codec
    const at = c.instant(now)
    return this.#transact(async (trx) => {
      const result = await trx
        .updateTable(DELIVERIES)
        .set({ status: 'pending', attempts: 0, next_attempt_at: at, lease: null, updated_at: at })
        .where('endpoint_id', '=', endpointId)
        .where('status', '=', 'failed')
        .where('created_at', '>=', c.instant(since))
        .executeTakeFirst()
      const recovered = Number(result.numUpdatedRows)
      if (recovered > 0) {
        await this.#notify?.(trx)
        await this.#audit(trx, audit)
      }
      return recovered
    })
  }

  sendTest(endpointId: string, event: ChangeEvent, now: Date, audit?: AuditEntry): Promise<boolean> {
    const c = this.codec
    const at = c.instant(now)
    return this.#transact(async (trx) => {
      // Shared, like the outbox's read: a concurrent delete waits, then takes this delivery with it.
      let found = trx.selectFrom(ENDPOINTS).select('company_id').where('id', '=', endpointId)
      if (this.#lockRows) found = found.forShare()
      const endpoint = await found.executeTakeFirst()
      if (endpoint === undefined) return false
      // Not through the outbox: no other endpoint, whatever it subscribes to, gets this event.
      const stored = await trx
        .insertInto(EVENTS)
        // resource_id is NOT NULL; a test event concerns no resource, and the plugin passes 0.
        .values(changeEventRow(c, event))
        .returning('id')
        .executeTakeFirstOrThrow()
      await trx
        .insertInto(DELIVERIES)
        .values(pendingDelivery(endpointId, { ...event, company_id: c.readInt(endpoint.company_id) }, c.readInt(stored.id), at))
        .execute()
      await this.#notify?.(trx)
      await this.#audit(trx, audit)
      return true
    })
  }

  async eventPayload(endpointId: string, eventId: string): Promise<string | null> {
    const row = await this.db
      .selectFrom(`${DELIVERIES} as d`)
      .innerJoin(`${EVENTS} as e`, 'e.id', 'd.change_event_id')
      .select('e.payload')
      .where('d.endpoint_id', '=', endpointId)
      .where('d.event_id', '=', eventId)
      .executeTakeFirst()
    return (row?.payload as string | null | undefined) ?? null
  }

  purgeFinished(before: Date, limit: number): Promise<number> {
    if (!Number.isInteger(limit) || limit < 1) return Promise.resolve(0)
    const c = this.codec
    const cutoff = c.instant(before)
    return this.#transact(async (trx) => {
      // A bounded batch keeps the transaction (and on SQLite, the write lock) short; the
      // caller loops until 0 comes back.
      const finished = trx
        .selectFrom(DELIVERIES)
        .select('id')
        .where('status', 'in', ['delivered', 'failed'])
        .where('updated_at', '<', cutoff)
        .orderBy('updated_at')
        .orderBy('id')
        .limit(limit)
      // The conditions again on the rows themselves: Postgres re-checks them on a row a
      // concurrent redelivery has made pending, and keeps it.
      const deliveries = await trx
        .deleteFrom(DELIVERIES)
        .where('id', 'in', finished)
        .where('status', 'in', ['delivered', 'failed'])
        .where('updated_at', '<', cutoff)
        .returning('id')
        .execute()
      if (deliveries.length > 0) {
        await trx
          .deleteFrom(ATTEMPTS)
          .where(
            'delivery_id',
            'in',
            deliveries.map((row) => c.readInt(row.id)),
          )
          .execute()
      }
      const room = limit - deliveries.length
      if (room === 0) return deliveries.length
      const unneeded = trx
        .selectFrom(`${EVENTS} as ev`)
        .select('ev.id')
        .where('ev.occurred_at', '<', cutoff)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom(`${DELIVERIES} as dl`)
                .select(sql<number>`1`.as('one'))
                .whereRef('dl.change_event_id', '=', 'ev.id'),
            ),
          ),
        )
        .orderBy('ev.id')
        .limit(room)
      const events = await trx.deleteFrom(EVENTS).where('id', 'in', unneeded).executeTakeFirst()
      return deliveries.length + Number(events.numDeletedRows)
    })
  }

  /** Writes `audit`, if given, on the change's transaction `trx`: call it once the change has happened. */
  async #audit(trx: QueryDb, audit: AuditEntry | undefined): Promise<void> {
    if (audit !== undefined) await insertAuditEntry(trx, this.codec, audit)
  }

  /** `auditedChange` on this store's handle and transactor. */
  #audited<T>(audit: AuditEntry | undefined, work: (db: QueryDb) => Promise<T>, happened?: (result: T) => boolean): Promise<T> {
    return auditedChange(this.db, this.#transact, this.codec, audit, work, happened)
  }

  /** The host's transaction (or `Kysely` instance) as a handle on our tables. */
  #hostHandle(transaction: unknown): QueryDb {
    const handle = transaction as Partial<QueryDb> | null
    if (handle === null || typeof handle !== 'object' || typeof handle.insertInto !== 'function' || typeof handle.withSchema !== 'function') {
      throw new TypeError('SqlWebhookStore.publish: pass a Kysely transaction (or a Kysely instance) on the adapter\'s database')
    }
    const db = handle as QueryDb
    // Applying the schema to a handle that already has it (`adapter.db`'s own transactions) changes nothing.
    return this.#schema === undefined ? db : db.withSchema(this.#schema)
  }

  #instantOrNull(value: Date | null): unknown {
    return value === null ? null : this.codec.instant(value)
  }

  #readInstantOrNull(value: unknown): Date | null {
    return value === null || value === undefined ? null : this.codec.readInstant(value)
  }

  #endpoint(row: Record<string, any>): WebhookEndpointRecord {
    const c = this.codec
    return {
      id: row.id,
      company_id: c.readInt(row.company_id),
      url: row.url,
      description: row.description,
      events: c.readJson<string[]>(row.events),
      status: row.status,
      disabled_reason: row.disabled_reason,
      secret: row.secret,
      previous_secret: row.previous_secret,
      previous_secret_expires_at: this.#readInstantOrNull(row.previous_secret_expires_at),
      failing_since: this.#readInstantOrNull(row.failing_since),
      created_at: c.readInstant(row.created_at),
      updated_at: c.readInstant(row.updated_at),
    }
  }

  #delivery(row: Record<string, any>): WebhookDeliveryRecord {
    const c = this.codec
    return {
      id: c.readInt(row.id),
      endpoint_id: row.endpoint_id,
      event_id: row.event_id,
      event_type: row.event_type,
      status: row.status,
      attempts: c.readInt(row.attempts),
      next_attempt_at: this.#readInstantOrNull(row.next_attempt_at),
      created_at: c.readInstant(row.created_at),
      updated_at: c.readInstant(row.updated_at),
    }
  }

  #attempt(row: Record<string, any>): WebhookAttemptRecord {
    const c = this.codec
    return {
      number: c.readInt(row.number),
      attempted_at: c.readInstant(row.attempted_at),
      status_code: row.status_code === null ? null : c.readInt(row.status_code),
      duration_ms: c.readInt(row.duration_ms),
      response_body: row.response_body,
      error: row.error,
      succeeded: c.readBool(row.succeeded),
    }
  }
}

/** Rolls `finishAttempt`'s transaction back when the claim turns out to be lost part-way. */
class ClaimLost extends Error {}
