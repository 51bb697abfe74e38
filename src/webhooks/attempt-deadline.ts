/**
 * One attempt's deadline: a signal that aborts after `timeoutMs` or when `shutdown` aborts, and
 * `bound`, which settles a promise by the deadline even if whatever made it ignores the signal
 * (a host's transport may).
 *
 * Why not `AbortSignal.any([AbortSignal.timeout(ms), shutdown])`: a timeout signal that nothing
 * strongly references can be garbage-collected before it fires (nodejs/node#57736), and the
 * attempt then never ends. Here the attempt holds the timer and the controller until `clear()`,
 * which the caller runs in `finally`, so the deadline fires whatever the collector does, and a
 * finished attempt leaves no timer or listener behind.
 *
 * @example
 * const deadline = attemptDeadline(15_000, shutdown.signal)
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
  /** Stops the timer and lets go of `shutdown`; call it once the attempt is over. */
  clear(): void
}

export function attemptDeadline(timeoutMs: number, shutdown: AbortSignal): AttemptDeadline {
  const controller = new AbortController()
  const onShutdown = () => controller.abort(shutdown.reason)
  const timer = setTimeout(() => controller.abort(new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)
  if (shutdown.aborted) onShutdown()
  else shutdown.addEventListener('abort', onShutdown, { once: true })
  let expired: Promise<never> | undefined
  return {
    signal: controller.signal,
    bound<T>(work: Promise<T>): Promise<T> {
      expired ??= new Promise<never>((_, reject) => {
        if (controller.signal.aborted) reject(controller.signal.reason)
        else controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true })
      })
      // The losing promise's rejection is handled: an ignored late failure is not an unhandled one.
      work.catch(() => {})
      return Promise.race([work, expired])
    },
    clear() {
      clearTimeout(timer)
      shutdown.removeEventListener('abort', onShutdown)
    },
  }
}
