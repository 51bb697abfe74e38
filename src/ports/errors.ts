/** Seconds a client is told to wait when the database cannot answer (`Retry-After`). */
export const UNAVAILABLE_RETRY_AFTER_S = 1

/**
 * Thrown by an adapter when its database cannot answer now — unreachable, frozen, a timed-out
 * query or connection acquire, a busy or locked file — as opposed to a bug. The API answers
 * 503 `service_unavailable` with `Retry-After`, which clients and load balancers can tell
 * apart from a 500; the message and `cause` go to the log only, never to the client.
 *
 * @example
 * try { return await pool.query(sql) } catch (error) { if (isConnectionError(error)) throw new StorageUnavailable('postgres unreachable', { cause: error }); throw error }
 */
export class StorageUnavailable extends Error {
  /** Whole seconds the client should wait before retrying (≥ 1). */
  readonly retryAfterSeconds: number

  constructor(message: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(message, { cause: options.cause })
    this.name = 'StorageUnavailable'
    this.retryAfterSeconds = Math.max(1, Math.ceil(options.retryAfterSeconds ?? UNAVAILABLE_RETRY_AFTER_S))
  }
}
