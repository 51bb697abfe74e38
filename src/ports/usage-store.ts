/**
 * Requests per API key per hour, for the admin API's usage view. The plugin counts in memory
 * and adds its counts every few seconds (`add` is additive, so any number of instances may add
 * to the same hour). Durable and shared: keep it in the database.
 */
export interface UsageIncrement {
  company_id: number
  key_id: string
  /** The start of the UTC hour the requests were answered in. */
  hour: Date
  /** Every answer, 304s included. */
  requests: number
  /** Answers with a 4xx status (429 included). */
  client_errors: number
  /** Answers with a 5xx status. */
  server_errors: number
  /** Answers with 429. */
  rate_limited: number
  /** The latest 429 among them, or null. */
  last_rate_limited_at: Date | null
  /**
   * Answers with 304 Not Modified (a conditional GET whose `If-None-Match` was current); also
   * counted in `requests`, and not an error. Added after the port was first published: a store
   * written before it may ignore it, and the usage view then shows 0.
   */
  not_modified: number
}

/**
 * One key's counts for one hour, summed over every instance. `not_modified` is optional only so
 * that a store written before it still type-checks (the admin API reads a missing one as 0); the
 * reference stores always return it and the conformance suite requires it.
 */
export type UsageRow = Omit<UsageIncrement, 'not_modified'> & { not_modified?: number }

export interface UsageStore {
  /**
   * Adds each increment's counts (`not_modified` too) to its (key, hour) row, creating it;
   * `last_rate_limited_at` keeps the later of the stored and the added instant. Atomic per call.
   */
  add(increments: readonly UsageIncrement[]): Promise<void>
  /** The company's rows with `hour >= since`, ordered by `hour` then `key_id`. Never another company's. */
  hourly(companyId: number, since: Date): Promise<UsageRow[]>
}
