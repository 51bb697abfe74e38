import type { Settings } from '../api/types'

const NUMBER = new Intl.NumberFormat()

/** `60000` → "minute", `1000` → "second", `90000` → "90 seconds": the window a budget is counted in. */
export function windowName(windowMs: number): string {
  for (const [ms, unit] of [[3_600_000, 'hour'], [60_000, 'minute'], [1_000, 'second']] as const) {
    if (windowMs === ms) return unit
    if (windowMs % ms === 0) return `${NUMBER.format(windowMs / ms)} ${unit}s`
  }
  return `${NUMBER.format(windowMs)} ms`
}

/** "600 requests per minute", or why there is no limit. */
export function defaultLimitText(settings: Settings | undefined): string | undefined {
  if (settings === undefined) return undefined
  const limit = settings.rate_limit
  if (limit === null) return 'Rate limiting is off on this server, so no limit applies.'
  return `${NUMBER.format(limit.default_max)} requests per ${windowName(limit.window_ms)}`
}

/** A key's limit for its table cell: its own, else the server's default ("default (600)"), with the window beneath. */
export function keyLimit(rateLimit: number | null, settings: Settings | undefined): { value: string; note?: string } {
  const own = rateLimit === null ? undefined : NUMBER.format(rateLimit)
  if (settings === undefined) return { value: own ?? 'default' }
  if (settings.rate_limit === null) return own === undefined ? { value: 'none', note: 'rate limiting is off' } : { value: own, note: 'not enforced: rate limiting is off' }
  const note = `per ${windowName(settings.rate_limit.window_ms)}`
  return { value: own ?? `default (${NUMBER.format(settings.rate_limit.default_max)})`, note }
}

/** A form's rate limit: '' for the default, else a whole number from 1 to 1,000,000,000. */
export function parseRateLimit(text: string): { value: number | null } | { problem: string } {
  const trimmed = text.trim()
  if (trimmed === '') return { value: null }
  if (!/^\d+$/.test(trimmed)) return { problem: 'Enter a whole number of requests, e.g. 120, or leave it empty for the default.' }
  const value = Number(trimmed)
  if (value < 1 || value > 1_000_000_000) return { problem: 'Enter a number from 1 to 1,000,000,000, or leave it empty for the default.' }
  return { value }
}
