import { Worker } from 'node:worker_threads'
import { StatementTimeout, StorageUnavailable } from '../../src/ports/errors.js'
import type { ReadReply, ReadRequest, ReadWorkerData } from './sqlite-read-protocol.js'
import { sqliteStorageError } from './sqlite-errors.js'
import { workerEntry } from './worker-entry.js'

/** Worker threads, each with its own read-only connection. Two: the reference server's machine is small. */
export const DEFAULT_READ_WORKERS = 2
/** Longest an off-loop read may take, queue wait included, before it fails with `StorageUnavailable`. */
export const DEFAULT_READ_TIMEOUT_MS = 5_000
/** SQLite's busy timeout on a worker's connection: below the read timeout, so "busy" is reported as such. */
export const READ_BUSY_TIMEOUT_MS = 2_000
/**
 * Reads of one company running at once. One: a tenant's expensive reads then take at most one
 * worker (one core), and other tenants' slow reads are not queued behind all of them.
 */
export const DEFAULT_READS_PER_COMPANY = 1
/**
 * Reads waiting for a worker, at most; one more fails at once with `StorageUnavailable` (503).
 * The API lets each company run 2 list reads at a time (`listConcurrency`), so this is about
 * 500 companies' reads waiting at once: far above what two workers clear within the read timeout.
 */
export const DEFAULT_READ_QUEUE = 1_000
/**
 * The page cache of each worker's connection, KiB (SQLite's own default as better-sqlite3
 * builds it: 16,000). A reader in WAL mode drops its whole cache whenever another connection
 * has committed since its last read, so under writes a large cache is mostly refilled, not
 * reused: it buys little and keeps the worker's memory churning (issue 21's soak).
 */
export const DEFAULT_READ_CACHE_KIB = 2_048
/**
 * Reads a worker answers before it is replaced by a fresh one. A worker's V8 heap, its malloc
 * arena and its SQLite caches only ever grow to what its busiest moment needed, and a thread
 * gives all of it back when it ends: replacing workers now and then keeps the server's resident
 * memory flat under a long load (issue 21's soak). The replacement starts at once, so the next
 * read does not wait for a thread to boot; at about a hundred off-loop reads a second per
 * worker (the soak's mix) this is one new thread per worker a minute. A fresh worker prepares
 * its statements again, a fraction of a millisecond each.
 */
export const DEFAULT_READS_PER_WORKER = 5_000

export interface SqliteReadPoolOptions {
  /** The database file (never `:memory:`: another connection cannot see it). */
  filename: string
  /** Worker threads at most; each is started on first need. */
  size?: number
  /** Milliseconds from `all()` to its answer, queue wait included. */
  timeoutMs?: number
  /** Reads of one company running at once, at most. Default `DEFAULT_READS_PER_COMPANY`. */
  perCompany?: number
  /** SQLite's busy timeout on each worker's connection, ms. Default `READ_BUSY_TIMEOUT_MS`. */
  busyTimeoutMs?: number
  /** Reads waiting for a worker at most (beyond: `StorageUnavailable` at once). Default `DEFAULT_READ_QUEUE`. */
  maxQueued?: number
  /** The page cache of each worker's connection, KiB. Default `DEFAULT_READ_CACHE_KIB`. */
  cacheKib?: number
  /** Reads a worker answers before a fresh one replaces it. Default `DEFAULT_READS_PER_WORKER`. */
  readsPerWorker?: number
  /** Called with each worker thread as it starts: for monitoring, and for tests that end one. */
  onWorker?: (worker: Worker) => void
}

/** Rows of one off-loop read, and how long its statement ran in the worker, not counting waits for a CPU where the OS tells them (ms; queue wait excluded). */
export interface PooledRead {
  rows: Record<string, unknown>[]
  ms: number
}

interface Job {
  request: ReadRequest
  companyId: number
  resolve(read: PooledRead): void
  reject(error: unknown): void
  timer: NodeJS.Timeout
  /** When it was asked for, and when a worker started running it (`performance.now()`). */
  queuedAt: number
  startedAt?: number
  /** The worker running it; unset while queued. */
  slot?: Slot
}

interface Slot {
  worker: Worker
  job: Job | undefined
  /** Reads this worker has answered. */
  answered: number
  /** Why the worker died, when it reported an error before exiting. */
  failure?: unknown
}

/**
 * Runs read queries on a few worker threads over one SQLite file in WAL mode, so a query that
 * takes hundreds of milliseconds does not hold up the event loop (and every other tenant).
 *
 * - Fair: queued reads are served one company at a time in turn, and a company runs at most
 *   `perCompany` reads at once, so one tenant looping expensive reads holds one worker, not all.
 * - Bounded: every read answers within `timeoutMs` (queue wait included) or fails: with
 *   `StatementTimeout` when it was running that long (a worker still running it is terminated
 *   and replaced on next need), with `StorageUnavailable` when it was still waiting for a worker.
 * - Self-healing: a worker that dies fails only the read it was running, with `StorageUnavailable`.
 * - Renewed: after `readsPerWorker` reads a worker is replaced by a fresh thread, so what a
 *   worker's heap and caches grew to does not stay for the life of the server.
 * - Idle workers do not keep the process alive; `close()` terminates them all.
 *
 * @example
 * const pool = new SqliteReadPool({ filename: 'workforce.db' })
 * const { rows } = await pool.all('select count(*) as total from wfa_todos where company_id = ?', [1], 1)
 * await pool.close()
 */
export class SqliteReadPool {
  readonly #filename: string
  readonly #size: number
  readonly #timeoutMs: number
  readonly #perCompany: number
  readonly #busyTimeoutMs: number
  readonly #maxQueued: number
  readonly #cacheKib: number
  readonly #readsPerWorker: number
  readonly #onWorker: ((worker: Worker) => void) | undefined
  readonly #worker = workerEntry(import.meta.url, 'sqlite-read-worker', 'adapters/sqlite', 'SqliteReadPool')
  readonly #slots = new Set<Slot>()
  readonly #queue = new FairQueue<Job>()
  /** Reads running per company (absent: none). */
  readonly #runningByCompany = new Map<number, number>()
  #nextId = 1
  #closed = false

  constructor(options: SqliteReadPoolOptions) {
    this.#filename = options.filename
    this.#size = options.size ?? DEFAULT_READ_WORKERS
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_READ_TIMEOUT_MS
    this.#perCompany = options.perCompany ?? DEFAULT_READS_PER_COMPANY
    this.#busyTimeoutMs = options.busyTimeoutMs ?? READ_BUSY_TIMEOUT_MS
    this.#maxQueued = options.maxQueued ?? DEFAULT_READ_QUEUE
    this.#cacheKib = options.cacheKib ?? DEFAULT_READ_CACHE_KIB
    this.#readsPerWorker = options.readsPerWorker ?? DEFAULT_READS_PER_WORKER
    this.#onWorker = options.onWorker
    if (!Number.isInteger(this.#size) || this.#size < 1) throw new TypeError(`SqliteReadPool: size must be a positive integer, got ${this.#size}`)
    if (!Number.isInteger(this.#readsPerWorker) || this.#readsPerWorker < 1) throw new TypeError(`SqliteReadPool: readsPerWorker must be a positive integer, got ${this.#readsPerWorker}`)
    if (!Number.isInteger(this.#maxQueued) || this.#maxQueued < 1) throw new TypeError(`SqliteReadPool: maxQueued must be a positive integer, got ${this.#maxQueued}`)
  }

  /** Live worker threads (started, not yet exited). */
  get threads(): number {
    return this.#slots.size
  }

  /** Reads waiting for a worker right now (the `metrics` option's queue depth). */
  get queued(): number {
    return this.#queue.size
  }

  /** Reads running in a worker right now. */
  get running(): number {
    let running = 0
    for (const slot of this.#slots) if (slot.job !== undefined) running++
    return running
  }

  /**
   * Runs `sql` with `values` on a worker. Rejects with `StatementTimeout` when the read runs past
   * `timeoutMs`; with `StorageUnavailable` when it waited that long for a worker, its worker dies,
   * SQLite is busy or locked, or the pool is closed; with an `Error`
   * carrying SQLite's `code` for anything else (a bug, not a lack of capacity).
   */
  all(sql: string, values: unknown[], companyId: number): Promise<PooledRead> {
    if (this.#closed) return Promise.reject(new StorageUnavailable('sqlite read pool is closed'))
    if (this.#queue.size >= this.#maxQueued) return Promise.reject(new StorageUnavailable(`sqlite read pool: ${this.#queue.size} reads already wait for a worker`))
    return new Promise<PooledRead>((resolve, reject) => {
      const job: Job = {
        request: { id: this.#nextId++, sql, values },
        companyId,
        resolve,
        reject,
        timer: setTimeout(() => this.#timeOut(job), this.#timeoutMs),
        queuedAt: performance.now(),
      }
      this.#queue.push(job)
      this.#pump()
    })
  }

  /**
   * Starts every worker and has each answer one read, so the first expensive request does not
   * wait for a thread to boot and open the file. Resolves with how many answered; never rejects.
   */
  async warmUp(): Promise<number> {
    // One read per worker, each for a company of its own (negative: no real company), so the
    // per-company limit cannot hold any of them back and each starts a thread of its own.
    const reads = Array.from({ length: this.#size }, (_, index) => this.all('select 1', [], -1 - index))
    const settled = await Promise.allSettled(reads)
    return settled.filter((outcome) => outcome.status === 'fulfilled').length
  }

  /** Fails every queued read and terminates every worker; resolves when all threads have exited. */
  async close(): Promise<void> {
    this.#closed = true
    for (let job = this.#queue.shift(); job !== undefined; job = this.#queue.shift()) {
      this.#settle(job, () => job.reject(new StorageUnavailable('sqlite read pool is closed')))
    }
    await Promise.all([...this.#slots].map((slot) => this.#retire(slot, new StorageUnavailable('sqlite read pool is closed'))))
  }

  #pump(): void {
    const eligible = (companyId: number) => (this.#runningByCompany.get(companyId) ?? 0) < this.#perCompany
    // A worker is started only for a read that may run now, not for one held back by its company's limit.
    while (this.#queue.has(eligible)) {
      let slot = this.#idleSlot()
      if (slot === undefined && this.#slots.size < this.#size) slot = this.#spawn()
      if (slot === undefined) return
      const job = this.#queue.shift(eligible) as Job
      job.slot = slot
      job.startedAt = performance.now()
      slot.job = job
      this.#runningByCompany.set(job.companyId, (this.#runningByCompany.get(job.companyId) ?? 0) + 1)
      // Only a worker with a read in flight keeps the process alive.
      slot.worker.ref()
      slot.worker.postMessage(job.request)
    }
  }

  #idleSlot(): Slot | undefined {
    for (const slot of this.#slots) if (slot.job === undefined) return slot
    return undefined
  }

  #spawn(): Slot {
    // No `resourceLimits`: a worker over its heap limit inside better-sqlite3's native code
    // takes the whole process down (checked on Node 20), where an unlimited one only grows.
    // Results are one page, so a worker's heap stays small anyway.
    const workerData: ReadWorkerData = { filename: this.#filename, busyTimeoutMs: this.#busyTimeoutMs, cacheKib: this.#cacheKib }
    const worker = new Worker(this.#worker.entry, { workerData, eval: this.#worker.eval })
    const slot: Slot = { worker, job: undefined, answered: 0 }
    worker.unref()
    worker.on('message', (reply: ReadReply) => this.#answer(slot, reply))
    worker.on('error', (error) => (slot.failure = error))
    worker.on('exit', (code) => this.#exited(slot, code))
    this.#slots.add(slot)
    this.#onWorker?.(worker)
    return slot
  }

  #answer(slot: Slot, reply: ReadReply): void {
    const job = slot.job
    if (job === undefined || job.request.id !== reply.id) return
    slot.job = undefined
    slot.worker.unref()
    this.#settle(job, () => {
      if (reply.error === undefined) job.resolve({ rows: reply.rows, ms: reply.ms })
      else job.reject(sqliteStorageError(Object.assign(new Error(reply.error.message), { code: reply.error.code })))
    })
    if (++slot.answered >= this.#readsPerWorker && !this.#closed) {
      // Worn out: a fresh thread takes its place now, before the next read needs it.
      void this.#retire(slot, undefined)
      this.#spawn()
    }
    this.#pump()
  }

  #exited(slot: Slot, code: number): void {
    this.#slots.delete(slot)
    const job = slot.job
    slot.job = undefined
    if (job !== undefined) {
      const cause = slot.failure ?? new Error(`worker exited with code ${code}`)
      this.#settle(job, () => job.reject(new StorageUnavailable('sqlite read worker died', { cause })))
    }
    // A replacement starts only if work is waiting, so a file that cannot be opened fails
    // each read once instead of respawning in a loop.
    if (!this.#closed) this.#pump()
  }

  #timeOut(job: Job): void {
    const waiting = new StorageUnavailable(`sqlite read did not answer within ${this.#timeoutMs} ms`)
    if (job.slot === undefined) {
      // Still waiting for a worker: the pool had no room in time, which says nothing of the read.
      this.#queue.remove(job)
      this.#settle(job, () => job.reject(waiting))
      return
    }
    // Running for most of its bound: the statement's own cost, not an outage (issue 22), a 504
    // like Postgres' statement_timeout. One that spent most of it queued is a lack of room (503).
    // better-sqlite3 cannot interrupt a running statement: the thread goes, and the statement with it.
    const now = performance.now()
    const ran = now - (job.startedAt ?? now)
    const ownCost = ran >= now - job.queuedAt - ran
    void this.#retire(job.slot, ownCost ? new StatementTimeout(`sqlite read ran past ${this.#timeoutMs} ms and was stopped`) : waiting)
    this.#pump()
  }

  /** Rejects the slot's read with `error`, forgets the slot and terminates its thread. */
  async #retire(slot: Slot, error: unknown): Promise<void> {
    const job = slot.job
    slot.job = undefined
    this.#slots.delete(slot)
    if (job !== undefined) this.#settle(job, () => job.reject(error))
    await slot.worker.terminate()
  }

  #settle(job: Job, settle: () => void): void {
    clearTimeout(job.timer)
    if (job.slot !== undefined) {
      const running = (this.#runningByCompany.get(job.companyId) ?? 1) - 1
      if (running > 0) this.#runningByCompany.set(job.companyId, running)
      else this.#runningByCompany.delete(job.companyId)
      job.slot = undefined
    }
    settle()
  }
}

/**
 * A queue served one company at a time in turn: each `shift` takes the oldest job of the
 * first company in line that may run one now, then moves that company to the back of the line.
 */
class FairQueue<T extends { companyId: number }> {
  /** Insertion order is turn order. */
  readonly #byCompany = new Map<number, T[]>()
  #size = 0

  get size(): number {
    return this.#size
  }

  push(job: T): void {
    const jobs = this.#byCompany.get(job.companyId)
    if (jobs === undefined) this.#byCompany.set(job.companyId, [job])
    else jobs.push(job)
    this.#size++
  }

  /** Whether a job of a company that may run one now is waiting. */
  has(eligible: (companyId: number) => boolean): boolean {
    for (const companyId of this.#byCompany.keys()) if (eligible(companyId)) return true
    return false
  }

  shift(eligible: (companyId: number) => boolean = () => true): T | undefined {
    for (const [companyId, jobs] of this.#byCompany) {
      if (!eligible(companyId)) continue
      const job = jobs.shift() as T
      this.#byCompany.delete(companyId)
      if (jobs.length > 0) this.#byCompany.set(companyId, jobs)
      this.#size--
      return job
    }
    return undefined
  }

  remove(job: T): void {
    const jobs = this.#byCompany.get(job.companyId)
    const index = jobs?.indexOf(job) ?? -1
    if (jobs === undefined || index < 0) return
    jobs.splice(index, 1)
    if (jobs.length === 0) this.#byCompany.delete(job.companyId)
    this.#size--
  }
}
