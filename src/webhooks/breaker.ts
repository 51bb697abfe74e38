import type { BreakerRule, EndpointHealth } from '../ports/webhook-store.js'

/** Failed attempts in a row that open an endpoint's breaker (docs/webhooks.md). */
export const DEFAULT_BREAKER_THRESHOLD = 5
/** The first pause of an open breaker (ms); each failed probe doubles it. */
export const DEFAULT_BREAKER_PAUSE_MS = 30_000
/** The longest pause (ms): a failing endpoint is still probed this often, so it recovers soon after its receiver does. */
export const DEFAULT_BREAKER_MAX_PAUSE_MS = 5 * 60_000

/** A healthy endpoint's health. */
export const HEALTHY: EndpointHealth = { failing_since: null, consecutive_failures: 0, paused_until: null, pause_ms: 0 }

/**
 * An endpoint's health after one more attempt, by `rule` (see `WebhookStore.finishAttempt`):
 * the one definition every store applies, inside the transaction that records the attempt.
 * `opened` is true only for the closed → open change.
 *
 * @example
 * nextEndpointHealth({ ...HEALTHY, consecutive_failures: 4, failing_since }, false, { threshold: 5, pauseMs: 30_000, maxPauseMs: 300_000 }, now)
 * // → { health: { consecutive_failures: 5, paused_until: now + 30 s, pause_ms: 30_000, … }, opened: true, closed: false }
 */
export function nextEndpointHealth(
  before: EndpointHealth,
  succeeded: boolean,
  rule: BreakerRule | undefined,
  now: Date,
): { health: EndpointHealth; opened: boolean; closed: boolean } {
  if (succeeded) return { health: HEALTHY, opened: false, closed: healthChanged(before, HEALTHY) }
  const failures = before.consecutive_failures + 1
  const failing_since = before.failing_since ?? now
  const unchanged = { health: { ...before, failing_since, consecutive_failures: failures }, opened: false, closed: false }
  if (rule === undefined) return unchanged
  if (before.paused_until === null) {
    if (failures < rule.threshold) return unchanged
    const pause = Math.min(rule.pauseMs, rule.maxPauseMs)
    return { health: { failing_since, consecutive_failures: failures, paused_until: new Date(now.getTime() + pause), pause_ms: pause }, opened: true, closed: false }
  }
  // Open: a failure while the pause runs came from an attempt claimed before it opened.
  if (before.paused_until.getTime() > now.getTime()) return unchanged
  const pause = Math.min(Math.max(before.pause_ms, rule.pauseMs) * 2, rule.maxPauseMs)
  return { health: { failing_since, consecutive_failures: failures, paused_until: new Date(now.getTime() + pause), pause_ms: pause }, opened: false, closed: false }
}

/** Whether `health` needs writing after an attempt that left it as `before` (a healthy endpoint's success writes nothing). */
export function healthChanged(before: EndpointHealth, after: EndpointHealth): boolean {
  return (
    before.consecutive_failures !== after.consecutive_failures ||
    before.pause_ms !== after.pause_ms ||
    before.failing_since?.getTime() !== after.failing_since?.getTime() ||
    before.paused_until?.getTime() !== after.paused_until?.getTime()
  )
}
