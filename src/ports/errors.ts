/**
 * The errors a port may throw on purpose, for the plugin to answer with a status of its own
 * (409, 503, 504) instead of a 500. Adapters import them from `fastify-workforce-api` (or
 * `fastify-workforce-api/conformance`).
 *
 * `instanceof` recognises them by a brand (`Symbol.for`), not by object identity: the package's
 * ESM and CommonJS builds, each subpath's bundle and two installed copies of the package each
 * hold a class of their own, and an error thrown with any of them must still be recognised by
 * the plugin, whichever build it was loaded from. An error that only looks alike (its own class
 * named `WriteConflict`) is not: throw ours, or a subclass of it.
 */

/** Seconds a client is told to wait when the database cannot answer (`Retry-After`). */
export const UNAVAILABLE_RETRY_AFTER_S = 1

const WRITE_CONFLICT = Symbol.for('fastify-workforce-api/WriteConflict')
const STORAGE_UNAVAILABLE = Symbol.for('fastify-workforce-api/StorageUnavailable')
const STATEMENT_TIMEOUT = Symbol.for('fastify-workforce-api/StatementTimeout')

/** Whether `value` carries `brand` (set on the branded class's prototype, so subclasses carry it too). */
function branded(value: unknown, brand: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
}

/**
 * `instanceof` for a branded base class: any copy's instance for the base itself, the ordinary
 * prototype check for a subclass (so `x instanceof MyConflict` still means what it says).
 */
function brandedInstance(constructor: Function, base: Function, brand: symbol, value: unknown): boolean {
  if (constructor !== base) return Function.prototype[Symbol.hasInstance].call(constructor, value)
  return branded(value, brand)
}

/**
 * Thrown by a `WriteTransaction` when a write would break uniqueness: a person whose email
 * (compared case-insensitively) already exists (`createPerson`), a company user with that email
 * already exists, pending or accepted (`addPendingMembership`), or a person is already a member
 * of the company (`acceptMembership`). Throw it from the unique
 * index's violation, so that of two racing transactions the loser gets it. The plugin answers
 * 409 `conflict`; the transaction is rolled back like for any other error.
 *
 * @example
 * try { await insertMembership(row) } catch (error) { if (isUniqueViolation(error)) throw new WriteConflict(`user ${userId} is already a member`, { cause: error }); throw error }
 */
export class WriteConflict extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'WriteConflict'
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return brandedInstance(this, WriteConflict, WRITE_CONFLICT, value)
  }
}
Object.defineProperty(WriteConflict.prototype, WRITE_CONFLICT, { value: true })

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

  static override [Symbol.hasInstance](value: unknown): boolean {
    return brandedInstance(this, StorageUnavailable, STORAGE_UNAVAILABLE, value)
  }
}
Object.defineProperty(StorageUnavailable.prototype, STORAGE_UNAVAILABLE, { value: true })

/**
 * Thrown by an adapter when its database stopped one statement for running past the
 * database's own bound (Postgres' `statement_timeout`, SQLSTATE 57014 "canceling statement due
 * to statement timeout"): the server is up and answered, but this statement was too expensive.
 * It is not an outage: the adapter keeps its connection and keeps serving every other request.
 * The API answers 504 `query_timeout`, without `Retry-After` (the same request would cost the
 * same again); the message and `cause` go to the log only, never to the client. A write it
 * stops is rolled back like for any other error.
 *
 * Do not throw it for a database that did not answer in time at all (frozen, unreachable):
 * that is `StorageUnavailable`.
 *
 * @example
 * try { return await pool.query(sql) } catch (error) { if (isStatementTimeout(error)) throw new StatementTimeout('postgres: statement_timeout', { cause: error }); throw error }
 */
export class StatementTimeout extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'StatementTimeout'
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return brandedInstance(this, StatementTimeout, STATEMENT_TIMEOUT, value)
  }
}
Object.defineProperty(StatementTimeout.prototype, STATEMENT_TIMEOUT, { value: true })
