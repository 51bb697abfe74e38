/** A list statement that runs at least this long (ms) is slow: seen so in process, then on a worker twice in a row, its shape moves off the event loop. */
export const DEFAULT_SLOW_READ_MS = 5
/** How long a company's shape stays off the loop after its last slow run (ms). */
export const SLOW_READ_TTL_MS = 10 * 60_000
/** After this many shapes confirmed slow, all of a company's list reads go off the loop. */
export const SLOW_SHAPES_PER_COMPANY = 3
/** Slow probe runs on a worker, in a row, that confirm a shape on probation. */
const CONFIRMING_RUNS = 2
/** Companies remembered at most; the oldest is forgotten first. */
const MAX_COMPANIES = 10_000

/**
 * How sure the router is that a shape is slow for a company:
 * - `probation`: one of its statements (`probe`) looked slow on the event loop. A statement's
 *   wall time there includes any wait for a CPU, so on a busy machine a 0.1 ms query can look
 *   slow. Only the probe goes to a worker, one run at a time, to be timed there without its
 *   waits for a CPU; every other read of the shape stays in process meanwhile. A fast probe
 *   run ends the probation; `CONFIRMING_RUNS` slow ones in a row (one can be an outlier too,
 *   such as a fresh worker's first statement) confirm it.
 * - `confirmed`: all the shape's reads go to the workers until `until`.
 */
interface ShapeMark {
  state: 'probation' | 'confirmed'
  /** Slow probe runs on a worker so far, in a row. */
  slowRuns: number
  /** Until when (epoch ms) the mark holds. */
  until: number
  /** The statement that looked slow on the event loop. */
  probe: object
  /** Whether the probe's run on a worker is under way (probation). */
  probing: boolean
}

interface CompanyMarks {
  shapes: Map<object, ShapeMark>
  /** Until when all of the company's list reads go to the workers (epoch ms; 0: not so). */
  allUntil: number
}

/**
 * Which company's reads of which statement shape run on the read workers instead of the event
 * loop. A list read runs in process (the fast path) until one of its statements takes
 * `thresholdMs` or more there; the statement is then timed on a worker, and once it is slow
 * there twice in a row, that company's reads of that shape go to the workers (see `ShapeMark`).
 *
 * - Scheduling noise on a busy machine costs a worker hop or two, never a move; a query that
 *   really is slow runs on the event loop once (its shape's other statement may run there a
 *   few times more while the probe is timed).
 * - Confirmed shapes stay off the loop until none of their runs has been slow for `ttlMs`;
 *   fast runs do not bring them back, or alternating cheap and costly filter values would
 *   stall the loop once per round.
 * - After `shapesPerCompany` confirmed shapes the whole company moves, so cycling through
 *   filter combinations cannot stall the loop once per combination.
 *
 * The key is the company, not the statement alone: the same SQL is cheap for a company of
 * 45 users and expensive for one of 100,000, and only the latter should pay the worker hop.
 */
export class SlowReadRouter {
  readonly #companies = new Map<number, CompanyMarks>()
  readonly #thresholdMs: number
  readonly #ttlMs: number
  readonly #shapesPerCompany: number

  constructor(options: { thresholdMs?: number; ttlMs?: number; shapesPerCompany?: number } = {}) {
    this.#thresholdMs = options.thresholdMs ?? DEFAULT_SLOW_READ_MS
    this.#ttlMs = options.ttlMs ?? SLOW_READ_TTL_MS
    this.#shapesPerCompany = options.shapesPerCompany ?? SLOW_SHAPES_PER_COMPANY
  }

  /**
   * Whether this run of `query`, of `shape`, for `companyId`, goes to a worker. With a
   * threshold of 0, every one does. Each `true` must be followed by `observeOffLoop` or
   * `probeFailed` for the same run.
   */
  offLoop(companyId: number, shape: object, query: object): boolean {
    if (this.#thresholdMs === 0) return true
    const marks = this.#companies.get(companyId)
    if (marks === undefined) return false
    const now = Date.now()
    if (marks.allUntil > now) return true
    const mark = marks.shapes.get(shape)
    if (mark === undefined) return false
    if (mark.until <= now) {
      marks.shapes.delete(shape)
      if (marks.shapes.size === 0) this.#companies.delete(companyId)
      return false
    }
    if (mark.state === 'confirmed') return true
    if (mark.probe !== query || mark.probing) return false
    mark.probing = true
    return true
  }

  /** `query` of `shape` ran for `ms` of wall time on the event loop: a slow run puts the shape on probation. */
  observeInProcess(companyId: number, shape: object, query: object, ms: number): void {
    if (ms < this.#thresholdMs || this.#thresholdMs === 0) return
    const marks = this.#marks(companyId)
    if (!marks.shapes.has(shape)) {
      marks.shapes.set(shape, { state: 'probation', slowRuns: 0, until: Date.now() + this.#ttlMs, probe: query, probing: false })
    }
  }

  /** `query` of `shape` ran for `ms` on a worker, waits for a CPU excluded: moves the shape's mark on (see `ShapeMark`). */
  observeOffLoop(companyId: number, shape: object, query: object, ms: number): void {
    if (this.#thresholdMs === 0) return
    const marks = this.#companies.get(companyId)
    const mark = marks?.shapes.get(shape)
    if (marks === undefined || mark === undefined) return
    mark.probing = false
    if (ms < this.#thresholdMs) {
      if (mark.state !== 'confirmed' && mark.probe === query) marks.shapes.delete(shape)
      return
    }
    const now = Date.now()
    mark.until = now + this.#ttlMs
    if (mark.state === 'probation' && ++mark.slowRuns < CONFIRMING_RUNS) return
    mark.state = 'confirmed'
    let confirmed = 0
    for (const [known, other] of marks.shapes) {
      if (other.until <= now) marks.shapes.delete(known)
      else if (other.state === 'confirmed') confirmed++
    }
    if (confirmed >= this.#shapesPerCompany) marks.allUntil = now + this.#ttlMs
  }

  /**
   * A worker could not run `query` (timed out, died, busy). A shape not yet confirmed goes
   * back in process, where a slow run puts it on probation again; a confirmed one stays.
   */
  probeFailed(companyId: number, shape: object, query: object): void {
    const marks = this.#companies.get(companyId)
    const mark = marks?.shapes.get(shape)
    if (marks !== undefined && mark !== undefined && mark.state !== 'confirmed' && mark.probe === query) marks.shapes.delete(shape)
  }

  #marks(companyId: number): CompanyMarks {
    let marks = this.#companies.get(companyId)
    if (marks === undefined) {
      if (this.#companies.size >= MAX_COMPANIES) this.#companies.delete(this.#companies.keys().next().value as number)
      marks = { shapes: new Map(), allUntil: 0 }
      this.#companies.set(companyId, marks)
    }
    return marks
  }
}
