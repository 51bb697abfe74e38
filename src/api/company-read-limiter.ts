import { RateLimitedError } from '../errors.js'
import { StorageUnavailable } from '../ports/errors.js'

/**
 * List reads of one company in flight at once per instance. Two: one tenant looping expensive
 * lists holds two storage connections (a fifth of pg's default pool of 10) and at most two
 * cores of the database, while each of its lists still gets a connection at once when it is
 * alone.
 */
export const DEFAULT_LIST_READS_PER_COMPANY = 2
/**
 * A company's list reads waiting for one of its slots, at most. A request beyond it is answered
 * at once with 429 and `Retry-After` (`TooManyListReads`). 64: a client with a few dozen
 * connections of one key (a parallel full sync, a load balancer's pool) queues rather than being
 * refused, and 64 waiting behind 2 running is at most 32 rounds of the company's own reads, each
 * bounded by the adapter's timeouts and by the key's request budget.
 */
export const DEFAULT_QUEUED_LIST_READS_PER_COMPANY = 64
/** What a client refused for a full queue should wait (s): about one round of its own reads. */
export const LIST_QUEUE_RETRY_AFTER_S = 1
/**
 * For this long after a read failed with `StorageUnavailable` (ms), a read that finds its
 * company's queue full is answered with that 503 rather than the 429: during an outage the
 * queue is full because the storage is down, not because the company asks too much.
 */
export const UNAVAILABLE_MEMORY_MS = 2_000

/** The settings of `CompanyReadLimiter`, as the plugin's `listConcurrency` option takes them. */
export interface ListConcurrencyOptions {
  /** List reads of one company in flight at once per instance. Default `DEFAULT_LIST_READS_PER_COMPANY`. */
  perCompany?: number
  /** List reads of one company waiting for a slot, at most; beyond, 429. Default `DEFAULT_QUEUED_LIST_READS_PER_COMPANY`. */
  queuePerCompany?: number
}

/** 429 `rate_limited`: the company already has as many list reads running and waiting as it may. */
export class TooManyListReads extends RateLimitedError {
  readonly retryAfterSeconds = LIST_QUEUE_RETRY_AFTER_S
  constructor() {
    super(`Too many list requests of this company in progress; retry after ${LIST_QUEUE_RETRY_AFTER_S} s`)
  }
}

/**
 * Caps each company's list reads in flight, above the ports, so it holds for every adapter: one
 * tenant looping expensive lists can hold no more than `perCompany` of the storage's
 * connections or read workers, and another tenant's read never queues behind its reads. A
 * company's reads beyond its cap wait here, in arrival order, rather than in the adapter's
 * connection pool, where a wait counts against the acquire timeout and ends in a 503; past
 * `queuePerCompany` waiting, a read is refused at once with `TooManyListReads` (429): the
 * company's own concurrency is the cause, so it is told to slow down, not that the service is
 * down.
 *
 * Per process: each instance caps what it runs itself.
 *
 * @example
 * const limiter = new CompanyReadLimiter({ perCompany: 2 })
 * const page = await limiter.run(companyId, () => storage.todos.list(companyId, filter, window))
 */
export class CompanyReadLimiter {
  readonly #perCompany: number
  readonly #queuePerCompany: number
  /** Reads running per company (absent: none). */
  readonly #running = new Map<number, number>()
  /** Reads waiting per company, oldest first (absent: none). */
  readonly #waiting = new Map<number, Array<Waiter>>()
  /** The last `StorageUnavailable` a read ended with, and when (`performance.now()`). */
  #unavailable: { error: StorageUnavailable; at: number } | undefined

  constructor(options: ListConcurrencyOptions = {}) {
    this.#perCompany = options.perCompany ?? DEFAULT_LIST_READS_PER_COMPANY
    this.#queuePerCompany = options.queuePerCompany ?? DEFAULT_QUEUED_LIST_READS_PER_COMPANY
  }

  /** Reads of `companyId` running and waiting now. */
  load(companyId: number): { running: number; waiting: number } {
    return { running: this.#running.get(companyId) ?? 0, waiting: this.#waiting.get(companyId)?.length ?? 0 }
  }

  /**
   * Runs `read` once the company has a free slot, and frees it when `read` settles. Throws
   * `TooManyListReads` without running `read` when the company's queue is full.
   */
  async run<T>(companyId: number, read: () => Promise<T>): Promise<T> {
    const running = this.#running.get(companyId) ?? 0
    if (running < this.#perCompany) this.#running.set(companyId, running + 1)
    else await this.#wait(companyId)
    let failure: StorageUnavailable | undefined
    try {
      return await read()
    } catch (error) {
      if (error instanceof StorageUnavailable) failure = error
      throw error
    } finally {
      this.#release(companyId, failure)
    }
  }

  #wait(companyId: number): Promise<void> {
    const waiting = this.#waiting.get(companyId) ?? []
    if (waiting.length >= this.#queuePerCompany) {
      const unavailable = this.#unavailable
      if (unavailable !== undefined && performance.now() - unavailable.at < UNAVAILABLE_MEMORY_MS) throw unavailable.error
      throw new TooManyListReads()
    }
    this.#waiting.set(companyId, waiting)
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
  }

  /**
   * Hands the slot to the company's oldest waiting read, or frees it. The handover waits for the
   * event loop's next turn: resolved at once, the next read's in-process work (a SQLite statement,
   * the rendering) would run in the same microtask run as this one's end, and a company with a
   * queue could chain its requests into one long stretch that no other tenant's request can cut into.
   */
  #release(companyId: number, failure: StorageUnavailable | undefined): void {
    const waiting = this.#waiting.get(companyId)
    if (failure !== undefined) {
      this.#unavailable = { error: failure, at: performance.now() }
      // The storage just said it cannot answer: the company's waiting reads get the same 503
      // now rather than each waiting its turn to learn it (an outage answers within its bound).
      // Only an outage does this: a `StatementTimeout` (504) is one read's own cost on a
      // database that answers, so the next waiting read runs as usual and may well answer.
      if (waiting !== undefined) {
        this.#waiting.delete(companyId)
        for (const waiter of waiting) waiter.reject(failure)
      }
    }
    const next = failure === undefined ? waiting?.shift() : undefined
    if (waiting !== undefined && waiting.length === 0) this.#waiting.delete(companyId)
    if (next !== undefined) {
      setImmediate(next.resolve)
      return
    }
    const running = (this.#running.get(companyId) ?? 1) - 1
    if (running > 0) this.#running.set(companyId, running)
    else this.#running.delete(companyId)
  }
}

/** A read waiting for a slot: started by `resolve`, or refused by `reject`. */
interface Waiter {
  resolve: () => void
  reject: (error: unknown) => void
}
