import type { UsageIncrement, UsageRow, UsageStore } from '../../src/ports/usage-store.js'

/**
 * The reference `UsageStore`: one row per (key, hour) in a `Map` the caller may pass in and
 * inspect, keyed by `<key_id>\n<hour in ms>`. Per process only, as the counts of one instance.
 */
export class MemoryUsageStore implements UsageStore {
  constructor(readonly rows: Map<string, UsageRow> = new Map()) {}

  async add(increments: readonly UsageIncrement[]): Promise<void> {
    for (const increment of increments) {
      const slot = `${increment.key_id}\n${increment.hour.getTime()}`
      const row = this.rows.get(slot)
      if (row === undefined) {
        this.rows.set(slot, structuredClone(increment))
        continue
      }
      row.requests += increment.requests
      row.client_errors += increment.client_errors
      row.server_errors += increment.server_errors
      row.rate_limited += increment.rate_limited
      // A row the caller's map held from before the field has none: it starts at 0.
      row.not_modified = (row.not_modified ?? 0) + increment.not_modified
      const added = increment.last_rate_limited_at
      if (added !== null && (row.last_rate_limited_at === null || added > row.last_rate_limited_at)) row.last_rate_limited_at = new Date(added)
    }
  }

  async hourly(companyId: number, since: Date): Promise<UsageRow[]> {
    return [...this.rows.values()]
      .filter((row) => row.company_id === companyId && row.hour >= since)
      .sort((a, b) => a.hour.getTime() - b.hour.getTime() || (a.key_id < b.key_id ? -1 : a.key_id > b.key_id ? 1 : 0))
      .map((row) => structuredClone(row))
  }
}
