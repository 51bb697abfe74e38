const SECOND = 1_000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/**
 * When a failed delivery is tried again, counted from the failure: 5 s, 5 min, 30 min, 2 h,
 * 5 h, 10 h, 10 h — eight attempts over about 28 hours (docs/webhooks.md).
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]
/** Each delay is spread by up to this fraction either way, so retries of many deliveries do not arrive together. */
export const RETRY_JITTER = 0.1
/** A receiver's `Retry-After` is honoured up to this. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR

const UNITS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: 24 * HOUR }

/**
 * Parses a schedule such as `5s,5m,30m,2h` (units ms, s, m, h, d) into milliseconds.
 * @throws TypeError naming the part that is wrong
 */
export function parseRetrySchedule(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim())
  return parts.map((part) => {
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(part)
    if (match === null) throw new TypeError(`"${part}" is not a delay such as 5s, 5m, 2h (units ms, s, m, h, d)`)
    const ms = Number(match[1]) * (UNITS[match[2] as string] as number)
    if (!Number.isSafeInteger(ms) || ms < 1 || ms > 7 * 24 * HOUR) throw new TypeError(`"${part}" must be from 1ms to 7d`)
    return ms
  })
}

/**
 * When the attempt after attempt number `attempt` (1-based) failed is due, or null when the
 * schedule is spent. `retryAfterMs` (the receiver's `Retry-After`) postpones it, never advances it.
 */
export function nextAttemptAt(
  attempt: number,
  now: Date,
  schedule: readonly number[],
  retryAfterMs: number | null = null,
  random: () => number = Math.random,
): Date | null {
  const base = schedule[attempt - 1]
  if (base === undefined) return null
  const jittered = Math.round(base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()))
  const delay = retryAfterMs === null ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS))
  return new Date(now.getTime() + delay)
}

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (value === null) return null
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * SECOND
  const at = Date.parse(trimmed)
  if (Number.isNaN(at) || !/[a-z]/i.test(trimmed)) return null
  return Math.max(0, at - now.getTime())
}
