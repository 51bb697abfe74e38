import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../ports/clock.js'
import type {
  AttemptFinish,
  AttemptOutcome,
  BreakerRule,
  ClaimedDelivery,
  ClaimPolicy,
  DeliveryNext,
  FinishedAttempt,
  WebhookAttemptRecord,
  WebhookDisabledReason,
  WebhookEndpointRecord,
  WebhookStore,
} from '../ports/webhook-store.js'
import type { WebhookResponse, WebhookTransport } from '../ports/webhook-transport.js'
import { RESPONSE_BODY_KEPT_BYTES } from './http-transport.js'
import { nextAttemptAt, parseRetryAfter } from './retry.js'
import { AttemptDeadlines } from './attempt-deadline.js'
import type { DeliveryOutcome } from '../metrics/workforce-metrics.js'
import type { SecretBox } from './secret-box.js'
import { signWebhookWithKeys, webhookSigningKey } from './signature.js'
import { endpointView, type WebhookEndpoint } from './webhook-manager.js'

/**
 * What the host hears when an endpoint's circuit breaker opens: its attempts kept failing
 * (`consecutive_failures` in a row), so its deliveries wait until `paused_until`, then one probe
 * is sent. Heard before the endpoint is disabled, which happens only after `autoDisableAfterMs`.
 */
export interface EndpointFailingNotice {
  endpoint: WebhookEndpoint
  /** The error or status of the attempt that opened the breaker. */
  lastError: string | null
}

/** What the host hears when an endpoint is disabled by delivery: a 410 (`gone`) or failing for the auto-disable period (`failing`). */
export interface EndpointDisabledNotice {
  endpoint: WebhookEndpoint
  reason: Extract<WebhookDisabledReason, 'gone' | 'failing'>
}

export interface DispatcherSettings {
  store: WebhookStore
  transport: WebhookTransport
  box: SecretBox
  clock: Clock
  log: FastifyBaseLogger
  /** Delays between attempts (ms); the delivery fails when they are spent. */
  retrySchedule: readonly number[]
  /** An endpoint whose deliveries have all failed for this long is disabled (ms). */
  autoDisableAfterMs: number
  /** An attempt without a 2xx within this is a failure (ms). */
  timeoutMs: number
  /** A claim not finished by then is due again (a dispatcher died mid-attempt) (ms). */
  leaseMs: number
  /** Deliveries claimed per query. */
  batch: number
  /** Attempts in flight at once, per dispatcher. */
  concurrency: number
  /** Attempts in flight at once per healthy endpoint, across every instance. */
  endpointConcurrency: number
  /** Attempts in flight at once to one company's healthy endpoints, across every instance; its troubled endpoints get half as many. */
  companyConcurrency: number
  /** An attempt in flight longer than this marks its endpoint as slow (troubled: one attempt at a time) (ms). */
  slowAttemptMs: number
  /** When an endpoint's breaker opens and how long it pauses. */
  breaker: BreakerRule
  /** How often to look for due deliveries when nothing wakes the dispatcher (ms). */
  pollIntervalMs: number
  /** Delivered and failed deliveries are kept this long (ms). */
  retentionMs: number
  purgeIntervalMs: number
  purgeBatch: number
  /** How long `stop()` lets attempts in flight finish before abandoning them to their lease (ms). */
  shutdownGraceMs: number
  onEndpointDisabled?: (notice: EndpointDisabledNotice) => void | Promise<void>
  onEndpointFailing?: (notice: EndpointFailingNotice) => void | Promise<void>
  /** Told of every attempt this dispatcher records, with its outcome (the `metrics` option). */
  observeDelivery?: (outcome: DeliveryOutcome, payload: string, at: number) => void
  /** Random source for retry jitter (tests pin it). */
  random?: () => number
}

const USER_AGENT = 'fastify-workforce-api-webhooks/1'
// The loop's waits read the global `performance` (not an import of node:perf_hooks' object), so
// a test's fake timers move them and its timers together (test/webhooks/batched-records.test.ts).
/**
 * Finished attempts wake the claim loop at most once per this (ms): each frees a place under a
 * cap, but most such claims find nothing new, and on SQLite every claim runs on the event loop.
 * A commit (`wake()`) is never delayed by it, nor is the end of an attempt that held the last
 * place under its endpoint's, its company's or this dispatcher's cap (a backlog waits for it),
 * nor, while draining a backlog (the last claim filled its room), any freed place: that claim
 * most likely finds more, and waits only URGENT_COALESCE_MS.
 */
const FREED_CLAIM_INTERVAL_MS = 50
/**
 * How long a claim for a freed place waits for the other attempts to the same endpoint (or,
 * for a place under this dispatcher's own cap, any attempt) still awaiting their answer (ms):
 * attempts that went out together then come back in one turn (one transaction records them,
 * one claim replaces them) instead of one turn each.
 */
const URGENT_COALESCE_MS = 2
const MAX_ERROR_LENGTH = 500
/** Endpoints whose opened signing keys are kept (the least recently opened go first). */
const SIGNING_KEYS_KEPT = 1_000

/** An attempt that has its answer and waits for the next flush to be recorded. */
interface QueuedFinish extends AttemptFinish {
  settle(recorded: FinishedAttempt | null): void
  fail(error: unknown): void
}

/** An endpoint's secrets as HMAC keys, for the sealed values they were opened from. */
interface SigningKeys {
  sealed: string
  key: Buffer
  previousSealed: string | null
  /** Opened when first needed: null if it does not open, undefined until then. */
  previous: Buffer | null | undefined
}

/**
 * Delivers due webhook attempts: claims them from the store (each claim is one dispatcher's,
 * for `leaseMs`), signs and sends them, and records each attempt with the delivery's next
 * state. Woken by the store when an event commits, polling as the fallback. Several
 * dispatchers (app instances) share one store; each attempt goes to one of them.
 *
 * One loop does all of this dispatcher's claiming and recording, a turn at a time: the
 * attempts that got their answer since the last turn are recorded together (the store's
 * `finishAttempts`: one transaction for all of them) and, if a place under a cap was freed or
 * an event committed, due deliveries are claimed beside that record (two transactions side by
 * side; the places being recorded no longer count against this dispatcher's concurrency, but
 * under the store's caps they count until the record commits). Until it is recorded, a
 * finished attempt keeps its claim (lease), so the caps still count it and a crash meanwhile
 * leaves it to be attempted again when the lease runs out (docs/decisions.md, "Deliveries in
 * batches").
 */
export class WebhookDispatcher {
  readonly #settings: DispatcherSettings
  readonly #inFlight = new Set<Promise<void>>()
  readonly #abort = new AbortController()
  /** Each attempt's deadline, all ended by `#abort` (shutdown). */
  readonly #deadlines = new AttemptDeadlines(this.#abort.signal)
  #running: Promise<void> | undefined
  /** The claim under way, settled once its attempts have started (`stop()` waits for it). */
  #claiming: Promise<unknown> = Promise.resolve()
  #stopped = false
  #woken = false
  /** An attempt finished since the last claim (a place under a cap may be free). */
  #freed = false
  /**
   * The last claim filled all the room it had, so more is likely due: a freed place is claimed
   * again after URGENT_COALESCE_MS rather than FREED_CLAIM_INTERVAL_MS. Without it a backlog
   * spread over endpoints whose caps never bind waited up to 50 ms after each batch's last answer.
   */
  #backlog = false
  /**
   * A record announced freed places to every instance (`finishAttempts(…, true)`) since the last
   * claim: this dispatcher then claims at that wake-up, like the others, not before them.
   */
  #announced = false
  /**
   * Endpoints whose finished attempt held the last place under a cap (`''`: this dispatcher's
   * own): the loop claims once one of them has no other attempt awaiting its answer, or
   * URGENT_COALESCE_MS after the first, so attempts that went out together are recorded, and
   * their places claimed again, together.
   */
  readonly #urgent = new Set<string>()
  #urgentSince = 0
  /**
   * Places freed under a cap are announced through the store's wake-ups (`finishAttempts(…,
   * true)`), and this dispatcher claims them when it hears that, at the same moment as every
   * other instance: claiming at once would hand them back to whoever freed them, every time, and
   * one instance would keep an endpoint's places for as long as its backlog lasts.
   */
  #wakesOthers = false
  #lastClaimAt = 0
  /** Finished attempts the record under way holds: answered, so out of the concurrency, but not yet recorded. */
  #recording = 0
  #sleeper: (() => void) | undefined
  #unsubscribe: (() => Promise<void>) | undefined
  #purgeTimer: NodeJS.Timeout | undefined
  /** Claims not yet recorded (or abandoned to their lease): what the concurrency counts. */
  #held = 0
  /** Attempts with their answer, to record at the loop's next turn. */
  #finished: QueuedFinish[] = []
  /** This dispatcher's attempts awaiting their answer, per endpoint and per company. */
  readonly #sendingTo = new Map<string, number>()
  readonly #sendingFor = new Map<number, number>()
  readonly #signingKeys = new Map<string, SigningKeys>()

  constructor(settings: DispatcherSettings) {
    this.#settings = settings
  }

  async start(): Promise<void> {
    const { store, log } = this.#settings
    if (store.subscribeDue !== undefined) {
      try {
        this.#unsubscribe = await store.subscribeDue(() => this.wake())
        this.#wakesOthers = store.finishAttempts !== undefined
      } catch (error) {
        log.warn({ err: error }, 'workforce-api: webhook wake-ups unavailable; polling only')
      }
    }
    this.#running = this.#loop()
    this.#purgeTimer = setInterval(() => void this.#purge(), this.#settings.purgeIntervalMs)
    this.#purgeTimer.unref()
  }

  /** Looks for due deliveries now (an event committed, or a delivery was made due). */
  wake(): void {
    this.#woken = true
    this.#sleeper?.()
  }

  /** Stops claiming, lets attempts in flight finish (and be recorded) for `shutdownGraceMs`, then aborts the rest (their leases run out and another dispatcher retries them). */
  async stop(): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    clearInterval(this.#purgeTimer)
    this.wake()
    await this.#unsubscribe?.().catch(() => {})
    await this.#claiming
    const settled = Promise.allSettled([...this.#inFlight])
    let grace: NodeJS.Timeout | undefined
    await Promise.race([settled, new Promise((resolve) => (grace = setTimeout(resolve, this.#settings.shutdownGraceMs)))])
    clearTimeout(grace)
    this.#abort.abort()
    await settled
    // The loop records what finished meanwhile, then ends.
    this.#sleeper?.()
    await this.#running
    await this.#settings.transport.close?.()
  }

  async #loop(): Promise<void> {
    const { store, clock, log, batch, concurrency, leaseMs, pollIntervalMs } = this.#settings
    let claim = true
    while (!this.#stopped || this.#held > 0) {
      // The record runs while this turn claims: on Postgres they are two connections' work, and
      // a turn took the sum of both. A claim beside it may find less than a claim after it (the
      // places being recorded still count under the store's caps); the record's end then counts
      // as a freed place, and the next turn claims them.
      const recording = this.#flush()
      const beside = this.#recording
      const room = Math.min(batch, concurrency - this.#held + beside)
      let full = false
      if ((claim || this.#woken) && room > 0 && !this.#stopped) {
        this.#woken = false
        this.#freed = false
        this.#urgent.clear()
        this.#lastClaimAt = performance.now()
        let claims: ClaimedDelivery[] = []
        const now = clock.now()
        const claiming = store.claimDue(new Date(now), new Date(now + leaseMs), room, this.#policy(now))
        this.#claiming = claiming.catch(() => {})
        try {
          claims = await claiming
        } catch (error) {
          log.warn({ err: error }, 'workforce-api: could not claim webhook deliveries; will retry')
        }
        // Filled the room the record beside it could not hide: more is likely due.
        this.#backlog = claims.length > 0 && claims.length >= room - beside
        this.#announced = false
        for (const claimed of claims) this.#start(claimed)
        full = claims.length === room
      }
      await recording
      // A full batch: more may be due at once.
      if (full) continue
      claim = await this.#sleep(pollIntervalMs)
    }
  }

  #start(claim: ClaimedDelivery): void {
    const { log } = this.#settings
    this.#held += 1
    bump(this.#sendingTo, claim.endpoint.id, 1)
    bump(this.#sendingFor, claim.endpoint.company_id, 1)
    const attempt = this.#attempt(claim).catch((error: unknown) =>
      log.error({ err: error, deliveryId: claim.delivery_id }, 'workforce-api: webhook attempt could not be recorded; it is retried when its lease ends'),
    )
    this.#inFlight.add(attempt)
    void attempt.finally(() => this.#inFlight.delete(attempt))
  }

  /**
   * Records every attempt that got its answer since the last flush, in one call of the store's
   * `finishAttempts` (or `finishAttempt` each, for a store without it). If recording fails,
   * none of them is recorded: their leases run out and they are attempted again.
   */
  async #flush(): Promise<void> {
    if (this.#finished.length === 0) return
    const finishes = this.#finished
    this.#finished = []
    this.#recording = finishes.length
    const { store } = this.#settings
    const wake = this.#wakesOthers && this.#urgent.size > 0
    if (wake) {
      this.#urgent.clear()
      this.#announced = true
    }
    try {
      if (store.finishAttempts !== undefined) {
        const recorded = await store.finishAttempts(
          finishes.map(({ claim, outcome, now }) => ({ claim, outcome, now })),
          wake,
        )
        finishes.forEach((finish, index) => finish.settle(recorded[index] ?? null))
      } else {
        const recorded = await Promise.allSettled(finishes.map(({ claim, outcome, now }) => store.finishAttempt(claim, outcome, now)))
        recorded.forEach((result, index) => (result.status === 'fulfilled' ? finishes[index]!.settle(result.value) : finishes[index]!.fail(result.reason)))
      }
    } catch (error) {
      for (const finish of finishes) finish.fail(error)
    } finally {
      this.#held -= finishes.length
      this.#recording = 0
      this.#freed = true
    }
  }

  /** Queues a finished attempt for the next flush and wakes the loop; resolves once it is recorded. */
  #record(claim: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Promise<FinishedAttempt | null> {
    const urgent = this.#answered(claim)
    return new Promise((settle, fail) => {
      this.#finished.push({ claim, outcome, now, settle, fail })
      if (urgent !== null) {
        if (this.#urgent.size === 0) this.#urgentSince = performance.now()
        this.#urgent.add(urgent)
      }
      this.#sleeper?.()
    })
  }

  /**
   * Counts an attempt's answer (or its abandonment) out of this dispatcher's attempts under way.
   * @returns whether it held the last place under a cap, a place a backlog may be waiting for:
   *   its endpoint's id (its endpoint's or its company's cap), `''` (this dispatcher's), or null.
   */
  #answered(claim: ClaimedDelivery): string | null {
    const { endpointConcurrency, companyConcurrency, concurrency } = this.#settings
    const { endpoint } = claim
    const troubled = endpoint.consecutive_failures > 0 || endpoint.paused_until !== null
    const toEndpoint = bump(this.#sendingTo, endpoint.id, -1) + 1
    const forCompany = bump(this.#sendingFor, endpoint.company_id, -1) + 1
    if (this.#held - this.#recording >= concurrency) return ''
    return toEndpoint >= (troubled ? 1 : endpointConcurrency) || forCompany >= companyConcurrency ? endpoint.id : null
  }

  #policy(now: number): ClaimPolicy {
    const { endpointConcurrency, companyConcurrency, slowAttemptMs } = this.#settings
    return {
      endpointLimit: endpointConcurrency,
      companyLimit: companyConcurrency,
      troubledCompanyLimit: Math.max(1, Math.floor(companyConcurrency / 2)),
      slowBefore: new Date(now - slowAttemptMs),
    }
  }

  /**
   * Waits for the loop's next turn. @returns true to claim then: a wake-up, a finished attempt
   * that held the last place under a cap, `ms` passed, or (no sooner than
   * FREED_CLAIM_INTERVAL_MS after the last claim, URGENT_COALESCE_MS while draining a backlog)
   * any freed place; false when the turn only has finished attempts to record. Once stopped:
   * until an attempt finishes or is abandoned.
   */
  #sleep(ms: number): Promise<boolean> {
    const until = performance.now() + ms
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined
      const done = (claim: boolean) => {
        clearTimeout(timer)
        if (this.#sleeper === check) this.#sleeper = undefined
        resolve(claim)
      }
      const check = () => {
        if (this.#stopped) return this.#finished.length > 0 || this.#held === 0 ? done(false) : undefined
        // With every place taken, a wake-up or a freed place waits for an answer (which calls
        // this again): answering it at once made a turn that could claim nothing, and turned
        // again without ever yielding to the event loop, for good.
        const full = this.#held >= this.#settings.concurrency
        if (this.#woken && !full) return done(true)
        const now = performance.now()
        let urgentWait = Number.POSITIVE_INFINITY
        if (this.#urgent.size > 0) {
          urgentWait = this.#urgentSince + URGENT_COALESCE_MS - now
          // An endpoint with no attempt still out has nothing more to wait for. A place under this
          // dispatcher's own cap ('') waits the same short while: with every place taken, answers
          // come back one after another, and claiming for each alone made one turn per delivery.
          for (const id of this.#urgent) if (id !== '' && !this.#sendingTo.has(id)) urgentWait = 0
          // Announced with the record: the wake-up that follows is this dispatcher's turn to claim.
          if (urgentWait <= 0) return done(!this.#wakesOthers)
        }
        const interval = this.#backlog && !this.#announced ? URGENT_COALESCE_MS : FREED_CLAIM_INTERVAL_MS
        const freedWait = this.#freed && !full ? this.#lastClaimAt + interval - now : Number.POSITIVE_INFINITY
        if (freedWait <= 0 || now >= until) return done(true)
        // Recorded now, unless a claim is about to take the turn anyway.
        if (this.#finished.length > 0 && urgentWait === Number.POSITIVE_INFINITY) return done(false)
        clearTimeout(timer)
        timer = setTimeout(check, Math.min(urgentWait, freedWait, until - now))
      }
      this.#sleeper = check
      check()
      // Stopped, with attempts still out: a fallback turn in case a wake-up was missed.
      if (this.#stopped && this.#sleeper === check) timer = setTimeout(() => done(false), ms)
    })
  }

  /** One attempt: sent, then recorded at the loop's next turn, then what its outcome calls for (a disable, the host told). */
  async #attempt(claim: ClaimedDelivery): Promise<void> {
    let sent: { outcome: AttemptOutcome; at: number } | undefined
    try {
      sent = await this.#send(claim)
    } finally {
      // Shutting down (or a failure of our own): nothing to record; the lease runs out and the attempt is made again.
      if (sent === undefined) this.#abandoned(claim)
    }
    if (sent === undefined) return
    const { outcome, at } = sent
    const recorded = await this.#record(claim, outcome, new Date(at))
    const { endpoint } = claim
    if (recorded === null) {
      this.#settings.log.debug({ deliveryId: claim.delivery_id }, 'workforce-api: webhook claim was taken over; attempt not recorded')
      return
    }
    this.#settings.observeDelivery?.(outcome.next.status === 'pending' ? 'retry' : outcome.next.status, claim.event.payload, at)
    const { succeeded } = outcome.attempt
    if (outcome.attempt.status_code === 410) return this.#disable(claim, 'gone', at)
    const failingSince = recorded.health.failing_since?.getTime()
    if (!succeeded && failingSince !== undefined && at - failingSince >= this.#settings.autoDisableAfterMs) {
      return this.#disable(claim, 'failing', at)
    }
    if (recorded.opened) await this.#failing(claim, recorded, outcome.attempt.error)
    else if (recorded.closed && endpoint.paused_until !== null) {
      this.#settings.log.info({ endpointId: endpoint.id, companyId: endpoint.company_id }, 'workforce-api: webhook endpoint recovered; breaker closed')
    }
  }

  #abandoned(claim: ClaimedDelivery): void {
    this.#answered(claim)
    this.#held -= 1
    this.#sleeper?.()
  }

  /** Signs and sends; @returns the outcome and when it was known, or undefined if shutdown aborted the attempt. */
  async #send(claim: ClaimedDelivery): Promise<{ outcome: AttemptOutcome; at: number } | undefined> {
    const { transport, clock, timeoutMs } = this.#settings
    const { endpoint, event } = claim
    const started = clock.now()
    const t0 = performance.now()
    let response: WebhookResponse | undefined
    let failure: string | undefined
    try {
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signWebhookWithKeys(this.#keysOf(endpoint, started), event.id, Math.floor(started / 1000), event.payload),
      }
      // Not AbortSignal.timeout: a garbage collection can take it before it fires (nodejs/node#57736).
      const deadline = this.#deadlines.start(timeoutMs)
      try {
        response = await deadline.bound(transport.send({ url: endpoint.url, headers, body: event.payload, signal: deadline.signal }))
      } finally {
        deadline.clear()
      }
    } catch (error) {
      if (this.#abort.signal.aborted) return undefined
      failure = describeFailure(error, timeoutMs)
    }
    const finished = clock.now()
    const succeeded = response !== undefined && response.status >= 200 && response.status < 300
    const attempt: WebhookAttemptRecord = {
      number: claim.attempt,
      attempted_at: new Date(started),
      status_code: response?.status ?? null,
      duration_ms: Math.round(performance.now() - t0),
      response_body: response === undefined ? null : response.body.slice(0, RESPONSE_BODY_KEPT_BYTES),
      error: failure ?? (response !== undefined && !succeeded ? statusProblem(response.status) : null),
      succeeded,
    }
    const next = this.#next(claim, response, succeeded, response?.status === 410, new Date(finished))
    return { outcome: { attempt, next, breaker: this.#settings.breaker }, at: finished }
  }

  /** Tells the host that an endpoint's breaker opened: only the instance whose attempt opened it gets here. */
  async #failing(claim: ClaimedDelivery, recorded: FinishedAttempt, lastError: string | null): Promise<void> {
    const { log, onEndpointFailing } = this.#settings
    const { id, company_id } = claim.endpoint
    log.warn(
      { endpointId: id, companyId: company_id, consecutiveFailures: recorded.health.consecutive_failures, pausedUntil: recorded.health.paused_until },
      'workforce-api: webhook endpoint failing; deliveries paused',
    )
    if (onEndpointFailing === undefined) return
    const endpoint = (await this.#settings.store.getEndpoint(id)) ?? { ...claim.endpoint, ...recorded.health }
    try {
      await onEndpointFailing({ endpoint: endpointView(endpoint), lastError })
    } catch (error) {
      log.error({ err: error, endpointId: id }, 'workforce-api: onEndpointFailing failed')
    }
  }

  /**
   * The HMAC keys that sign an attempt at `at`: the endpoint's secret, and during a rotation's
   * overlap its previous one too, so receivers can switch at their pace. Opened from their
   * sealed values once per endpoint and kept while those values are the endpoint's (a rotation
   * changes them, so it is seen at the next claim). A secret that does not open throws, and
   * the attempt fails saying why.
   */
  #keysOf(endpoint: WebhookEndpointRecord, at: number): Buffer[] {
    const { box } = this.#settings
    let keys = this.#signingKeys.get(endpoint.id)
    if (keys === undefined || keys.sealed !== endpoint.secret || keys.previousSealed !== endpoint.previous_secret) {
      keys = { sealed: endpoint.secret, key: webhookSigningKey(box.open(endpoint.secret, endpoint.id)), previousSealed: endpoint.previous_secret, previous: undefined }
      this.#signingKeys.delete(endpoint.id)
      if (this.#signingKeys.size >= SIGNING_KEYS_KEPT) this.#signingKeys.delete(this.#signingKeys.keys().next().value as string)
      this.#signingKeys.set(endpoint.id, keys)
    }
    if (endpoint.previous_secret === null || (endpoint.previous_secret_expires_at?.getTime() ?? 0) <= at) return [keys.key]
    keys.previous ??= this.#openPrevious(endpoint.previous_secret, endpoint.id)
    return keys.previous === null ? [keys.key] : [keys.key, keys.previous]
  }

  /** A previous secret sealed under a lost or replaced key must not block delivery: the host rotated precisely to get away from it. */
  #openPrevious(sealed: string, endpointId: string): Buffer | null {
    try {
      return webhookSigningKey(this.#settings.box.open(sealed, endpointId))
    } catch (error) {
      this.#settings.log.warn({ endpointId, err: error }, 'workforce-api: previous webhook secret does not open; signing with the current one only')
      return null
    }
  }

  #next(claim: ClaimedDelivery, response: WebhookResponse | undefined, succeeded: boolean, gone: boolean, now: Date): DeliveryNext {
    if (succeeded) return { status: 'delivered' }
    if (gone) return { status: 'failed' }
    const honoured = response !== undefined && (response.status === 429 || response.status === 503) ? parseRetryAfter(response.retryAfter, now) : null
    const at = nextAttemptAt(claim.attempt, now, this.#settings.retrySchedule, honoured, this.#settings.random)
    return at === null ? { status: 'failed' } : { status: 'pending', at }
  }

  async #disable(claim: ClaimedDelivery, reason: 'gone' | 'failing', now: number): Promise<void> {
    const { store, log, onEndpointDisabled } = this.#settings
    // Of several dispatchers seeing the same failure, only the one whose disable took effect tells the host.
    if (!(await store.disableEndpoint(claim.endpoint.id, reason, new Date(now)))) return
    log.warn({ endpointId: claim.endpoint.id, companyId: claim.endpoint.company_id, reason }, 'workforce-api: webhook endpoint disabled')
    if (onEndpointDisabled === undefined) return
    const endpoint = (await store.getEndpoint(claim.endpoint.id)) ?? claim.endpoint
    try {
      await onEndpointDisabled({ endpoint: endpointView(endpoint), reason })
    } catch (error) {
      log.error({ err: error, endpointId: claim.endpoint.id }, 'workforce-api: onEndpointDisabled failed')
    }
  }

  async #purge(): Promise<void> {
    const { store, clock, retentionMs, purgeBatch, log } = this.#settings
    try {
      // Bounded per tick so a large backlog is purged over several ticks, never in one long burst.
      for (let round = 0; round < 20 && !this.#stopped; round += 1) {
        if ((await store.purgeFinished(new Date(clock.now() - retentionMs), purgeBatch)) < purgeBatch) return
      }
    } catch (error) {
      log.warn({ err: error }, 'workforce-api: could not purge finished webhook deliveries')
    }
  }
}

function statusProblem(status: number): string {
  if (status >= 300 && status < 400) return `redirect (${status}) not followed: a redirect is a failure; point the endpoint at its final URL`
  if (status === 410) return 'gone (410): the endpoint was disabled'
  return `HTTP ${status}`
}

function describeFailure(error: unknown, timeoutMs: number): string {
  const err = error as { name?: string; message?: string; code?: string; cause?: { code?: string; message?: string } }
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError' || err?.code === 'UND_ERR_HEADERS_TIMEOUT' || err?.code === 'UND_ERR_BODY_TIMEOUT') return `timed out: no response within ${timeoutMs} ms`
  const code = err?.code ?? err?.cause?.code
  const message = err?.message ?? String(error)
  return (code !== undefined && !message.includes(code) ? `${code}: ${message}` : message).slice(0, MAX_ERROR_LENGTH)
}

/** Adds `by` to `key`'s count (dropping it at 0). @returns the new count. */
function bump<K>(counts: Map<K, number>, key: K, by: number): number {
  const count = (counts.get(key) ?? 0) + by
  if (count <= 0) counts.delete(key)
  else counts.set(key, count)
  return count
}
