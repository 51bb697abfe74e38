/** A response as it was sent, kept so a retry gets it back verbatim. */
export interface StoredResponse {
  status: number
  /** The headers worth replaying (content-type, location), lower-case names. */
  headers: Record<string, string>
  /** The exact bytes of the body, as a string. */
  body: string
}

export interface IdempotencyBegin {
  /** SHA-256 (hex) of the Authorization header value and the Idempotency-Key: never the raw header. */
  slot: string
  /** SHA-256 (hex) of method, path and canonical body. */
  fingerprint: string
  companyId: number
  /** Identifies this attempt; `complete` and `release` only act while the slot is still ours. */
  token: string
  now: Date
  /** The in-flight marker stops blocking the slot at this instant (a crashed request's lease runs out). */
  leaseUntil: Date
  /** Records created before this instant have expired (24 h retention) and are replaced. */
  expiredBefore: Date
}

/**
 * What `begin` found:
 * - `started`: the slot was free (or expired, or its lease ran out) and is now ours, in flight;
 * - `replay`: a completed record with the same fingerprint: send `response` again;
 * - `in_flight`: another attempt holds a live lease on the slot;
 * - `mismatch`: the slot holds a different request (method, path or body): nothing may run.
 */
export type IdempotencyBeginResult =
  | { state: 'started' }
  | { state: 'replay'; response: StoredResponse }
  | { state: 'in_flight' }
  | { state: 'mismatch' }

/**
 * Durable idempotency records (spec 4.4), shared by every app instance.
 *
 * `begin` must be atomic across instances: of many concurrent identical requests exactly one
 * gets `started`. A completed record that accompanies a mutation is written inside the
 * mutation's transaction (`WriteTransaction.completeIdempotency`), so a side effect never
 * exists without its record; `complete` here is for responses without a mutation (4xx).
 */
export interface IdempotencyStore {
  begin(request: IdempotencyBegin): Promise<IdempotencyBeginResult>
  /**
   * Marks the slot completed with `response` if `token` still holds it.
   * @returns false if the slot was taken over (lease expired) or is gone.
   */
  complete(slot: string, token: string, response: StoredResponse, now: Date): Promise<boolean>
  /**
   * Extends the lease of an in-flight slot `token` still holds to `leaseUntil` (the plugin's
   * heartbeat while a request runs, so a short lease only runs out when its holder died).
   * @returns false if the slot is gone, completed, or held by another token.
   */
  renew(slot: string, token: string, leaseUntil: Date): Promise<boolean>
  /** Frees the slot if `token` still holds it and it is in flight: the retry will execute (5xx, 401, 403, 429). */
  release(slot: string, token: string): Promise<void>
  /** Deletes up to `limit` records created before `before`. @returns how many were deleted. */
  purgeExpired(before: Date, limit: number): Promise<number>
}
