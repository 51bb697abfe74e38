import { StatementTimeout, StorageUnavailable } from '../../src/ports/errors.js'

/**
 * Why Postgres cannot answer now, or `null` for any other failure (a bug, a constraint):
 * - `unreachable`: no server behind the connection — refused, reset, terminated, timed out,
 *   shutting down or starting up. The connection it happened on is unusable.
 * - `busy`: the server may well be up, but cannot take this now — a statement cancelled on
 *   request (57014, `pg_cancel_backend`), no connection slot left on it (53300), no free
 *   client in the pool in time. The connection, if any, is still good.
 *
 * A statement stopped by `statement_timeout` is neither (`null`): the server answered, the
 * statement was too expensive. `toStorageError` makes it a `StatementTimeout` (504).
 */
export type UnavailableReason = 'unreachable' | 'busy'

/** SQLSTATEs of a server that answered but will not run the statement now. */
const BUSY_SQLSTATES = new Set([
  '57014', // query_canceled: a cancel request (statement_timeout is told apart by its message)
  '53300', // too_many_connections
])

/** SQLSTATEs of a connection that is gone or never came up; class 08 is matched by prefix. */
const UNREACHABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: fast shutdown, or pg_terminate_backend
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
])

/** Socket and resolver errors of Node's `net` and `dns`. */
const UNREACHABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
])

/**
 * pg and pg-pool raise these without a code: an ended socket, their own connect timeout,
 * their own query timeout, a client that already lost its connection.
 */
const UNREACHABLE_MESSAGE = /^(Connection terminated|Query read timeout|Client has encountered a connection error and is not queryable)/
/** pg-pool's wait for a free client ran out (a new client's connect timing out is "Connection terminated due to…"). */
const BUSY_MESSAGE = /^timeout exceeded when trying to connect/

/** The cause of the guard's own acquire timeout: the pool's wait, classified as pg-pool's. */
export function acquireTimeoutCause(ms: number): Error {
  return new Error(`timeout exceeded when trying to connect (no free client within ${ms} ms)`)
}

/** How deep to follow `cause` and `AggregateError.errors` (pg wraps, Node aggregates per address). */
const MAX_DEPTH = 4

/**
 * 57014 is both a cancel request and `statement_timeout`; only the server's message tells them
 * apart ("canceling statement due to statement timeout" vs "… due to user request"). Servers
 * with `lc_messages` other than English translate it: such a timeout stays a 503, as before.
 */
const STATEMENT_TIMEOUT_MESSAGE = /statement timeout/i

/**
 * Whether `error` (or an error in its `cause` chain) is a statement Postgres stopped at
 * `statement_timeout`: SQLSTATE 57014 with the timeout's message.
 *
 * @example
 * isStatementTimeout({ code: '57014', message: 'canceling statement due to statement timeout' }) // true
 * isStatementTimeout({ code: '57014', message: 'canceling statement due to user request' }) // false
 */
export function isStatementTimeout(error: unknown, depth = 0): boolean {
  if (error instanceof StatementTimeout) return true
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return false
  const { code, message, cause } = error as { code?: unknown; message?: unknown; cause?: unknown }
  if (code === '57014' && typeof message === 'string' && STATEMENT_TIMEOUT_MESSAGE.test(message)) return true
  return cause !== undefined && isStatementTimeout(cause, depth + 1)
}

/**
 * Whether `error` is, or was caused by, a cancelled statement (57014), however Postgres worded
 * it: a statement timeout, a cancel request, or a timeout that fired as the statement before
 * ended and was reported during the next one as "due to user request".
 */
export function isQueryCancelled(error: unknown, depth = 0): boolean {
  if (error instanceof StatementTimeout) return true
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return false
  const { code, cause } = error as { code?: unknown; cause?: unknown }
  if (code === '57014') return true
  return cause !== undefined && isQueryCancelled(cause, depth + 1)
}

/**
 * Classifies a pg, pg-pool or socket error. Follows `cause` and the per-address errors of
 * an `AggregateError` (Node tries every address of `localhost`).
 *
 * @example
 * unavailableReason({ code: '57P01' }) // 'unreachable'
 * unavailableReason({ code: '23505' }) // null: a unique violation is the caller's to map
 */
export function unavailableReason(error: unknown, depth = 0): UnavailableReason | null {
  if (error instanceof StorageUnavailable) return (depth < MAX_DEPTH ? unavailableReason(error.cause, depth + 1) : null) ?? 'unreachable'
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return null
  if (error instanceof StatementTimeout) return null
  const { code, message, cause, errors } = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
  if (typeof code === 'string') {
    if (code === '57014' && typeof message === 'string' && STATEMENT_TIMEOUT_MESSAGE.test(message)) return null
    if (BUSY_SQLSTATES.has(code)) return 'busy'
    if (UNREACHABLE_SQLSTATES.has(code) || UNREACHABLE_ERRNOS.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return 'unreachable'
  }
  if (typeof message === 'string' && UNREACHABLE_MESSAGE.test(message)) return 'unreachable'
  if (typeof message === 'string' && BUSY_MESSAGE.test(message)) return 'busy'
  if (Array.isArray(errors)) {
    for (const inner of errors) if (unavailableReason(inner, depth + 1) === 'unreachable') return 'unreachable'
  }
  return cause === undefined ? null : unavailableReason(cause, depth + 1)
}

/**
 * The error the ports throw for `error`: `StatementTimeout` (rendered as 504, not an outage)
 * for a statement Postgres stopped at `statement_timeout`, `StorageUnavailable` (rendered as
 * 503 with Retry-After) when Postgres cannot answer now, else `error` itself, untouched, so a
 * unique violation still becomes `WriteConflict` and a bug still is a 500.
 */
export function toStorageError(error: unknown): unknown {
  if (error instanceof StorageUnavailable || error instanceof StatementTimeout) return error
  if (isStatementTimeout(error)) {
    const detail = error instanceof Error ? error.message : String(error)
    return new StatementTimeout(`postgres stopped a statement at statement_timeout: ${detail}`, { cause: error })
  }
  const reason = unavailableReason(error)
  if (reason === null) return error
  const detail = error instanceof Error ? error.message : String(error)
  return new StorageUnavailable(`postgres ${reason === 'busy' ? 'is busy' : 'is unreachable'}: ${detail}`, { cause: error })
}
