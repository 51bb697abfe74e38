import type { AuditEntry } from './audit-store.js'
import type { ChangeEvent } from './write-storage.js'

/** `enabled` endpoints receive deliveries; `disabled` ones receive none until enabled again. */
export type WebhookEndpointStatus = 'enabled' | 'disabled'

/**
 * Why an endpoint is disabled: by the host (`manual`), because the receiver answered 410 Gone
 * (`gone`), or because every delivery failed for the auto-disable period (`failing`).
 */
export type WebhookDisabledReason = 'manual' | 'gone' | 'failing'

/** A company's webhook endpoint, as stored. */
export interface WebhookEndpointRecord {
  /** `we_` + 24 lower-case base32 characters; chosen by the plugin. */
  id: string
  company_id: number
  url: string
  description: string | null
  /** Event types subscribed to, or `['*']` for every type. */
  events: string[]
  status: WebhookEndpointStatus
  /** Set while `status` is `disabled`; null while enabled. */
  disabled_reason: WebhookDisabledReason | null
  /** The signing secret, sealed by the plugin (AES-256-GCM); opaque to the store. */
  secret: string
  /** During a rotation: the previous secret (sealed), still signing beside the new one until `previous_secret_expires_at`. */
  previous_secret: string | null
  previous_secret_expires_at: Date | null
  /** When the first of the failures since the last success happened; null while healthy. */
  failing_since: Date | null
  /** Failed attempts since the last success (0 while healthy). */
  consecutive_failures: number
  /**
   * The circuit breaker: while set and in the future, none of the endpoint's deliveries is
   * claimed (they wait, neither failed nor counted); once past, one probe attempt at a time
   * is. Null while the breaker is closed. A success closes it.
   */
  paused_until: Date | null
  /** The length of the breaker's current pause (ms), doubled by each failed probe; 0 while closed. */
  pause_ms: number
  created_at: Date
  updated_at: Date
}

/** The fields `updateEndpoint` may change; a key that is absent is left alone. */
export type WebhookEndpointChanges = Partial<
  Pick<WebhookEndpointRecord, 'url' | 'description' | 'events' | 'secret' | 'previous_secret' | 'previous_secret_expires_at'>
>

/**
 * One event's delivery to one endpoint. Created `pending` when the event is recorded, for
 * every enabled endpoint of the company subscribed to its type; `delivered` after a 2xx;
 * `failed` once its retries are spent, its endpoint is disabled, or it is cut off.
 */
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface WebhookDeliveryRecord {
  id: number
  endpoint_id: string
  /** The event's `evt_…` id: the `webhook-id` of every attempt. */
  event_id: string
  event_type: string
  status: WebhookDeliveryStatus
  /** Attempts started so far (a claim counts as one). */
  attempts: number
  /** When the next attempt is due (pending), or null (delivered, failed). */
  next_attempt_at: Date | null
  created_at: Date
  updated_at: Date
}

/** One HTTP attempt of a delivery, kept for the host's settings screen. */
export interface WebhookAttemptRecord {
  /** 1 for the first attempt of the delivery, and so on. */
  number: number
  attempted_at: Date
  /** The receiver's status, or null if no response came (network error, timeout, refusal). */
  status_code: number | null
  duration_ms: number
  /** The start of the response body (at most 2 KiB), or null. */
  response_body: string | null
  /** Why no usable response came (connection refused, timeout, private address…), or null. */
  error: string | null
  succeeded: boolean
}

export interface WebhookDeliveryWithAttempts extends WebhookDeliveryRecord {
  /** Oldest first. */
  attempts_made: WebhookAttemptRecord[]
}

/** A due delivery claimed by one dispatcher, with what it needs to send it. */
export interface ClaimedDelivery {
  delivery_id: number
  /** Identifies this claim: `finishAttempt` acts only while the claim is still the delivery's. */
  lease: string
  /** The attempt this claim is (1-based). */
  attempt: number
  event: Pick<ChangeEvent, 'id' | 'type' | 'company_id' | 'payload'>
  endpoint: WebhookEndpointRecord
}

/**
 * How `claimDue` shares attempts out, across every dispatcher sharing the store (the plugin's
 * policy; the store applies it in its claim, so it holds across instances). An attempt is
 * "in flight" from its claim until `finishAttempt` or the end of its lease.
 *
 * An endpoint is *troubled* while its last attempt failed (`consecutive_failures > 0`), its
 * breaker is open or probing (`paused_until` set), or it has an attempt in flight claimed
 * before `slowBefore`. A troubled endpoint gets one attempt in flight at a time, and a company's
 * troubled endpoints together at most `troubledCompanyLimit`, so hanging receivers hold a
 * bounded number of slots and never the ones the company's healthy endpoints need.
 */
export interface ClaimPolicy {
  /** Attempts in flight at once per healthy endpoint. */
  endpointLimit: number
  /** Attempts in flight at once to one company's healthy endpoints. */
  companyLimit: number
  /** Attempts in flight at once to one company's troubled endpoints. */
  troubledCompanyLimit: number
  /** An attempt still in flight that was claimed before this makes its endpoint troubled (slow). */
  slowBefore: Date
}

/**
 * When an endpoint's circuit breaker opens, as `finishAttempt` applies it: after `threshold`
 * failed attempts in a row it pauses the endpoint for `pauseMs`; each failed probe after a
 * pause doubles the pause, up to `maxPauseMs`. Milliseconds.
 */
export interface BreakerRule {
  threshold: number
  pauseMs: number
  maxPauseMs: number
}

/** What the next state of a delivery is after an attempt. */
export type DeliveryNext = { status: 'delivered' } | { status: 'pending'; at: Date } | { status: 'failed' }

export interface AttemptOutcome {
  attempt: WebhookAttemptRecord
  next: DeliveryNext
  /** Opens the endpoint's breaker by this rule; without it failures are counted but the breaker never opens. */
  breaker?: BreakerRule
}

/** One attempt to record in `finishAttempts`: the arguments of one `finishAttempt` call. */
export interface AttemptFinish {
  claim: ClaimedDelivery
  outcome: AttemptOutcome
  /** When the attempt finished: the delivery's `updated_at`, and the instant the breaker counts from. */
  now: Date
}

/** The endpoint's health after an attempt was recorded. */
export interface EndpointHealth {
  failing_since: Date | null
  consecutive_failures: number
  paused_until: Date | null
  pause_ms: number
}

/** What `finishAttempt` did besides recording the attempt. */
export interface FinishedAttempt {
  /**
   * This attempt opened the endpoint's breaker (closed → open). Of several dispatchers failing
   * at once exactly one sees true: the one whose change took effect. A failed probe that
   * re-opens it with a longer pause is not an opening.
   */
  opened: boolean
  /** This success ended a failing streak (the endpoint had failures, or its breaker was open): its health is back to healthy. */
  closed: boolean
  health: EndpointHealth
}

/** A page of an endpoint's deliveries: `before` is a delivery id (exclusive); `status` and `event_type` narrow it. */
export interface DeliveryQuery {
  limit: number
  before?: number
  status?: WebhookDeliveryStatus
  event_type?: string
}

export interface DeliveryPage {
  /** Newest first. */
  deliveries: WebhookDeliveryWithAttempts[]
  /** Whether older deliveries follow (pass the last id as `before`). */
  has_more: boolean
}

/** Which retained events `replay` sends an endpoint: `since` inclusive, `until` exclusive. */
export interface ReplayPeriod {
  since: Date
  until: Date
  /**
   * The event types to send: the endpoint's subscriptions, resolved by the plugin (`*` becomes
   * every subscribable type, so a `webhook.test` event sent to another endpoint never is).
   */
  types: readonly string[]
  /** At most this many deliveries made due by one call (the plugin passes 1 to 1,000). */
  limit: number
}

export interface ReplayResult {
  count: number
  /** More candidates remain beyond `limit`: call again with the same period. */
  more: boolean
}

/**
 * Webhook endpoints, the event outbox and its deliveries — durable and shared by every app
 * instance (Postgres) or process (a SQLite file).
 *
 * The plugin decides (ids, secrets, retry times, when to disable); the store keeps state and
 * hands out due deliveries so that each goes to one dispatcher at a time. Events enter through
 * `WriteTransaction.recordEvent` (the API's writes) or `publish` (the host's own transactions);
 * both fan the event out to deliveries in the same transaction, so an event and its deliveries
 * commit or roll back with the change.
 *
 * Every `Date` is the plugin's clock; stores never read the time.
 *
 * `audit` (the admin API passes one to every mutating method): commit this audit-trail entry
 * in the same transaction as the change, and only if something changed (a method that returns
 * false or null, or a `recover` of 0 deliveries, records none).
 */
export interface WebhookStore {
  createEndpoint(endpoint: WebhookEndpointRecord, audit?: AuditEntry): Promise<void>
  getEndpoint(id: string): Promise<WebhookEndpointRecord | null>
  /** The company's endpoints, oldest first. */
  listEndpoints(companyId: number): Promise<WebhookEndpointRecord[]>
  /** Applies `changes` and sets `updated_at = now`. @returns the endpoint after the change, or null if there is none. */
  updateEndpoint(id: string, changes: WebhookEndpointChanges, now: Date, audit?: AuditEntry): Promise<WebhookEndpointRecord | null>
  /**
   * Enables a disabled endpoint: clears `disabled_reason` and the health (`failing_since`,
   * `consecutive_failures`, `paused_until`, `pause_ms`).
   * @returns false if there is no such endpoint or it was already enabled.
   */
  enableEndpoint(id: string, now: Date, audit?: AuditEntry): Promise<boolean>
  /**
   * Disables an enabled endpoint and fails its pending deliveries, in one transaction.
   * @returns false if there is no such endpoint or it was already disabled — so of two
   *   instances disabling at once, exactly one learns it did.
   */
  disableEndpoint(id: string, reason: WebhookDisabledReason, now: Date, audit?: AuditEntry): Promise<boolean>
  /** Deletes the endpoint with its deliveries and attempts. @returns false if there was none. */
  deleteEndpoint(id: string, audit?: AuditEntry): Promise<boolean>

  /**
   * Records events inside a transaction the host opened for its own change, so they commit or
   * roll back with it. `transaction` is the adapter's handle: a Kysely transaction (or `Kysely`
   * instance, for autocommit) for the SQL adapters, a `WriteTransaction` for the memory adapter.
   */
  publish(transaction: unknown, events: readonly ChangeEvent[]): Promise<void>

  /**
   * Claims up to `limit` due deliveries (pending, `next_attempt_at <= now`, endpoint enabled
   * and its breaker not pausing it: `paused_until` null, or past with nothing in flight, and
   * then one delivery only, the probe), skipping rows another dispatcher is claiming. Within
   * `policy`'s limits (none but the probe's when it is omitted), counted across every dispatcher. Round-robin: each company's first pick before
   * any company's second, each endpoint's first before any endpoint's second, oldest due first
   * among equals. Each claim counts an attempt and moves `next_attempt_at` to `leaseUntil`, so
   * a claim whose dispatcher died is due again then (at-least-once).
   */
  claimDue(now: Date, leaseUntil: Date, limit: number, policy?: ClaimPolicy): Promise<ClaimedDelivery[]>
  /**
   * Records the attempt, moves the delivery to `outcome.next` and updates the endpoint's health,
   * in one transaction: a success clears it (`failing_since`, `consecutive_failures`, the
   * breaker); a failure counts one more in a row, sets `failing_since` if unset and, by
   * `outcome.breaker`, opens the breaker (`threshold` in a row while closed: pause `pauseMs`)
   * or re-opens it after a failed probe (`paused_until` past: pause doubled, at most
   * `maxPauseMs`). A failure while the pause still runs (an attempt claimed before it opened)
   * leaves the pause alone.
   * @returns null (recording nothing) if the claim is no longer the delivery's: its lease ran
   *   out and another dispatcher took it, or the delivery was failed or deleted meanwhile.
   */
  finishAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Promise<FinishedAttempt | null>
  /**
   * Optional: `finishAttempt` for each of `finishes`, in their order, in one transaction. Each
   * answer is what `finishAttempt(claim, outcome, now)` called alone at that point would have
   * answered: null for a claim that is no longer its delivery's (and for the second of two
   * finishes of one claim), and the endpoint's health moving through the batch's attempts in
   * order (so exactly one of them opens a breaker, with each attempt's own `now`). A lost claim
   * costs only its own entry; the others are recorded. All or nothing on failure: when it
   * throws, nothing of the batch was recorded (the claims' leases then run out and the
   * deliveries are attempted again).
   * Without it the dispatcher calls `finishAttempt` once per attempt.
   * @param wake true: once the batch has committed, wake every dispatcher subscribed through
   *   `subscribeDue`, as a commit that made deliveries due does (the batch freed places under a
   *   cap that due deliveries may be waiting for; every instance then gets its chance to claim
   *   them, not only the one that recorded the batch). A store without `subscribeDue` ignores it.
   * @returns one answer per entry of `finishes`, in the same order.
   */
  finishAttempts?(finishes: readonly AttemptFinish[], wake?: boolean): Promise<Array<FinishedAttempt | null>>

  /** An endpoint's deliveries, newest first, with their attempts; `before` is a delivery id (exclusive). */
  listDeliveries(endpointId: string, page: DeliveryQuery): Promise<DeliveryPage>
  /**
   * Makes the event's delivery to the endpoint due at `now` again, starting a new series of
   * attempts (`attempts` back to 0; the attempt log is kept), creating it if the event
   * was recorded for the endpoint's company but never fanned out to it.
   * @returns false if the event is unknown to the endpoint's company (or purged).
   */
  redeliver(endpointId: string, eventId: string, now: Date, audit?: AuditEntry): Promise<boolean>
  /** Makes every `failed` delivery of the endpoint created at or after `since` due at `now`, with `attempts` back to 0. @returns how many. */
  recover(endpointId: string, since: Date, now: Date, audit?: AuditEntry): Promise<number>
  /**
   * Sends the endpoint the retained events of a period it missed (disabled, or created later),
   * in one transaction. The candidates are the events of the endpoint's company with
   * `since <= occurred_at < until`, a type in `period.types`, a payload, and either no delivery
   * to this endpoint or a `failed` one; delivered and pending deliveries are left alone. The
   * first `period.limit` candidates by `occurred_at`, then recording order, get a pending
   * delivery due at `now` (created; or a failed one re-dued with `attempts` back to 0 and its
   * attempt log kept). Whether the endpoint is enabled is not checked: like `recover`'s, the
   * deliveries wait until it is. Another company's events are never candidates.
   * The same call again continues: the events it handled are candidates no longer.
   * @returns `count` deliveries made due (the audit entry is recorded only if it is not 0);
   *   `more`: candidates beyond `limit` remain. `{ count: 0, more: false }` if there is no such endpoint.
   */
  replay(endpointId: string, period: ReplayPeriod, now: Date, audit?: AuditEntry): Promise<ReplayResult>
  /**
   * Deletes up to `limit` finished deliveries (delivered or failed) last changed before
   * `before`, with their attempts, and events older than `before` that no delivery needs.
   * @returns how many deliveries and events were deleted (0: nothing left to purge).
   */
  purgeFinished(before: Date, limit: number): Promise<number>
  /**
   * Records `event` (a `webhook.test` event of the endpoint's company) and one delivery of it to
   * this endpoint only, due at `now`, in one transaction; no other endpoint receives it. It then
   * goes through the normal delivery path (claim, sign, attempts, retries).
   * @returns false (recording nothing) if there is no such endpoint.
   */
  sendTest(endpointId: string, event: ChangeEvent, now: Date, audit?: AuditEntry): Promise<boolean>
  /**
   * The body of event `eventId` as delivered, if the endpoint has a delivery of it.
   * @returns null if the endpoint has no delivery of that event (unknown, another company's, or purged).
   */
  eventPayload(endpointId: string, eventId: string): Promise<string | null>

  /**
   * Optional: calls `wake` soon after a transaction that created due deliveries commits,
   * anywhere (Postgres: LISTEN/NOTIFY) or in this process. Without it the dispatcher polls.
   * @returns a function that stops the subscription.
   */
  subscribeDue?(wake: () => void): Promise<() => Promise<void>>

  /**
   * Optional: the delivery backlog at `now`, across every dispatcher sharing the store, read
   * for the `metrics` option's gauges on each scrape (keep it to one or two indexed counts).
   * Without it the metrics have no backlog gauges.
   */
  deliveryBacklog?(now: Date): Promise<DeliveryBacklog>

  /**
   * The company's event feed (`GET /v1/events`): its retained events in feed order, from
   * after position `query.after`. Positions are the company's own (1, 2, 3…, gaps allowed),
   * given in **commit order**: an event gets its position only once its transaction has
   * committed, so no event ever appears at or before a position a reader has already been
   * given (docs/decisions.md, "The feed's order is commit order"). Events recorded since the
   * last read get their positions here (at most a bounded batch per call).
   *
   * At most `query.scan` positions after `after` are examined; of those, the first
   * `query.limit` events whose type is in `query.types` are returned. `next` is where the next
   * call resumes (the last position examined), so a reader that filters by type still moves.
   * @returns `{ expired: true }` when events after `after` may have been purged (`after` is below
   *   the feed's horizon); with `after` omitted, the feed starts at its horizon.
   */
  readFeed(companyId: number, query: FeedQuery): Promise<FeedPage>
  /**
   * The company's newest feed position, after giving every event committed so far its
   * position: events committed afterwards get greater ones. A full read started after this
   * call, then the feed from this position, together miss nothing.
   */
  feedHead(companyId: number): Promise<number>
}

/** The webhook backlog as `deliveryBacklog` reads it. */
export interface DeliveryBacklog {
  /** Pending deliveries: due, waiting for a retry, or claimed and in flight. */
  pending: number
  /** Pending deliveries due at `now` and not claimed (`next_attempt_at <= now`). */
  due: number
  /** The earliest `next_attempt_at` among the due ones, or null when none is due. */
  oldestDueAt: Date | null
}

/** What `readFeed` reads: positions after `after` (or from the horizon), these types, bounded. */
export interface FeedQuery {
  /** A position this company's feed has given (`next` or `feedHead`); omitted: from the feed's horizon (after every purged position). */
  after?: number
  /** The event types to return (never empty); events of other types are examined and skipped. */
  types: readonly string[]
  /** Events to return at most (≥ 1). */
  limit: number
  /** Positions to examine at most (≥ `limit`). */
  scan: number
}

/** One event of the feed: its position and its body exactly as a webhook delivers it. */
export interface FeedEvent {
  position: number
  payload: string
}

export type FeedPage =
  | { expired: true }
  | {
      expired: false
      /** In position order. */
      events: FeedEvent[]
      /** The position to pass as `after` next time: the last one examined. */
      next: number
      /** Whether positions beyond `next` exist now. */
      has_more: boolean
      /** The feed's newest position now (`feedHead` without its own call): an `after` above it was never handed out. */
      head: number
    }
