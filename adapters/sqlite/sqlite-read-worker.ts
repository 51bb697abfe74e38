/**
 * Worker-thread entry of `SqliteReadPool`: one read-only connection to the database file,
 * answering one query at a time. better-sqlite3 is synchronous, so a slow query here blocks
 * this thread only, never the server's event loop.
 *
 * In WAL mode this connection reads the last committed state as of each statement's start and
 * never waits for, nor blocks, the main connection's write transactions.
 */
import Database from 'better-sqlite3'
import { readFileSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { ReadReply, ReadRequest, ReadWorkerData } from './sqlite-read-protocol.js'
import { StatementCache } from './sqlite-statement-cache.js'

/**
 * The nice value of a read worker's thread: when the machine's cores are all busy, the
 * server's event loop (nice 0) gets most of the CPU and the expensive reads the rest.
 */
const READ_WORKER_NICE = 5

// On Linux a nice value belongs to a thread, and 0 names the calling one: only this thread
// yields. Elsewhere the same call would renice the whole server, so it is not made there.
if (process.platform === 'linux') {
  try {
    setPriority(READ_WORKER_NICE)
  } catch {
    // Not allowed in this container: the worker runs at the server's priority.
  }
}

/**
 * How long a statement takes, as the router wants it: wall time minus the time this thread
 * spent waiting for a CPU, in ms. Waiting for a core says nothing about the query (and this
 * thread is niced, so on a busy machine it waits a lot); reading the disk or waiting for a
 * lock does, as it would stall the event loop too. The wait comes from Linux's schedstat;
 * elsewhere this is plain wall time.
 */
const runningMs = openRunningClock()

function openRunningClock(): () => number {
  const waitedMs = () => Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 2)[1]) / 1e6
  if (process.platform === 'linux') {
    try {
      if (Number.isFinite(waitedMs())) return () => performance.now() - waitedMs()
    } catch {
      // No schedstat in this kernel: plain wall time.
    }
  }
  return () => performance.now()
}

const { filename, busyTimeoutMs, cacheKib } = workerData as ReadWorkerData
const database = new Database(filename, { readonly: true, fileMustExist: true })
database.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
// Negative: a size in KiB, not in pages.
database.pragma(`cache_size = ${-Math.trunc(cacheKib)}`)

/** Keyed by SQL text: the pool sends the same few statement texts over and over. */
const statements = new StatementCache((sql) => database.prepare(sql))

function reply(message: ReadReply): void {
  ;(parentPort as NonNullable<typeof parentPort>).postMessage(message)
}

;(parentPort as NonNullable<typeof parentPort>).on('message', ({ id, sql, values }: ReadRequest) => {
  try {
    const statement = statements.get(sql)
    const started = runningMs()
    const rows = statement.all(...values) as Record<string, unknown>[]
    // Never below 0: the kernel accounts a CPU wait when the wait ends, which may fall on either side of `started`.
    reply({ id, rows, ms: Math.max(0, runningMs() - started) })
  } catch (error) {
    const { message, code } = error as { message?: unknown; code?: unknown }
    reply({ id, error: { message: String(message ?? error), ...(typeof code === 'string' ? { code } : {}) } })
  }
})
