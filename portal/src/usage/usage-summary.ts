import type { UsageRow } from '../api/types'

export const USAGE_DAYS = 7
const DAY_MS = 86_400_000

export interface KeyUsage {
  key_id: string
  /** Requests per day, oldest first: day 0 starts at `since`. */
  daily: number[]
  requests: number
  /** Answers with 304: the client's copy was current. Also in `requests`. */
  not_modified: number
  client_errors: number
  server_errors: number
  rate_limited: number
  last_rate_limited_at: string | null
}

/** The hourly rows of `GET /usage`, summed per key, busiest key first. */
export function summarizeUsage(rows: readonly UsageRow[], since: string): KeyUsage[] {
  const start = Date.parse(since)
  const byKey = new Map<string, KeyUsage>()
  for (const row of rows) {
    let usage = byKey.get(row.key_id)
    if (usage === undefined) {
      usage = { key_id: row.key_id, daily: new Array<number>(USAGE_DAYS).fill(0), requests: 0, not_modified: 0, client_errors: 0, server_errors: 0, rate_limited: 0, last_rate_limited_at: null }
      byKey.set(row.key_id, usage)
    }
    const day = Math.min(USAGE_DAYS - 1, Math.max(0, Math.floor((Date.parse(row.hour) - start) / DAY_MS)))
    usage.daily[day]! += row.requests
    usage.requests += row.requests
    usage.not_modified += row.not_modified
    usage.client_errors += row.client_errors
    usage.server_errors += row.server_errors
    usage.rate_limited += row.rate_limited
    if (row.last_rate_limited_at !== null && (usage.last_rate_limited_at === null || row.last_rate_limited_at > usage.last_rate_limited_at)) {
      usage.last_rate_limited_at = row.last_rate_limited_at
    }
  }
  return [...byKey.values()].sort((a, b) => b.requests - a.requests)
}
