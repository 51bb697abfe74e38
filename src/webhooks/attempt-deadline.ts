/**
 * One attempt's deadline: a signal that aborts after `timeoutMs` or at shutdown, and `bound`,
 * which settles a promise by the deadline even if whatever made it ignores the signal (a host's
 * transport may).
 *
 * Why not `AbortSignal.any([AbortSignal.timeout(ms), shutdown])`: a timeout signal that nothing
 * strongly references can be garbage-collected before it fires (nodejs/node#57736), and the
 * attempt then never ends. Here the attempt holds the timer and the controller until `clear()`,
 * which the caller runs in `finally`, so the deadline fires whatever the collector does, and a
 * finished attempt leaves no timer behind.
 *
 * Why one `AttemptDeadlines` per dispatcher rather than a listener on the shutdown signal per
 * attempt: the dispatcher's deadlines listen to shutdown once and keep the live ones in a set,
 * and the expiry rejects `bound` itself instead of listening to the attempt's signal. Adding and
 * removing `EventTarget` listeners is slow in Node: a deadline alone costs 4.8–5.6 µs of CPU
 * this way, 7.4–9.1 µs with the two listeners and `Promise.race` it had before (`bench/attempt-path.ts`),
 * and the shutdown signal no longer needs room for one listener per attempt in flight.
 *
 * @example
 * const deadlines = new AttemptDeadlines(shutdown.signal) // once per dispatcher
 * const deadline = deadlines.start(15_000)
 * try {
 *   return await deadline.bound(transport.send({ ...request, signal: deadline.signal }))
 * } finally {
 *   deadline.clear()
 * }
 */
export interface AttemptDeadline {
  readonly signal: AbortSignal
  /** Settles like `work`, or rejects with the abort reason (a `TimeoutError`, or shutdown's) when the deadline comes first. */
  bound<T>(work: Promise<T>): Promise<T>
  /** Stops the timer and lets go of the attempt; call it once the attempt is over. */
  clear(): void
}

/** The deadlines of one dispatcher's attempts, all ended at once when `shutdown` aborts. */
export class AttemptDeadlines {
  readonly #live = new Set<Deadline>()
  readonly #shutdown: AbortSignal

  constructor(shutdown: AbortSignal) {
    this.#shutdown = shutdown
    shutdown.addEventListener(
      'abort',
      () => {
        for (const deadline of [...this.#live]) deadline.expire(shutdown.reason)
      },
      { once: true },
    )
  }

  /** A deadline `timeoutMs` from now; already expired if shutdown has aborted. */
  start(timeoutMs: number): AttemptDeadline {
    const deadline = new Deadline(timeoutMs, this.#live)
    if (this.#shutdown.aborted) deadline.expire(this.#shutdown.reason)
    return deadline
  }

  /** Deadlines started and not yet cleared (tests: a finished attempt leaves none). */
  get live(): number {
    return this.#live.size
  }
}

class Deadline implements AttemptDeadline {
  readonly #controller = new AbortController()
  readonly #timer: NodeJS.Timeout
  readonly #live: Set<Deadline>
  /** Rejects the promise `bound` returned, once the deadline comes first. */
  #reject: ((reason: unknown) => void) | undefined

  constructor(timeoutMs: number, live: Set<Deadline>) {
    this.#live = live
    live.add(this)
    this.#timer = setTimeout(() => this.expire(new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)
  }

  get signal(): AbortSignal {
    return this.#controller.signal
  }

  bound<T>(work: Promise<T>): Promise<T> {
    const { signal } = this.#controller
    if (signal.aborted) {
      // The losing promise's rejection is handled: an ignored late failure is not an unhandled one.
      work.catch(() => {})
      return Promise.reject(signal.reason)
    }
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject
      work.then(resolve, reject)
    })
  }

  /** Aborts the signal and rejects `bound` with `reason` (the timer, or shutdown). */
  expire(reason: unknown): void {
    if (this.#controller.signal.aborted) return
    this.#controller.abort(reason)
    this.#reject?.(reason)
  }

  clear(): void {
    clearTimeout(this.#timer)
    this.#live.delete(this)
    this.#reject = undefined
  }
}
