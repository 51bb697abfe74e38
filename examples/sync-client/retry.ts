/**
 * When a request is sent again, and how long the client waits first (docs/api.md 5 and 7).
 *
 * - A read (GET) is retried on 429 and 503, and when no response came at all.
 * - A write that carries an `Idempotency-Key` is retried when no response came, on any 5xx, on
 *   429, and on the 409 that means "the first attempt with this key is still in flight". The
 *   server runs it at most once, so a retry after a lost response gets the first answer back.
 * - A write without the key is retried only on 429, which refused it before anything ran: after
 *   a lost response or a 5xx it may have happened, and sending it again could do it twice.
 * - Nothing else is retried: any other 4xx is the answer, and a replayed answer
 *   (`Idempotent-Replay: true`) is final whatever its status.
 * - A `304 Not Modified` is a success, not a failure: the answer the client kept is current
 *   (conditional.ts), and it is handed back at once, whatever else it carries.
 *
 * The wait is the response's `Retry-After` when it has one, else an exponential backoff.
 */

/** Attempts per request, the first one included. */
export const DEFAULT_MAX_ATTEMPTS = 5
/** The first backoff when the server named no wait (ms); it doubles each attempt, with jitter. */
export const DEFAULT_BASE_DELAY_MS = 250
/** The longest wait the client accepts (ms). A longer `Retry-After` ends the retries: the response is the answer. */
export const DEFAULT_MAX_DELAY_MS = 60_000
/** How long one attempt may wait for its response (ms); past it, the response counts as lost. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 30_000

const READ_METHODS = new Set(['GET', 'HEAD'])

export interface RetryOptions {
  /** Attempts per request, the first one included. Default 5. */
  maxAttempts?: number
  /** First backoff without `Retry-After` (ms). Default 250. */
  baseDelayMs?: number
  /** Longest wait accepted (ms). Default 60,000. */
  maxDelayMs?: number
  /** How long one attempt may wait for its response (ms). Default 30,000. */
  attemptTimeoutMs?: number
  /** Waits `ms` milliseconds. Tests pass one that records the waits. */
  sleep?: (ms: number) => Promise<void>
  /** Called before each wait. */
  onRetry?: (retry: RetryNotice) => void
}

/** One retry about to happen: what went wrong, and how long the client waits before it. */
export interface RetryNotice {
  method: string
  url: string
  /** The attempt that failed, from 1. */
  attempt: number
  /** Its status, or null when no response came. */
  status: number | null
  /** Its `Retry-After` header, as sent. */
  retryAfter: string | null
  /** The error, when no response came. */
  error?: unknown
  /** How long the client waits (ms). */
  delayMs: number
}

/** What an attempt ended with: a response, or an error instead of one. */
export type AttemptOutcome = { response: Response } | { error: unknown }

/** Whether a request may be sent again after `outcome` (the rules at the top of this file). */
export function isRetryable(request: Request, outcome: AttemptOutcome): boolean {
  const read = READ_METHODS.has(request.method)
  const idempotent = request.headers.has('idempotency-key')
  if ('error' in outcome) return (read || idempotent) && !request.signal.aborted
  const { status, headers } = outcome.response
  // Outside 2xx, but the answer to an If-None-Match: the kept copy is current.
  if (status === 304) return false
  if (status === 429) return true
  if (read) return status === 503
  if (!idempotent || headers.get('idempotent-replay') === 'true') return false
  // The in-flight 409 is the only one with Retry-After; a 409 of the resource's own rules
  // (a user already a member) is recorded, and sending it again would only replay it.
  return status >= 500 || (status === 409 && headers.has('retry-after'))
}

/**
 * Milliseconds a `Retry-After` value asks for: whole seconds (what this API sends) or an HTTP
 * date. Null when absent or unreadable.
 */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // An HTTP date names its day and month in letters; Date.parse would take '-1' for a year.
  if (!/^[A-Za-z]{3}, /.test(text)) return null
  const date = Date.parse(text)
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

/** The wait before attempt `attempt + 1` when the server named none: doubling, jittered, capped. */
export function backoffMs(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1))
  // Half fixed, half random: clients that failed together do not all come back together.
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
}

/**
 * Wraps `send` (one attempt) in the retry rules. Each attempt sends a clone of the request, so
 * the body and every header, `Idempotency-Key` included, are the same each time.
 *
 * @example
 * const fetchWithRetry = retryingFetch((request) => fetch(request), { maxAttempts: 3 })
 * const response = await fetchWithRetry(new Request('http://127.0.0.1:3000/api/public/v1/company'))
 */
export function retryingFetch(send: (request: Request) => Promise<Response>, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
  const baseDelayMs = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS
  const maxDelayMs = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS
  const attemptTimeoutMs = options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))

  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      const outcome = await attemptOnce(send, request, attemptTimeoutMs)
      const retryAfter = 'response' in outcome ? outcome.response.headers.get('retry-after') : null
      const asked = retryAfterMs(retryAfter)
      const delayMs = asked ?? backoffMs(attempt, baseDelayMs, maxDelayMs)
      if (attempt >= maxAttempts || delayMs > maxDelayMs || !isRetryable(request, outcome)) {
        if ('error' in outcome) throw outcome.error
        return outcome.response
      }
      // Read to the end, so the connection goes back to the pool.
      if ('response' in outcome) await outcome.response.arrayBuffer().catch(() => undefined)
      options.onRetry?.({
        method: request.method,
        url: request.url,
        attempt,
        status: 'response' in outcome ? outcome.response.status : null,
        retryAfter,
        ...('error' in outcome ? { error: outcome.error } : {}),
        delayMs,
      })
      await sleep(delayMs)
    }
  }
}

/**
 * Sends a clone of `request`, given up if no response arrives within `timeoutMs` (a hung attempt
 * counts as a lost response) or when the caller aborts `request` (which is never retried).
 *
 * A request's signal follows the one it was made with only weakly, and `fetch` copies the
 * request again: once nothing holds our copy, Node may collect it, and the abort then reaches
 * nobody. So the copy is held until the attempt settles, and the timer also settles the attempt
 * by itself rather than trusting the abort to arrive.
 */
async function attemptOnce(send: (request: Request) => Promise<Response>, request: Request, timeoutMs: number): Promise<AttemptOutcome> {
  const controller = new AbortController()
  const attempt = new Request(request.clone(), { signal: controller.signal })
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError')
      controller.abort(error)
      reject(error)
    }, timeoutMs)
  })
  const forward = () => controller.abort(request.signal.reason)
  if (request.signal.aborted) forward()
  request.signal.addEventListener('abort', forward, { once: true })
  try {
    return { response: await Promise.race([send(attempt), timedOut]) }
  } catch (error) {
    return { error }
  } finally {
    clearTimeout(timer)
    request.signal.removeEventListener('abort', forward)
    held(attempt)
  }
}

/** Keeps `value` reachable up to this call (see `attemptOnce`). */
function held(value: unknown): void {
  void value
}
