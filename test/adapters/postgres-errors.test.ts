import { describe, expect, it } from 'vitest'
import { acquireTimeoutCause, isQueryCancelled, isStatementTimeout, toStorageError, unavailableReason } from '../../adapters/postgres/postgres-errors.js'
import { isUniqueViolation } from '../../adapters/sql/sql-write-storage.js'
import { StatementTimeout, StorageUnavailable } from '../../src/ports/errors.js'

/** An error shaped as pg raises one for a server's ErrorResponse. */
const sqlstate = (code: string) => Object.assign(new Error(`server said ${code}`), { code, severity: 'ERROR' })
/** A 57014 as pg raises it, with the server's (English) message. */
const canceled = (why: 'statement timeout' | 'user request') =>
  Object.assign(new Error(`canceling statement due to ${why}`), { code: '57014', severity: 'ERROR', routine: 'ProcessInterrupts' })
/** An error shaped as Node's net module raises one. */
const errno = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -1, syscall: 'connect' })

describe('which Postgres failures are "cannot answer now" (503) and which are not', () => {
  it.each([
    ['08000', 'connection_exception'],
    ['08001', 'sqlclient_unable_to_establish_sqlconnection'],
    ['08003', 'connection_does_not_exist'],
    ['08004', 'sqlserver_rejected_establishment_of_sqlconnection'],
    ['08006', 'connection_failure'],
    ['08007', 'transaction_resolution_unknown'],
    ['08P01', 'protocol_violation'],
    ['57P01', 'admin_shutdown (fast shutdown, pg_terminate_backend)'],
    ['57P02', 'crash_shutdown'],
    ['57P03', 'cannot_connect_now (starting up, shutting down)'],
  ])('SQLSTATE %s (%s): unreachable', (code) => {
    expect(unavailableReason(sqlstate(code))).toBe('unreachable')
    expect(toStorageError(sqlstate(code))).toBeInstanceOf(StorageUnavailable)
  })

  it.each([
    ['57014', 'query_canceled (a cancel request)'],
    ['53300', 'too_many_connections'],
  ])('SQLSTATE %s (%s): busy, the server answered but will not run it now', (code) => {
    expect(unavailableReason(sqlstate(code))).toBe('busy')
    expect(toStorageError(sqlstate(code))).toBeInstanceOf(StorageUnavailable)
  })

  it.each([
    ['23505', 'unique_violation (becomes WriteConflict)'],
    ['23503', 'foreign_key_violation'],
    ['23502', 'not_null_violation'],
    ['22P02', 'invalid_text_representation'],
    ['42601', 'syntax_error'],
    ['42P01', 'undefined_table'],
    ['42703', 'undefined_column'],
    ['40001', 'serialization_failure'],
    ['40P01', 'deadlock_detected'],
    ['53100', 'disk_full'],
    ['57P04', 'database_dropped'],
    ['XX000', 'internal_error'],
  ])('SQLSTATE %s (%s): not mapped, the error goes on unchanged', (code) => {
    const error = sqlstate(code)
    expect(unavailableReason(error)).toBeNull()
    expect(toStorageError(error)).toBe(error)
  })

  it('a unique violation passes through as itself, so the write path still turns it into WriteConflict', () => {
    const error = sqlstate('23505')
    expect(isUniqueViolation(toStorageError(error))).toBe(true)
  })

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN'])(
    'socket error %s: unreachable',
    (code) => {
      expect(unavailableReason(errno(code))).toBe('unreachable')
      expect(toStorageError(errno(code))).toBeInstanceOf(StorageUnavailable)
    },
  )

  it.each(['ENOENT', 'EACCES', 'ENOTFOUND', 'ERR_INVALID_ARG_TYPE'])('other error code %s: not mapped', (code) => {
    const error = errno(code)
    expect(unavailableReason(error)).toBeNull()
    expect(toStorageError(error)).toBe(error)
  })

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated',
    'Connection terminated due to connection timeout',
    'Query read timeout',
    'Client has encountered a connection error and is not queryable',
  ])('pg and pg-pool errors without a code: "%s" is unreachable', (message) => {
    expect(unavailableReason(new Error(message))).toBe('unreachable')
  })

  it('pg-pool\'s wait for a free client running out is busy (the pool is full; the server may be fine), and so is the guard\'s own', () => {
    expect(unavailableReason(new Error('timeout exceeded when trying to connect'))).toBe('busy')
    expect(unavailableReason(new StorageUnavailable('postgres: no connection within 1000 ms', { cause: acquireTimeoutCause(1_000) }))).toBe('busy')
    expect(toStorageError(new Error('timeout exceeded when trying to connect'))).toBeInstanceOf(StorageUnavailable)
  })

  it('a StorageUnavailable of the guard\'s own (a query timeout, a known outage) is unreachable', () => {
    expect(unavailableReason(new StorageUnavailable('postgres: no answer within 1000 ms'))).toBe('unreachable')
  })

  it('looks through cause and AggregateError (every address of localhost refused)', () => {
    expect(unavailableReason(new Error('Connection terminated due to connection timeout', { cause: errno('ETIMEDOUT') }))).toBe('unreachable')
    expect(unavailableReason(new Error('wrapped', { cause: sqlstate('57P01') }))).toBe('unreachable')
    expect(unavailableReason(new AggregateError([errno('ECONNREFUSED'), errno('ECONNREFUSED')], 'connect failed'))).toBe('unreachable')
    expect(unavailableReason(new Error('wrapped', { cause: sqlstate('23505') }))).toBeNull()
  })

  it('stops following a cyclic cause', () => {
    const a: Error & { cause?: unknown } = new Error('a')
    a.cause = new Error('b', { cause: a })
    expect(unavailableReason(a)).toBeNull()
  })

  it('leaves bugs alone: a TypeError, a RangeError from the codec, non-errors', () => {
    for (const error of [new TypeError('x is undefined'), new RangeError('int8 value 9007199254740993 is not a safe JavaScript integer'), 'text', null, undefined, 42]) {
      expect(unavailableReason(error)).toBeNull()
      expect(toStorageError(error)).toBe(error)
    }
  })

  it('wraps with the original as cause (for the log) and Retry-After 1 s; a StorageUnavailable is passed on as is', () => {
    const original = sqlstate('57P01')
    const mapped = toStorageError(original) as StorageUnavailable
    expect(mapped.cause).toBe(original)
    expect(mapped.retryAfterSeconds).toBe(1)
    expect(mapped.message).toMatch(/^postgres is unreachable: /)
    expect((toStorageError(sqlstate('57014')) as StorageUnavailable).message).toMatch(/^postgres is busy: /)
    expect((toStorageError(canceled('user request')) as StorageUnavailable).message).toMatch(/^postgres is busy: /)
    const already = new StorageUnavailable('already')
    expect(toStorageError(already)).toBe(already)
  })
})

describe('a statement stopped at statement_timeout is a StatementTimeout (504), not an outage (503)', () => {
  it('57014 with the timeout\'s message becomes a StatementTimeout with the original as cause', () => {
    const original = canceled('statement timeout')
    const mapped = toStorageError(original)
    expect(mapped).toBeInstanceOf(StatementTimeout)
    expect(mapped).not.toBeInstanceOf(StorageUnavailable)
    expect((mapped as StatementTimeout).cause).toBe(original)
    expect((mapped as StatementTimeout).message).toMatch(/^postgres stopped a statement at statement_timeout: canceling statement due to statement timeout$/)
    expect(isStatementTimeout(original)).toBe(true)
  })

  it('is neither unreachable nor busy: nothing about it says the server cannot answer', () => {
    expect(unavailableReason(canceled('statement timeout'))).toBeNull()
    expect(unavailableReason(new StatementTimeout('stopped', { cause: canceled('statement timeout') }))).toBeNull()
    expect(unavailableReason(new Error('wrapped', { cause: canceled('statement timeout') }))).toBeNull()
  })

  it('a cancel request (57014 "due to user request") stays busy, a StorageUnavailable as before', () => {
    const request = canceled('user request')
    expect(isStatementTimeout(request)).toBe(false)
    expect(unavailableReason(request)).toBe('busy')
    expect(toStorageError(request)).toBeInstanceOf(StorageUnavailable)
  })

  it('is found through cause, and a StatementTimeout is passed on as is', () => {
    const wrapped = new Error('query failed', { cause: canceled('statement timeout') })
    expect(isStatementTimeout(wrapped)).toBe(true)
    expect(toStorageError(wrapped)).toBeInstanceOf(StatementTimeout)
    const already = new StatementTimeout('already')
    expect(toStorageError(already)).toBe(already)
    expect(isStatementTimeout(already)).toBe(true)
  })

  it('a cancel of either wording is a cancelled statement, through StorageUnavailable and cause (the migration prologue retries it)', () => {
    // What CI saw: a 1 ms statement_timeout reported as "due to user request", wrapped by the guard.
    const wrapped = toStorageError(canceled('user request'))
    expect(wrapped).toBeInstanceOf(StorageUnavailable)
    expect(isQueryCancelled(wrapped)).toBe(true)
    expect(isQueryCancelled(canceled('statement timeout'))).toBe(true)
    expect(isQueryCancelled(new StatementTimeout('stopped'))).toBe(true)
    expect(isQueryCancelled(sqlstate('57P01'))).toBe(false)
    expect(isQueryCancelled(new StorageUnavailable('postgres: no connection within 1500 ms'))).toBe(false)
  })

  it('needs both the code and the message: another code saying "statement timeout", or a bare 57014, is not one', () => {
    expect(isStatementTimeout(Object.assign(new Error('canceling statement due to statement timeout'), { code: '55P03' }))).toBe(false)
    expect(isStatementTimeout(sqlstate('57014'))).toBe(false)
    expect(isStatementTimeout(new Error('canceling statement due to statement timeout'))).toBe(false)
    for (const value of [null, undefined, 'statement timeout', 57014]) expect(isStatementTimeout(value)).toBe(false)
  })

  it('a StorageUnavailable caused by a statement timeout is passed on as is (the guard already decided)', () => {
    const unavailable = new StorageUnavailable('postgres: no answer within 1000 ms', { cause: canceled('statement timeout') })
    expect(toStorageError(unavailable)).toBe(unavailable)
  })
})
