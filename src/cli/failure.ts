import { inspect } from 'node:util'
import { WorkforceOptionError } from '../errors.js'
import { StatementTimeout, StorageUnavailable } from '../ports/errors.js'
import { CliError, describeDb, isPostgresUrl } from './cli-error.js'

/** How deep to follow `cause` and `AggregateError.errors` (pg wraps, Node aggregates per address). */
const MAX_DEPTH = 5

/** Node's errno codes a user can act on, and what they mean in a sentence. */
const ERRNO_MEANINGS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'address not available on this machine',
}

/** SQLite result codes (better-sqlite3's `SqliteError.code`) and what the user should hear. */
const SQLITE_MEANINGS: Readonly<Record<string, string>> = {
  SQLITE_CANTOPEN: 'cannot open the database file (check the path and its permissions)',
  SQLITE_NOTADB: 'the file is not a SQLite database',
  SQLITE_CORRUPT: 'the database file is damaged (database disk image is malformed)',
  SQLITE_READONLY: 'the database is read-only (check the file and directory permissions)',
  SQLITE_BUSY: 'the database is locked by another process; try again',
  SQLITE_LOCKED: 'the database is locked; try again',
  SQLITE_FULL: 'the disk is full',
  SQLITE_PERM: 'permission denied',
  SQLITE_IOERR: 'an I/O error on the database file',
}

/** Postgres SQLSTATEs a user can act on. */
const POSTGRES_MEANINGS: Readonly<Record<string, string>> = {
  '28P01': 'the password was refused',
  '28000': 'the login was refused (check the user, and pg_hba.conf)',
  '42501': 'permission denied',
  '53300': 'the server has no connection slot left',
  '57P01': 'the server is shutting down',
  '57P03': 'the server is starting up or shutting down; try again',
  '42P07': 'an object of the schema exists already (another tool created it?)',
}

/**
 * One line for a failure, fit for an operator: what failed and, where there is one, what to do.
 * A `CliError` is already such a line. I/O, SQLite and Postgres failures are recognised anywhere
 * in the error's `cause` chain; anything else is reported as unexpected, pointing at `--verbose`.
 */
export function describeFailure(error: unknown, db: string | undefined): string {
  if (error instanceof CliError || error instanceof WorkforceOptionError) return error.message
  const found = recognise(error, db, 0)
  if (found !== null) return found
  const message = error instanceof Error ? error.message : String(error)
  return `unexpected error: ${firstLine(message)} (run again with --verbose for the stack trace)`
}

/** The exit code for a failure: a `CliError`'s own, 2 for an option the plugin refused, else 1. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode
  if (error instanceof WorkforceOptionError) return 2
  return 1
}

/** What `--verbose` adds: the stack trace, with every cause. */
export function describeStack(error: unknown): string {
  return inspect(error, { depth: MAX_DEPTH, colors: false })
}

function recognise(error: unknown, db: string | undefined, depth: number): string | null {
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return null
  const { code, message, cause, errors, path, syscall } = error as {
    code?: unknown
    message?: unknown
    cause?: unknown
    errors?: unknown
    path?: unknown
    syscall?: unknown
  }
  const text = typeof message === 'string' ? firstLine(message) : ''
  const where = db === undefined ? 'the database' : describeDb(db)
  if (typeof code === 'string') {
    const postgres = db !== undefined && isPostgresUrl(db)
    if (postgres) {
      const network = networkFailure(code, db)
      if (network !== null) return network
      if (code === '3D000') return `Postgres at ${hostOf(db)}: ${text}: create it (createdb), then run 'workforce-api migrate --db ${describeDb(db)}'`
      const meaning = POSTGRES_MEANINGS[code]
      if (meaning !== undefined) return `Postgres at ${hostOf(db)}: ${meaning} (${text})`
    }
    if (code.startsWith('SQLITE_')) {
      const meaning = SQLITE_MEANINGS[code] ?? SQLITE_MEANINGS[code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1')]
      if (meaning !== undefined) return `${where}: ${meaning}`
    }
    const errno = ERRNO_MEANINGS[code]
    if (errno !== undefined) {
      const subject = typeof path === 'string' ? path : typeof syscall === 'string' ? syscall : where
      return `${subject}: ${errno}`
    }
  }
  // better-sqlite3 checks the directory itself and throws a plain TypeError.
  if (text.startsWith('Cannot open database because the directory does not exist')) return `${where}: the directory does not exist`
  if (db !== undefined && isPostgresUrl(db)) {
    if (/^Connection terminated due to connection timeout|^timeout exceeded when trying to connect/.test(text)) {
      return `cannot connect to Postgres at ${hostOf(db)}: no answer in time (is the server up and reachable?)`
    }
    if (/^Connection terminated/.test(text)) return `Postgres at ${hostOf(db)} closed the connection (${text})`
  }
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const found = recognise(inner, db, depth + 1)
      if (found !== null) return found
    }
  }
  const fromCause = cause === undefined ? null : recognise(cause, db, depth + 1)
  if (fromCause !== null) return fromCause
  if (error instanceof StorageUnavailable) return `${where} is unavailable: ${text}`
  // The server is up: one statement ran past its statement_timeout. Saying "unavailable" would
  // send the operator looking for an outage.
  if (error instanceof StatementTimeout) return `${where}: a statement ran longer than the database's statement_timeout and was stopped (the server is up): ${text}`
  return null
}

function networkFailure(code: string, db: string): string | null {
  const host = hostOf(db)
  switch (code) {
    case 'ECONNREFUSED':
      return `cannot connect to Postgres at ${host}: connection refused (is the server running, on this port?)`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot connect to Postgres at ${host}: the host name does not resolve`
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `cannot connect to Postgres at ${host}: the host cannot be reached (${code})`
    case 'ECONNRESET':
      return `Postgres at ${host} reset the connection`
    default:
      return null
  }
}

/** `host:port` of a Postgres URL, for messages. */
function hostOf(db: string): string {
  try {
    const url = new URL(db)
    return `${url.hostname || 'localhost'}:${url.port || '5432'}`
  } catch {
    return 'the Postgres server'
  }
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? ''
}
