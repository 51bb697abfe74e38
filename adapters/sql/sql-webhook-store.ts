import { randomBytes } from 'node:crypto'
import { CompiledQuery, sql, type RawBuilder } from 'kysely'
import type { AuditEntry } from '../../src/ports/audit-store.js'
import type {
  DeliveryBacklog,
  AttemptFinish,
  AttemptOutcome,
  ClaimedDelivery,
  ClaimPolicy,
  EndpointHealth,
  FeedPage,
  FeedQuery,
  FinishedAttempt,
  DeliveryPage,
  DeliveryQuery,
  ReplayPeriod,
  ReplayResult,
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
import { FIXED_TEXT, param, prepareCompiled, runPrepared, type PreparedQuery, type QueryDb } from './prepared.js'
import { HEALTHY, healthChanged, nextEndpointHealth } from '../../src/webhooks/breaker.js'
import { auditedChange, insertAuditEntry } from './sql-audit-store.js'
import { sqlTransactor, type SqlTransactor, type SqlWriteOptions } from './sql-transactor.js'
import { changeEventRow, pendingDelivery, recordOutboxEvents, type SqlOutboxOptions } from './webhook-outbox.js'
import { purgeFeedEvents, SqlEventFeed } from './sql-event-feed.js'

const ENDPOINTS = 'wfa_webhook_endpoints'
const DELIVERIES = 'wfa_webhook_deliveries'
const ATTEMPTS = 'wfa_webhook_attempts'
const EVENTS = 'wfa_change_events'
/** Postgres: the advisory lock (two-int form) that makes claims one at a time, so caps counted in one claim hold across instances. */
const CLAIM_LOCK = '2026112608, 1'
/** Rows per statement of `replay`: far below both dialects' bound-parameter limits (a delivery row binds 11). */
const REPLAY_ROWS_PER_STATEMENT = 500
/** Finishes recorded per transaction of `finishAttempts`: each binds about 13 parameters, far below both dialects' limits. */
const FINISHES_PER_TRANSACTION = 200
/** Stands for "no limit" in the claim query when `claimDue` gets no policy. */
const NO_LIMIT = 1_000_000_000
/** Compiled claim statements a store keeps (`#claimStatement`): one per kind, claim size and policy, so a few dozen; the bound only guards against a misuse. */
const CLAIM_STATEMENTS_KEPT = 256

/** The named values of the ranking (`#fairDue`): now, when an attempt still in flight is slow, and how many to rank. */
function claimValues(c: SqlCodec, now: Date, limit: number, policy: ClaimPolicy | undefined): Record<string, unknown> {
  // Without a policy no attempt is slow: every claim was made after 1970.
  return { at: c.instant(now), slow: c.instant(policy?.slowBefore ?? new Date(0)), limit }
}

/** Whether a batch of finishes can be recorded as successes at once: some, all succeeded, each of its own delivery. */
function successesOnly(finishes: readonly AttemptFinish[]): boolean {
  const ids = new Set(finishes.map((finish) => finish.claim.delivery_id))
  return finishes.length > 0 && ids.size === finishes.length && finishes.every((finish) => finish.outcome.attempt.succeeded)
}

/**
 * A success's fields in the order both dialects' statements of successes read them: delivery id,
 * lease, next status, next attempt, updated at, attempt number, attempted at, status code,
 * duration, response body, error.
 */
function successFields(c: SqlCodec, { claim, outcome, now }: AttemptFinish): unknown[] {
  const { attempt, next } = outcome
  return [
    claim.delivery_id,
    claim.lease,
    next.status,
    next.status === 'pending' ? c.instant(next.at) : null,
    c.instant(now),
    attempt.number,
    c.instant(attempt.attempted_at),
    attempt.status_code,
    attempt.duration_ms,
    attempt.response_body,
    attempt.error,
  ]
}

/** A delivery a claim updated, with its event's columns and its endpoint (undefined when gone). */
interface ClaimRow {
  id: unknown
  attempts: unknown
  event: { event_id: unknown; type: unknown; company_id: unknown; payload: unknown } | undefined
  endpoint: WebhookEndpointRecord | undefined
}

/** How the store adapts to a dialect; see `SqlWriteOptions` for the shared fields. */
export interface SqlWebhookOptions extends SqlWriteOptions {
  /**
   * The schema our tables live in (the Postgres adapter's `schema`): `publish` applies it to
   * the host's handle, whose queries name our tables unqualified.
   */
  schema?: string
  /** Backs the optional `subscribeDue`; without it the store has none and dispatchers poll. */
  subscribeDue?: DueSignal['subscribe']
  /**
   * Postgres: the channel `notifyDue` notifies. With it, a batch of successes is recorded in one
   * statement that also notifies (see `finishAttempts`); without it, in a transaction.
   */
  dueChannel?: string
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
  readonly #feed: SqlEventFeed
  readonly #dueChannel: string | undefined
  /** `#successesInOneStatement`'s SQL, without and with the notification: built at first use. */
  #successSql: [string, string] | undefined
  /** `#sqliteClaimStatements`: built at first use. */
  #sqliteClaimSql: { update: PreparedQuery; events: PreparedQuery; endpoints: PreparedQuery } | undefined
  /** `#successesInTwoStatements`' SQL: built at first use. */
  #sqliteSuccessSql: { move: PreparedQuery; insert: PreparedQuery } | undefined
  /** `#claimBeginSql`: built at first use. */
  #claimBegin: string | undefined
  /** The claim's statements, compiled at first use per kind, claim size and policy (`#claimStatement`). */
  readonly #claimStatements = new Map<string, PreparedQuery>()
  /** The last claim of this store claimed something: the next one skips its first read. */
  #claimedLast = false
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
    this.#dueChannel = options.dueChannel
    this.#feed = new SqlEventFeed(db, codec, this.#transact, this.#lockRows)
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
          consecutive_failures: endpoint.consecutive_failures,
          paused_until: this.#instantOrNull(endpoint.paused_until),
          pause_ms: endpoint.pause_ms,
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
          .set({ status: 'enabled', disabled_reason: null, ...HEALTHY_COLUMNS, updated_at: this.codec.instant(now) })
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

  async claimDue(now: Date, leaseUntil: Date, limit: number, policy?: ClaimPolicy): Promise<ClaimedDelivery[]> {
    if (!Number.isInteger(limit) || limit < 1) return []
    // Most claims of a busy dispatcher find nothing new (a finished attempt wakes it): a read
    // first keeps those out of a write transaction (SQLite's one writer) and the claim lock.
    // Not after a claim that found some: draining a backlog, the next claim most likely finds
    // more, and the read would only double the ranking's cost.
    if (!this.#claimedLast) {
      const anything = await this.#runClaimStatement(this.db, 'due', 1, policy, claimValues(this.codec, now, 1, policy))
      if (anything.length === 0) return []
    }
    const claims = await this.#claim(now, leaseUntil, limit, policy)
    this.#claimedLast = claims.length > 0
    return claims
  }

  #claim(now: Date, leaseUntil: Date, limit: number, policy: ClaimPolicy | undefined): Promise<ClaimedDelivery[]> {
    const c = this.codec
    const lease = randomBytes(16).toString('base64url')
    return this.#claimTransaction(async (trx) => {
      const rows = this.#lockRows
        ? await this.#claimInOneStatement(trx, now, leaseUntil, lease, limit, policy)
        : await this.#claimByIds(trx, now, leaseUntil, lease, limit, policy)
      const claims: ClaimedDelivery[] = []
      const orphans: number[] = []
      for (const row of rows) {
        const deliveryId = c.readInt(row.id)
        const { event, endpoint } = row
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

  /**
   * A claim's transaction. Postgres: `BEGIN`, the claim's plan mode and the claim lock in one
   * round trip (`#claimBeginSql`, one simple query; the lock keeps a statement of its own, see `#claimInOneStatement`),
   * then `work`, then `COMMIT`; any failure rolls back, the lock's wait (bounded by
   * `statement_timeout`) included. SQLite: the dialect's transaction, whose one writer needs no lock.
   */
  async #claimTransaction<T>(work: (trx: QueryDb) => Promise<T>): Promise<T> {
    if (!this.#lockRows) return this.#transact(work)
    return this.db.connection().execute(async (conn) => {
      let result: T
      try {
        await conn.executeQuery(CompiledQuery.raw((this.#claimBegin ??= this.#claimBeginSql())))
        result = await work(conn)
      } catch (error) {
        // A lost connection cannot roll back; the pool discards it, and the server ends the transaction.
        await conn.executeQuery(CompiledQuery.raw('rollback')).catch(() => {})
        throw error
      }
      await conn.executeQuery(CompiledQuery.raw('commit'))
      return result
    })
  }

  /**
   * Postgres: what a claim's transaction begins with, one simple query (one round trip): `BEGIN`,
   * its commit's durability, how the claim statement is planned, and the claim lock.
   *
   * The claim commits without waiting for its WAL to reach the disk (`synchronous_commit = off`,
   * for this transaction only). A claim lost to a database crash is a lease lost with it: its
   * deliveries are due again at once and are attempted again, as when a dispatcher dies
   * mid-attempt (at least once; the receiver sees the same webhook-id), and the record of an
   * attempt sent meanwhile finds no lease and records nothing. Any later commit that waits for
   * the disk (every record does) flushes the claim's WAL with its own, which comes after it, so
   * an attempt is never recorded under a claim the database then forgets. Records keep their
   * durable commit: an attempt's log and the delivery's next state are never lost once recorded.
   * This saved about a tenth of a spread backlog's drain time on Postgres (docs/benchmarks.md).
   *
   * The claim is a named prepared statement (`FIXED_TEXT`). Planned for its values at each
   * execution (a custom plan), planning took about a quarter of its time on the server, and the
   * plan came out the same whatever the values: its shape is fixed by the materialized `room` and
   * the limit on each index range. So once the deliveries table has statistics, the claim uses a
   * generic plan, made once per connection; Postgres makes it again whenever ANALYZE (autovacuum's
   * included) has changed the statistics, as for any prepared statement. "Has statistics": the
   * table's last ANALYZE or autoanalyze time is known.
   * Until the table was first analyzed, the claim is planned as the connection's setting says (by
   * default, for its values, as before): a generic plan made without statistics read every
   * pending row twice per claim (docs/decisions.md, "Deliveries in batches").
   * `set_config(…, true)` lasts until the transaction ends: no other statement on the connection
   * is planned differently.
   */
  #claimBeginSql(): string {
    // The table's name as `#table` writes it, as a text literal for `to_regclass` (Kysely quotes it).
    const table = sql.lit(sql`${this.#table(DELIVERIES)}`.compile(this.db).sql)
    // The statistics functions rather than the `pg_stat_all_tables` view: planning the view's
    // query cost each claim about 0.25 ms of the server's time.
    return sql`begin;
      set local synchronous_commit = off;
      select set_config('plan_cache_mode', case when coalesce(pg_stat_get_last_analyze_time(t), pg_stat_get_last_autoanalyze_time(t)) is not null
        then 'force_generic_plan' else current_setting('plan_cache_mode') end, true) from to_regclass(${table}) t;
      select pg_advisory_xact_lock(${sql.raw(CLAIM_LOCK)})`.compile(this.db).sql
  }

  /**
   * Postgres: the claim in one statement after the claim lock: the ranking (`#fairDue`), the
   * rows it chose that are still due and not held by another transaction (a finish, a disable:
   * skipped, not waited for), their update, and their events and endpoints, joined. The lock
   * makes claims one at a time across instances, so the in-flight counts a claim reads are those
   * the previous claim left and the caps hold cluster-wide. It comes first, in a statement of
   * its own (`#claimTransaction`): a statement reads as of its start, so the claim must start
   * once the lock is held. Three round trips a claim (begin with the lock, the claim, commit)
   * where a ranking, an update and two reads made seven.
   */
  async #claimInOneStatement(trx: QueryDb, now: Date, leaseUntil: Date, lease: string, limit: number, policy: ClaimPolicy | undefined): Promise<ClaimRow[]> {
    const c = this.codec
    const values = { ...claimValues(c, now, limit, policy), lease_until: c.instant(leaseUntil), lease }
    const rows = await this.#runClaimStatement(trx, 'claim', limit, policy, values)
    return rows.map((row) => ({
      id: row.claim_id,
      attempts: row.claim_attempts,
      event: row.event_row == null ? undefined : { event_id: row.event_id, type: row.event_type, company_id: row.event_company_id, payload: row.event_payload },
      endpoint: row.id == null ? undefined : this.#endpoint(row),
    }))
  }

  /**
   * SQLite (one writer: nothing else holds a row): the ranking, the update of the rows it chose
   * by id, then their events and endpoints.
   */
  async #claimByIds(trx: QueryDb, now: Date, leaseUntil: Date, lease: string, limit: number, policy: ClaimPolicy | undefined): Promise<ClaimRow[]> {
    const c = this.codec
    const chosen = (await this.#runClaimStatement(trx, 'due', limit, policy, claimValues(c, now, limit, policy))).map((row) => c.readInt(row.id))
    if (chosen.length === 0) return []
    const { update, events: readEvents, endpoints: readEndpoints } = (this.#sqliteClaimSql ??= this.#sqliteClaimStatements())
    const claimed = await runPrepared(trx, update, { ids: JSON.stringify(chosen), lease_until: c.instant(leaseUntil), lease, at: c.instant(now) })
    if (claimed.length === 0) return []
    const eventIds = [...new Set(claimed.map((row) => c.readInt(row.change_event_id)))]
    const endpointIds = [...new Set(claimed.map((row) => row.endpoint_id as string))]
    const events = new Map((await runPrepared(trx, readEvents, { ids: JSON.stringify(eventIds) })).map((row) => [c.readInt(row.id), row as ClaimRow['event']]))
    const endpoints = new Map((await runPrepared(trx, readEndpoints, { ids: JSON.stringify(endpointIds) })).map((row) => [row.id as string, this.#endpoint(row)]))
    return claimed.map((row) => ({
      id: row.id,
      attempts: row.attempts,
      event: events.get(c.readInt(row.change_event_id)),
      endpoint: endpoints.get(row.endpoint_id as string),
    }))
  }

  /**
   * SQLite's claim after its ranking (`#claimByIds`): the update of the chosen deliveries, then
   * their events and endpoints, each a fixed text with its ids as one JSON array (`json_each`),
   * compiled once: building them with Kysely at every claim cost more of the event loop than
   * running them. The update finds its rows by id only: a plain `status = 'pending'` term lets
   * the planner read the status indexes instead, i.e. every pending row of the backlog, on every
   * claim.
   */
  #sqliteClaimStatements(): { update: PreparedQuery; events: PreparedQuery; endpoints: PreparedQuery } {
    const ids = sql`(select value from json_each(${param('ids')}))`
    const update = sql`update ${this.#table(DELIVERIES)}
      set attempts = attempts + 1, next_attempt_at = ${param('lease_until')}, lease = ${param('lease')}, updated_at = ${param('at')}
      where id in ${ids} and case when status = 'pending' and next_attempt_at <= ${param('at')} then 1 else 0 end = 1
      returning id, endpoint_id, change_event_id, attempts`
    const events = sql`select id, event_id, type, company_id, payload from ${this.#table(EVENTS)} where id in ${ids}`
    const endpoints = sql`select * from ${this.#table(ENDPOINTS)} where id in ${ids}`
    return {
      update: prepareCompiled(update.compile(this.db)),
      events: prepareCompiled(events.compile(this.db)),
      endpoints: prepareCompiled(endpoints.compile(this.db)),
    }
  }

  /** One of our tables in raw SQL, which `withSchema` does not rewrite: named with the schema. */
  #table(name: string) {
    return sql.table(this.#schema === undefined ? name : `${this.#schema}.${name}`)
  }

  /** Runs a claim statement (`#claimStatement`) with `values` bound by name. */
  #runClaimStatement(db: QueryDb, kind: 'due' | 'claim', limit: number, policy: ClaimPolicy | undefined, values: Record<string, unknown>) {
    return runPrepared(db, this.#claimStatement(kind, limit, policy), values)
  }

  /**
   * A claim statement, compiled once per kind, claim size and policy: `due`, the ranking alone
   * (`#fairDue`: SQLite's claim, and the read before a claim), or `claim`, Postgres' claim in one
   * statement (`#claimInOneStatement`). Their text varies only with the claim's size and the
   * policy's caps, which are literals; the times and the lease are named parameters (`at`,
   * `slow`, `lease_until`, `lease`), and so is the size where a LIMIT may be bound (`limit`,
   * `SqlCodec.boundLimits`). Building them with Kysely cost each claim a few hundred
   * microseconds of the event loop.
   */
  #claimStatement(kind: 'due' | 'claim', limit: number, policy: ClaimPolicy | undefined): PreparedQuery {
    const caps = policy === undefined ? 'none' : `${policy.endpointLimit},${policy.companyLimit},${policy.troubledCompanyLimit}`
    const key = `${kind} ${limit} ${caps}`
    let statement = this.#claimStatements.get(key)
    if (statement !== undefined) return statement
    const due = this.#fairDue(limit, policy)
    const at = param('at')
    const text =
      kind === 'due'
        ? due
        : sql`${sql.raw(FIXED_TEXT)}
      with claimed as (
        update ${this.#table(DELIVERIES)} d
        set attempts = d.attempts + 1, next_attempt_at = ${param('lease_until')}, lease = ${param('lease')}, updated_at = ${at}
        where d.id in (
          select p.id from ${this.#table(DELIVERIES)} p
          where p.id in (${due}) and p.status = 'pending' and p.next_attempt_at <= ${at}
          for update skip locked
        ) and d.status = 'pending'
        returning d.id, d.endpoint_id, d.change_event_id, d.attempts
      )
      select ep.*, claimed.id as claim_id, claimed.attempts as claim_attempts, ev.id as event_row,
        ev.event_id as event_id, ev.type as event_type, ev.company_id as event_company_id, ev.payload as event_payload
      from claimed
      left join ${this.#table(EVENTS)} ev on ev.id = claimed.change_event_id
      left join ${this.#table(ENDPOINTS)} ep on ep.id = claimed.endpoint_id`
    statement = prepareCompiled(text.compile(this.db))
    if (this.#claimStatements.size < CLAIM_STATEMENTS_KEPT) this.#claimStatements.set(key, statement)
    return statement
  }

  /**
   * The ids of up to `limit` due deliveries to claim, fairly (see `WebhookStore.claimDue`). One
   * statement on both dialects: in-flight attempts per endpoint (deliveries under a live lease,
   * a partial index), the endpoints that may take one more, each one's first due deliveries (an
   * index range, never its whole backlog), then two rankings — per endpoint (oldest due first,
   * cut at the endpoint's room) and per company and pool (cut at the company's room) — and
   * round-robin order: every company's first before any second.
   * Its cost must not grow with the backlog of endpoints that cannot take more (capped, paused,
   * hanging: on SQLite the claim runs on the event loop, often). So the candidate endpoints come
   * first — `room`, materialized: the enabled endpoints with their room, a small set — and
   * drive the join (`cross join`: SQLite keeps the left table as the outer loop; Postgres plans
   * it as the inner join it is), each reading its first due rows by the
   * `(endpoint_id, next_attempt_at, id)` partial index up to its cutoff (Postgres: one range,
   * bounded by a row value; SQLite: two, see `SqlCodec.rowValueRanges`). Scanning the pending
   * rows first instead (SQLite's choice for a plain join) read the whole backlog on every claim.
   * `flight` reads the leased partial index (a lease is only ever held by a pending delivery),
   * not the due index, whose range `next_attempt_at > now` holds every retry waiting.
   * Raw SQL is not rewritten by `withSchema`, so tables are named with the schema (`#table`).
   */
  #fairDue(limit: number, policy: ClaimPolicy | undefined) {
    const c = this.codec
    const at = param('at')
    const slow = param('slow')
    // Whole numbers as literals: a parameter in `case … else $1 end - count` has no type Postgres can infer.
    const count = (value: number | undefined) => sql.lit(Math.max(0, Math.min(NO_LIMIT, Math.floor(value ?? NO_LIMIT))))
    const endpointLimit = count(policy?.endpointLimit)
    const companyLimit = count(policy?.companyLimit)
    const troubledLimit = count(policy?.troubledCompanyLimit)
    // Without a policy nothing is capped but the breaker's probe (one at a time, always).
    const troubledEndpointLimit = policy === undefined ? count(NO_LIMIT) : sql.lit(1)
    // An endpoint never adds more than this to one batch: each reads only its first due rows (an index range).
    const skipToLast = sql.lit(Math.max(1, Math.min(policy?.endpointLimit ?? NO_LIMIT, limit)) - 1)
    // A column of the last due delivery an endpoint (`ep`) could add to this batch: an index range.
    const lastDue = (column: 'next_attempt_at' | 'id') =>
      sql`(select ${sql.raw(`last.${column}`)} from ${this.#table(DELIVERIES)} last
             where last.endpoint_id = ep.id and last.status = 'pending' and last.next_attempt_at <= ${at}
             order by last.next_attempt_at, last.id limit 1 offset ${skipToLast})`
    // Each room's due deliveries up to its cutoff in (due time, id) order, read as index ranges.
    const candidates = (bound: RawBuilder<unknown>) =>
      sql`select d.id, d.endpoint_id, d.next_attempt_at, r.company_id, r.troubled, r.room
          from room r cross join ${this.#table(DELIVERIES)} d
          where r.room > 0 and d.endpoint_id = r.id and d.status = 'pending' and ${bound}`
    const upToCutoff = c.rowValueRanges
      ? // The row value decides; the plain bound on the time, which it implies, gives the planner its range.
        candidates(sql`d.next_attempt_at <= r.cutoff and (d.next_attempt_at, d.id) <= (r.cutoff, r.cutoff_id)`)
      : // Before the cutoff's time, then at its time up to its id: bounded by its time alone, one
        // range read every delivery due at that time (those published in one transaction).
        sql`${candidates(sql`d.next_attempt_at < r.cutoff`)}
          union all
          ${candidates(sql`d.next_attempt_at = r.cutoff and d.id <= r.cutoff_id`)}`
    return sql<{ id: unknown }>`
      with flight as (
        select endpoint_id, count(*) as inflight, sum(case when updated_at < ${slow} then 1 else 0 end) as slow
        from ${this.#table(DELIVERIES)}
        where lease is not null and next_attempt_at > ${at}
        group by endpoint_id
      ),
      ep as (
        select e.id, e.company_id, coalesce(f.inflight, 0) as inflight, e.paused_until,
          case when e.consecutive_failures > 0 or e.paused_until is not null or coalesce(f.slow, 0) > 0 then 1 else 0 end as troubled
        from ${this.#table(ENDPOINTS)} e left join flight f on f.endpoint_id = e.id
        where e.status = 'enabled'
      ),
      pools as (
        select company_id, troubled, sum(inflight) as inflight from ep where inflight > 0 group by company_id, troubled
      ),
      room as materialized (
        select id, company_id, troubled,
          (case when paused_until is not null then 1 when troubled = 1 then ${troubledEndpointLimit} else ${endpointLimit} end) - inflight as room,
          -- The due time and id of the last delivery the endpoint could add to this batch (with
          -- fewer due than that, every due one): deliveries published in one transaction share
          -- their due time, so the time alone let the ranking read all of them.
          coalesce(${lastDue('next_attempt_at')}, ${at}) as cutoff,
          coalesce(${lastDue('id')}, ${sql.lit(Number.MAX_SAFE_INTEGER)}) as cutoff_id
        from ep
        where paused_until is null or (paused_until <= ${at} and inflight = 0)
      ),
      ranked as (
        select u.id, u.next_attempt_at, u.company_id, u.troubled, u.room,
          row_number() over (partition by u.endpoint_id order by u.next_attempt_at, u.id) as endpoint_rank
        from (${upToCutoff}) u
      ),
      fitting as (
        select id, next_attempt_at, company_id, troubled,
          row_number() over (partition by company_id, troubled order by endpoint_rank, next_attempt_at, id) as company_rank
        from ranked
        where endpoint_rank <= room
      )
      select f.id from fitting f left join pools p on p.company_id = f.company_id and p.troubled = f.troubled
      where f.company_rank <= (case when f.troubled = 1 then ${troubledLimit} else ${companyLimit} end) - coalesce(p.inflight, 0)
      order by f.company_rank, f.next_attempt_at, f.id
      limit ${c.boundLimits ? param('limit') : sql.lit(limit)}`
  }

  async finishAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Promise<FinishedAttempt | null> {
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
        if (held === undefined) return null
        // The endpoint's health first, and only when it changes: a healthy endpoint's success
        // does not even lock its row, so attempts to one endpoint finish side by side instead of
        // queueing on it. A failure reads the health under the row's lock (Postgres) and writes
        // the next one, so of several instances failing at once exactly one opens the breaker.
        // The endpoint is locked before the delivery, in the order `disableEndpoint` and
        // `deleteEndpoint` take them, so neither can deadlock with this.
        const endpointId = held.endpoint_id as string
        let finished: FinishedAttempt
        if (attempt.succeeded) {
          const cleared = await trx
            .updateTable(ENDPOINTS)
            .set(HEALTHY_COLUMNS)
            .where('id', '=', endpointId)
            .where((eb) => eb.or([eb('consecutive_failures', '>', 0), eb('failing_since', 'is not', null), eb('paused_until', 'is not', null)]))
            .executeTakeFirst()
          finished = { opened: false, closed: cleared.numUpdatedRows > 0n, health: HEALTHY }
        } else {
          let read = trx.selectFrom(ENDPOINTS).select(['failing_since', 'consecutive_failures', 'paused_until', 'pause_ms']).where('id', '=', endpointId)
          if (this.#lockRows) read = read.forUpdate()
          const row = await read.executeTakeFirst()
          const before: EndpointHealth =
            row === undefined
              ? HEALTHY
              : {
                  failing_since: this.#readInstantOrNull(row.failing_since),
                  consecutive_failures: c.readInt(row.consecutive_failures),
                  paused_until: this.#readInstantOrNull(row.paused_until),
                  pause_ms: c.readInt(row.pause_ms),
                }
          const next = nextEndpointHealth(before, false, outcome.breaker, now)
          finished = next
          if (row !== undefined && healthChanged(before, next.health)) await this.#writeHealth(trx, endpointId, next.health)
        }
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
        return finished
      })
    } catch (error) {
      if (error instanceof ClaimLost) return null
      throw error
    }
  }

  async finishAttempts(finishes: readonly AttemptFinish[], wake = false): Promise<Array<FinishedAttempt | null>> {
    const answers: Array<FinishedAttempt | null> = []
    for (let start = 0; start < finishes.length; start += FINISHES_PER_TRANSACTION) {
      const part = finishes.slice(start, start + FINISHES_PER_TRANSACTION)
      answers.push(...(await this.#finishBatch(part, wake)))
    }
    return answers
  }

  /**
   * One transaction for many finishes (see `WebhookStore.finishAttempts`), in five statements
   * whatever their number: which claims still hold their delivery, the endpoints whose health
   * may change (locked, in id order), one update of the deliveries, one insert of the attempts,
   * and the health of each endpoint that changed. A healthy endpoint's successes lock nothing
   * of it, as in `finishAttempt`. The delivery update re-checks each lease: a claim lost between
   * the first read and it (Postgres: a lease that ran out and was taken, a disable) rolls the
   * batch back, since its health change was counted, and the batch is done again without it.
   */
  async #finishBatch(finishes: readonly AttemptFinish[], wake: boolean): Promise<Array<FinishedAttempt | null>> {
    // Postgres, when every notification it must send can go in the statement: a batch of successes at once.
    if (this.#lockRows && (this.#notify === undefined || this.#dueChannel !== undefined)) {
      const answers = await this.#successesInOneStatement(finishes, wake)
      if (answers !== undefined) return answers
    }
    if (!this.#lockRows) {
      const answers = await this.#successesInTwoStatements(finishes, wake)
      if (answers !== undefined) return answers
    }
    return this.#finishInTransaction(finishes, wake)
  }

  /**
   * Postgres: a batch whose every finish is a success on a healthy endpoint, each of its own
   * claim, recorded in one statement outside any transaction (a statement is atomic): the
   * deliveries move to their next state, their attempts are inserted, and the notification is
   * sent if `wake`. A healthy endpoint's success changes nothing of it, and locks nothing of it,
   * as in `#finishIn`. This is the whole record of a healthy drain: one round trip where the
   * transaction takes seven.
   * The statement moves nothing unless every finish still holds its delivery and its endpoint is
   * healthy, as read at its start: otherwise the caller records the batch in the transaction, and
   * the batch stays all or nothing. A delivery that another transaction changed after that read
   * (its lease taken, a disable) is not moved: a lost claim, answered null as in `#finishIn`.
   * @returns the answers, or undefined when the statement recorded nothing (a failure in the
   *   batch, a claim finished twice, an endpoint with failures or a pause, a claim lost).
   */
  async #successesInOneStatement(finishes: readonly AttemptFinish[], wake: boolean): Promise<Array<FinishedAttempt | null> | undefined> {
    if (!successesOnly(finishes)) return undefined
    const columns: unknown[][] = Array.from({ length: 11 }, () => [])
    for (const finish of finishes) successFields(this.codec, finish).forEach((value, column) => (columns[column] as unknown[]).push(value))
    const [quiet, announcing] = (this.#successSql ??= this.#successStatements())
    const parameters = wake && this.#dueChannel !== undefined ? [...columns, this.#dueChannel] : columns
    const { rows } = await this.db.executeQuery<{ ids: unknown[] }>(CompiledQuery.raw(parameters.length > columns.length ? announcing : quiet, parameters))
    const moved = new Set((rows[0]?.ids ?? []).map((id) => this.codec.readInt(id)))
    if (moved.size === 0) return undefined
    return finishes.map((finish) => (moved.has(finish.claim.delivery_id) ? nextEndpointHealth(HEALTHY, true, finish.outcome.breaker, finish.now) : null))
  }

  /**
   * The SQL of `#successesInOneStatement`: the finishes as parallel arrays (`unnest`), so the text
   * is the same for any number of them and is parsed once per connection's cache of it. `held`
   * lists the finishes that hold their delivery on a healthy endpoint; the update moves rows
   * only if that is all of them, and re-checks each row (a row changed since the statement began
   * is re-read); the insert takes only the rows the update moved; `array(…)` answers one row
   * whatever moved, and the notification is sent once.
   */
  #successStatements(): [string, string] {
    // Compiled once, for the tables' names only: the values are the $n placeholders written here.
    const body = sql`${sql.raw(FIXED_TEXT)}with f as (
        select * from unnest($1::bigint[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[],
          $6::integer[], $7::timestamptz[], $8::integer[], $9::integer[], $10::text[], $11::text[])
          as f(id, lease, status, next_attempt_at, updated_at, number, attempted_at, status_code, duration_ms, response_body, error)
      ),
      held as (
        select d.id from ${this.#table(DELIVERIES)} d join f on d.id = f.id and d.lease = f.lease
        where d.status = 'pending'
          and not exists (
            select 1 from ${this.#table(ENDPOINTS)} e
            where e.id = d.endpoint_id and (e.consecutive_failures > 0 or e.failing_since is not null or e.paused_until is not null)
          )
      ),
      moved as (
        update ${this.#table(DELIVERIES)} d
        set status = f.status, next_attempt_at = f.next_attempt_at, lease = null, updated_at = f.updated_at
        from f
        where d.id = f.id and d.lease = f.lease and d.status = 'pending'
          and (select count(*) from held) = cardinality($1::bigint[])
        returning d.id
      ),
      added as (
        insert into ${this.#table(ATTEMPTS)} (delivery_id, number, attempted_at, status_code, duration_ms, response_body, error, succeeded)
        select f.id, f.number, f.attempted_at, f.status_code, f.duration_ms, f.response_body, f.error, true
        from f join moved on moved.id = f.id
      )
      select array(select id from moved) as ids`.compile(this.db).sql
    return [body, `${body}, pg_notify($12, '') as notified`]
  }

  /**
   * SQLite: a batch whose every finish is a success on a healthy endpoint, each of its own claim,
   * recorded by two fixed statements in one transaction: the deliveries to their next state, then
   * their attempts, the finishes passed as one JSON array (`json_each`), so each text is compiled
   * and prepared once whatever the batch's size. Building `#finishIn`'s four statements with
   * Kysely at every record was most of a turn's time on the event loop besides SQLite's own. As
   * on Postgres, the update moves a delivery only if its claim still holds it and its endpoint is
   * healthy; unless it moved all of them, the transaction rolls back and the caller records the
   * batch in `#finishIn` (SQLite has one writer, so nothing changed meanwhile).
   * @returns the answers, or undefined when nothing was recorded (a failure in the batch, a claim
   *   finished twice, an endpoint with failures or a pause, a claim lost).
   */
  async #successesInTwoStatements(finishes: readonly AttemptFinish[], wake: boolean): Promise<Array<FinishedAttempt | null> | undefined> {
    if (!successesOnly(finishes)) return undefined
    const rows = JSON.stringify(finishes.map((finish) => successFields(this.codec, finish)))
    const { move, insert } = (this.#sqliteSuccessSql ??= this.#sqliteSuccessStatements())
    try {
      await this.#transact(async (trx) => {
        const moved = await runPrepared(trx, move, { rows })
        if (moved.length !== finishes.length) throw new ClaimLost()
        await runPrepared(trx, insert, { rows })
        if (wake) await this.#notify?.(trx)
      })
    } catch (error) {
      if (error instanceof ClaimLost) return undefined
      throw error
    }
    return finishes.map((finish) => nextEndpointHealth(HEALTHY, true, finish.outcome.breaker, finish.now))
  }

  /**
   * The SQL of `#successesInTwoStatements`: each finish is a JSON array of `successFields`. The
   * update finds its rows by id (`+d.status`, as `SqlCodec.filterOnly` writes it: a plain term led
   * SQLite to the status index, every pending delivery).
   */
  #sqliteSuccessStatements(): { move: PreparedQuery; insert: PreparedQuery } {
    const field = (index: number) => sql.raw(`json_extract(f.value, '$[${index}]')`)
    const move = sql`update ${this.#table(DELIVERIES)} as d
      set status = ${field(2)}, next_attempt_at = ${field(3)}, lease = null, updated_at = ${field(4)}
      from json_each(${param('rows')}) as f
      where d.id = ${field(0)} and d.lease = ${field(1)} and +d.status = 'pending'
        and not exists (
          select 1 from ${this.#table(ENDPOINTS)} e
          where e.id = d.endpoint_id and (e.consecutive_failures > 0 or e.failing_since is not null or e.paused_until is not null)
        )
      returning id`
    const insert = sql`insert into ${this.#table(ATTEMPTS)} (delivery_id, number, attempted_at, status_code, duration_ms, response_body, error, succeeded)
      select ${field(0)}, ${field(5)}, ${field(6)}, ${field(7)}, ${field(8)}, ${field(9)}, ${field(10)}, 1
      from json_each(${param('rows')}) as f`
    return { move: prepareCompiled(move.compile(this.db)), insert: prepareCompiled(insert.compile(this.db)) }
  }

  /** The finishes in one transaction per batch (see `#finishIn`), again without the claims lost meanwhile. */
  async #finishInTransaction(finishes: readonly AttemptFinish[], wake: boolean): Promise<Array<FinishedAttempt | null>> {
    for (let round = 0; round < 3; round += 1) {
      try {
        return await this.#transact(async (trx) => {
          const answers = await this.#finishIn(trx, finishes)
          // Heard at commit, by every instance (Postgres) or this process (SQLite), like a new delivery.
          if (wake) await this.#notify?.(trx)
          return answers
        })
      } catch (error) {
        if (!(error instanceof ClaimLost)) throw error
      }
    }
    // Claims keep slipping away under this batch: one at a time, each on its own.
    const answers: Array<FinishedAttempt | null> = []
    for (const { claim, outcome, now } of finishes) answers.push(await this.finishAttempt(claim, outcome, now))
    if (wake && this.#notify !== undefined) await this.#transact((trx) => (this.#notify as DueNotifier)(trx))
    return answers
  }

  async #finishIn(trx: QueryDb, finishes: readonly AttemptFinish[]): Promise<Array<FinishedAttempt | null>> {
    const c = this.codec
    const answers: Array<FinishedAttempt | null> = finishes.map(() => null)
    if (finishes.length === 0) return answers
    const ids = [...new Set(finishes.map((finish) => finish.claim.delivery_id))]
    const rows = await trx.selectFrom(DELIVERIES).select(['id', 'endpoint_id', 'lease']).where('id', 'in', ids).where(c.filterOnly('status'), '=', 'pending').execute()
    const leased = new Map(rows.map((row) => [c.readInt(row.id), { endpointId: row.endpoint_id as string, lease: row.lease as string | null }]))
    // The finishes that still hold their delivery, in order; a second finish of one claim does not.
    const held: Array<{ index: number; endpointId: string; finish: AttemptFinish }> = []
    const taken = new Set<number>()
    finishes.forEach((finish, index) => {
      const row = leased.get(finish.claim.delivery_id)
      if (row === undefined || row.lease !== finish.claim.lease || taken.has(finish.claim.delivery_id)) return
      taken.add(finish.claim.delivery_id)
      held.push({ index, endpointId: row.endpointId, finish })
    })
    if (held.length === 0) return answers

    // Health: the endpoints with a failure here, and those with a success that are not healthy
    // now. The rest (a healthy endpoint's successes) stay healthy and are not touched. Locked in
    // id order (Postgres), before any delivery row: the order every transaction here takes.
    const endpointIds = [...new Set(held.map((entry) => entry.endpointId))]
    const failing = [...new Set(held.filter((entry) => !entry.finish.outcome.attempt.succeeded).map((entry) => entry.endpointId))]
    let read = trx
      .selectFrom(ENDPOINTS)
      .select(['id', 'failing_since', 'consecutive_failures', 'paused_until', 'pause_ms'])
      .where('id', 'in', endpointIds)
      .where((eb) =>
        eb.or([
          ...(failing.length > 0 ? [eb('id', 'in', failing)] : []),
          eb('consecutive_failures', '>', 0),
          eb('failing_since', 'is not', null),
          eb('paused_until', 'is not', null),
        ]),
      )
      .orderBy('id')
    if (this.#lockRows) read = read.forUpdate()
    const healths = new Map<string, { before: EndpointHealth; now: EndpointHealth }>()
    for (const row of await read.execute()) {
      const before: EndpointHealth = {
        failing_since: this.#readInstantOrNull(row.failing_since),
        consecutive_failures: c.readInt(row.consecutive_failures),
        paused_until: this.#readInstantOrNull(row.paused_until),
        pause_ms: c.readInt(row.pause_ms),
      }
      healths.set(row.id as string, { before, now: before })
    }
    for (const { index, endpointId, finish } of held) {
      const health = healths.get(endpointId)
      if (health === undefined) {
        // A healthy endpoint's success (nothing changes), or an endpoint no longer there, as in `finishAttempt`.
        answers[index] = nextEndpointHealth(HEALTHY, finish.outcome.attempt.succeeded, finish.outcome.breaker, finish.now)
        continue
      }
      const next = nextEndpointHealth(health.now, finish.outcome.attempt.succeeded, finish.outcome.breaker, finish.now)
      health.now = next.health
      answers[index] = next
    }

    // Each delivery to its next state, each lease checked again, in one statement.
    const byLease = new Map<string, number[]>()
    for (const { finish } of held) byLease.set(finish.claim.lease, [...(byLease.get(finish.claim.lease) ?? []), finish.claim.delivery_id])
    const cases = (column: string, value: (finish: AttemptFinish) => unknown) =>
      // `else` the column itself: Postgres then types every parameter as the column.
      sql`case id ${sql.join(
        held.map(({ finish }) => sql`when ${finish.claim.delivery_id} then ${value(finish)}`),
        sql` `,
      )} else ${sql.ref(column)} end`
    const moved = await trx
      .updateTable(DELIVERIES)
      .set({
        status: cases('status', ({ outcome }) => outcome.next.status),
        next_attempt_at: cases('next_attempt_at', ({ outcome }) => (outcome.next.status === 'pending' ? c.instant(outcome.next.at) : null)),
        lease: null,
        updated_at: cases('updated_at', ({ now }) => c.instant(now)),
      })
      .where((eb) => eb.or([...byLease].map(([lease, leaseIds]) => eb.and([eb('lease', '=', lease), eb('id', 'in', leaseIds)]))))
      .where(c.filterOnly('status'), '=', 'pending')
      .returning('id')
      .execute()
    if (moved.length !== held.length) throw new ClaimLost()

    await trx
      .insertInto(ATTEMPTS)
      .values(
        held.map(({ finish: { claim, outcome } }) => ({
          delivery_id: claim.delivery_id,
          number: outcome.attempt.number,
          attempted_at: c.instant(outcome.attempt.attempted_at),
          status_code: outcome.attempt.status_code,
          duration_ms: outcome.attempt.duration_ms,
          response_body: outcome.attempt.response_body,
          error: outcome.attempt.error,
          succeeded: c.bool(outcome.attempt.succeeded),
        })),
      )
      .execute()
    for (const [endpointId, health] of healths) {
      if (healthChanged(health.before, health.now)) await this.#writeHealth(trx, endpointId, health.now)
    }
    return answers
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

  replay(endpointId: string, period: ReplayPeriod, now: Date, audit?: AuditEntry): Promise<ReplayResult> {
    const c = this.codec
    const at = c.instant(now)
    const limit = Math.max(0, Math.floor(period.limit))
    if (period.types.length === 0) return Promise.resolve({ count: 0, more: false })
    return this.#transact(async (trx) => {
      // Shared, as in `sendTest`: a concurrent delete waits, then takes these deliveries with it.
      let found = trx.selectFrom(ENDPOINTS).select('company_id').where('id', '=', endpointId)
      if (this.#lockRows) found = found.forShare()
      const endpoint = await found.executeTakeFirst()
      if (endpoint === undefined) return { count: 0, more: false }
      const companyId = c.readInt(endpoint.company_id)
      // The company's events of the period (by the (company_id, occurred_at) index), each joined to this
      // endpoint's delivery of it by the (endpoint_id, event_id) unique index. One more row than
      // `limit` tells whether more remain. Events older than the webhook migration have no id or payload.
      const candidates = await trx
        .selectFrom(`${EVENTS} as e`)
        .leftJoin(`${DELIVERIES} as d`, (join) => join.onRef('d.event_id', '=', 'e.event_id').on('d.endpoint_id', '=', endpointId))
        .select(['e.id as row_id', 'e.event_id', 'e.type', 'd.id as delivery_id'])
        .where('e.company_id', '=', companyId)
        .where('e.type', 'in', [...period.types])
        .where('e.occurred_at', '>=', c.instant(period.since))
        .where('e.occurred_at', '<', c.instant(period.until))
        .where('e.event_id', 'is not', null)
        .where('e.payload', 'is not', null)
        .where((eb) => eb.or([eb('d.id', 'is', null), eb('d.status', '=', 'failed')]))
        .orderBy('e.occurred_at')
        .orderBy('e.id')
        .limit(limit + 1)
        .execute()
      const chosen = candidates.slice(0, limit)
      const more = candidates.length > limit
      const due = { status: 'pending', attempts: 0, next_attempt_at: at, lease: null, updated_at: at }
      const failed = chosen.filter((row) => row.delivery_id !== null).map((row) => c.readInt(row.delivery_id))
      const missing = chosen
        .filter((row) => row.delivery_id === null)
        .map((row) => pendingDelivery(endpointId, { id: row.event_id as string, type: row.type as string, company_id: companyId }, c.readInt(row.row_id), at))
      let count = 0
      for (let start = 0; start < failed.length; start += REPLAY_ROWS_PER_STATEMENT) {
        // Still failed: a concurrent redelivery may have made one pending since the read.
        const ids = failed.slice(start, start + REPLAY_ROWS_PER_STATEMENT)
        const result = await trx.updateTable(DELIVERIES).set(due).where('id', 'in', ids).where(c.filterOnly('status'), '=', 'failed').executeTakeFirst()
        count += Number(result.numUpdatedRows)
      }
      for (let start = 0; start < missing.length; start += REPLAY_ROWS_PER_STATEMENT) {
        // A delivery a concurrent redelivery created since the read is kept as it is.
        const inserted = await trx
          .insertInto(DELIVERIES)
          .values(missing.slice(start, start + REPLAY_ROWS_PER_STATEMENT))
          .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
          .returning('id')
          .execute()
        count += inserted.length
      }
      if (count > 0) {
        await this.#notify?.(trx)
        await this.#audit(trx, audit)
      }
      return { count, more }
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

  async deliveryBacklog(now: Date): Promise<DeliveryBacklog> {
    const c = this.codec
    const at = c.instant(now)
    // One pass over the pending rows (the pending partial indexes); a claimed row's
    // next_attempt_at is its lease's end, so it is pending but not due.
    const row = await this.db
      .selectFrom(DELIVERIES)
      .select([
        sql<unknown>`count(*)`.as('pending'),
        sql<unknown>`coalesce(sum(case when next_attempt_at <= ${at} then 1 else 0 end), 0)`.as('due'),
        sql<unknown>`min(case when next_attempt_at <= ${at} then next_attempt_at end)`.as('oldest'),
      ])
      .where('status', '=', 'pending')
      .executeTakeFirst()
    return {
      pending: c.readInt(row?.pending ?? 0),
      due: c.readInt(row?.due ?? 0),
      oldestDueAt: row?.oldest === null || row?.oldest === undefined ? null : c.readInstant(row.oldest),
    }
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
      return deliveries.length + (await purgeFeedEvents(trx, c, cutoff, room, this.#lockRows))
    })
  }

  readFeed(companyId: number, query: FeedQuery): Promise<FeedPage> {
    return this.#feed.read(companyId, query)
  }

  feedHead(companyId: number): Promise<number> {
    return this.#feed.head(companyId)
  }

  /** Writes `audit`, if given, on the change's transaction `trx`: call it once the change has happened. */
  /** Stores an endpoint's health as `finishAttempt` and `finishAttempts` computed it. */
  async #writeHealth(trx: QueryDb, endpointId: string, health: EndpointHealth): Promise<void> {
    await trx
      .updateTable(ENDPOINTS)
      .set({
        failing_since: this.#instantOrNull(health.failing_since),
        consecutive_failures: health.consecutive_failures,
        paused_until: this.#instantOrNull(health.paused_until),
        pause_ms: health.pause_ms,
      })
      .where('id', '=', endpointId)
      .execute()
  }

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
      consecutive_failures: c.readInt(row.consecutive_failures ?? 0),
      paused_until: this.#readInstantOrNull(row.paused_until),
      pause_ms: c.readInt(row.pause_ms ?? 0),
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

/** A healthy endpoint's health, as columns to set (its instants are null on both dialects). */
const HEALTHY_COLUMNS = { failing_since: null, consecutive_failures: 0, paused_until: null, pause_ms: 0 } as const

/** Rolls `finishAttempt`'s transaction back when the claim turns out to be lost part-way. */
class ClaimLost extends Error {}
