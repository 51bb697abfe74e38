import { setMaxListeners } from 'node:events'
import { performance } from 'node:perf_hooks'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../ports/clock.js'
import type {
  BreakerRule,
  ClaimedDelivery,
  ClaimPolicy,
  DeliveryNext,
  FinishedAttempt,
  WebhookAttemptRecord,
  WebhookDisabledReason,
  WebhookStore,
} from '../ports/webhook-store.js'
import type { WebhookResponse, WebhookTransport } from '../ports/webhook-transport.js'
import { RESPONSE_BODY_KEPT_BYTES } from './http-transport.js'
import { nextAttemptAt, parseRetryAfter } from './retry.js'
import { attemptDeadline } from './attempt-deadline.js'
import type { SecretBox } from './secret-box.js'
import { signWebhook } from './signature.js'
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
  /** Random source for retry jitter (tests pin it). */
  random?: () => number
}

const USER_AGENT = 'fastify-workforce-api-webhooks/1'
/**
 * Finished attempts wake the claim loop at most once per this (ms): each frees a place under a
 * cap, but most such claims find nothing new, and on SQLite every claim runs on the event loop.
 * A commit (`wake()`) is never delayed by it.
 */
const FREED_CLAIM_INTERVAL_MS = 50
const MAX_ERROR_LENGTH = 500

/**
 * Delivers due webhook attempts: claims them from the store (each claim is one dispatcher's,
 * for `leaseMs`), signs and sends them, and records each attempt with the delivery's next
 * state. Woken by the store when an event commits, polling as the fallback. Several
 * dispatchers (app instances) share one store; each attempt goes to one of them.
 */
export class WebhookDispatcher {
  readonly #settings: DispatcherSettings
  readonly #inFlight = new Set<Promise<void>>()
  readonly #abort = new AbortController()
  #running: Promise<void> | undefined
  #stopped = false
  #woken = false
  /** An attempt finished since the last claim (a place under a cap may be free). */
  #freed = false
  #lastClaimAt = 0
  #sleeper: (() => void) | undefined
  #unsubscribe: (() => Promise<void>) | undefined
  #purgeTimer: NodeJS.Timeout | undefined

  constructor(settings: DispatcherSettings) {
    this.#settings = settings
    // Each attempt in flight listens for shutdown until it ends: at most `concurrency` at once.
    setMaxListeners(settings.concurrency + 10, this.#abort.signal)
  }

  async start(): Promise<void> {
    const { store, log } = this.#settings
    if (store.subscribeDue !== undefined) {
      try {
        this.#unsubscribe = await store.subscribeDue(() => this.wake())
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

  /** Stops claiming, lets attempts in flight finish for `shutdownGraceMs`, then aborts the rest (their leases run out and another dispatcher retries them). */
  async stop(): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    clearInterval(this.#purgeTimer)
    this.wake()
    await this.#unsubscribe?.().catch(() => {})
    await this.#running
    const settled = Promise.allSettled([...this.#inFlight])
    let grace: NodeJS.Timeout | undefined
    await Promise.race([settled, new Promise((resolve) => (grace = setTimeout(resolve, this.#settings.shutdownGraceMs)))])
    clearTimeout(grace)
    this.#abort.abort()
    await settled
    await this.#settings.transport.close?.()
  }

  async #loop(): Promise<void> {
    const { store, clock, log, batch, concurrency, leaseMs, pollIntervalMs } = this.#settings
    while (!this.#stopped) {
      const room = Math.min(batch, concurrency - this.#inFlight.size)
      if (room <= 0) {
        await Promise.race(this.#inFlight)
        continue
      }
      this.#woken = false
      this.#freed = false
      this.#lastClaimAt = performance.now()
      let claims: ClaimedDelivery[] = []
      try {
        const now = clock.now()
        claims = await store.claimDue(new Date(now), new Date(now + leaseMs), room, this.#policy(now))
      } catch (error) {
        log.warn({ err: error }, 'workforce-api: could not claim webhook deliveries; will retry')
      }
      for (const claim of claims) {
        const attempt = this.#attempt(claim).catch((error: unknown) =>
          log.error({ err: error, deliveryId: claim.delivery_id }, 'workforce-api: webhook attempt could not be recorded; it is retried when its lease ends'),
        )
        this.#inFlight.add(attempt)
        // A finished attempt frees a place under its endpoint's and company's caps: look again,
        // at most once per FREED_CLAIM_INTERVAL_MS (finishes in between coalesce into one claim).
        void attempt.finally(() => {
          this.#inFlight.delete(attempt)
          this.#freed = true
          this.#sleeper?.()
        })
      }
      if (claims.length < room) await this.#sleep(pollIntervalMs)
    }
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

  /** Until `ms` pass, a wake-up, or (no sooner than FREED_CLAIM_INTERVAL_MS after the last claim) a finished attempt. */
  #sleep(ms: number): Promise<void> {
    if (this.#woken || this.#stopped) return Promise.resolve()
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined
      const done = () => {
        clearTimeout(timer)
        if (this.#sleeper === sleeper) this.#sleeper = undefined
        resolve()
      }
      const sleeper = () => {
        if (this.#woken || this.#stopped) return done()
        // Only a finished attempt: claim once the interval since the last claim has passed.
        const wait = this.#lastClaimAt + FREED_CLAIM_INTERVAL_MS - performance.now()
        if (wait <= 0) return done()
        clearTimeout(timer)
        timer = setTimeout(done, Math.min(wait, ms))
      }
      timer = setTimeout(done, ms)
      this.#sleeper = sleeper
      if (this.#freed) sleeper()
    })
  }

  async #attempt(claim: ClaimedDelivery): Promise<void> {
    const { store, transport, clock, timeoutMs, box } = this.#settings
    const { endpoint, event } = claim
    const started = clock.now()
    const t0 = performance.now()
    let response: WebhookResponse | undefined
    let failure: string | undefined
    try {
      // Both secrets sign during a rotation's overlap, so receivers can switch at their pace.
      const secrets = [box.open(endpoint.secret, endpoint.id)]
      if (endpoint.previous_secret !== null && (endpoint.previous_secret_expires_at?.getTime() ?? 0) > started) {
        // A previous secret sealed under a lost or replaced key must not block delivery: the
        // host rotated precisely to get away from it.
        const previous = this.#openPrevious(endpoint.previous_secret, endpoint.id)
        if (previous !== null) secrets.push(previous)
      }
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signWebhook(secrets, event.id, Math.floor(started / 1000), event.payload),
      }
      // Not AbortSignal.timeout: a garbage collection can take it before it fires (nodejs/node#57736).
      const deadline = attemptDeadline(timeoutMs, this.#abort.signal)
      try {
        response = await deadline.bound(transport.send({ url: endpoint.url, headers, body: event.payload, signal: deadline.signal }))
      } finally {
        deadline.clear()
      }
    } catch (error) {
      if (this.#abort.signal.aborted) return // shutting down: the lease runs out and the attempt is made again
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
    const gone = response?.status === 410
    const next = this.#next(claim, response, succeeded, gone, new Date(finished))
    const recorded = await store.finishAttempt(claim, { attempt, next, breaker: this.#settings.breaker }, new Date(finished))
    if (recorded === null) {
      this.#settings.log.debug({ deliveryId: claim.delivery_id }, 'workforce-api: webhook claim was taken over; attempt not recorded')
      return
    }
    if (gone) return this.#disable(claim, 'gone', finished)
    const failingSince = recorded.health.failing_since?.getTime()
    if (!succeeded && failingSince !== undefined && finished - failingSince >= this.#settings.autoDisableAfterMs) {
      return this.#disable(claim, 'failing', finished)
    }
    if (recorded.opened) await this.#failing(claim, recorded, attempt.error)
    else if (recorded.closed && claim.endpoint.paused_until !== null) {
      this.#settings.log.info({ endpointId: endpoint.id, companyId: endpoint.company_id }, 'workforce-api: webhook endpoint recovered; breaker closed')
    }
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

  #openPrevious(sealed: string, endpointId: string): string | null {
    try {
      return this.#settings.box.open(sealed, endpointId)
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
