/**
 * A list statement that runs at least this long (ms) is slow, and its shape moves off the event
 * loop once a worker confirms it. 2 ms: while one tenant loops a query four at a time, another
 * tenant's request may wait behind four of its statements on the loop, and 4 × 2 ms plus the
 * rendering of those answers stays well under the 25 ms goal (issue 21); a worker hop costs
 * about a tenth of a millisecond on the event loop.
 */
export const DEFAULT_SLOW_READ_MS = 2
/** How long a verdict on a company's shape holds (ms): off the loop after its last slow run, in process after its trial. */
export const SLOW_READ_TTL_MS = 10 * 60_000
/** After this many shapes confirmed slow, all of a company's list reads go off the loop. */
export const SLOW_SHAPES_PER_COMPANY = 3
/** Slow runs on a worker that confirm a shape on probation. */
const CONFIRMING_RUNS = 2
/**
 * Shape marks remembered at most, over all companies (about 118 bytes each: 5.9 MiB when full).
 * Beyond it the least recently seen company is forgotten; its shapes are then tried again.
 */
export const MAX_SHAPE_MARKS = 50_000
/** Companies remembered at most (each holds at least one mark); least recently seen first out. */
const MAX_COMPANIES = 10_000

/**
 * What the router knows of a shape of a company (no mark: never seen, or its verdict expired):
 * - `probation`: on trial on the workers. Either the shape is new for the company, and its first
 *   statement (`probe`) is timed on a worker before anything of the shape runs on the loop; or
 *   `probe` looked slow on the event loop. A statement's wall time on the loop includes any wait
 *   for a CPU, so on a busy machine a 0.1 ms query can look slow: a worker times it without
 *   those waits. Every run of the probe goes to the workers meanwhile; the shape's other
 *   statements stay in process. A fast run there makes the shape `fast`; `CONFIRMING_RUNS` slow
 *   ones (one can be an outlier, such as a fresh worker's first statement) confirm it.
 * - `confirmed`: all the shape's reads go to the workers until `until`.
 * - `fast`: in process until `until`, or until a run on the loop looks slow again.
 */
interface ShapeMark {
  state: 'probation' | 'confirmed' | 'fast'
  /** Slow runs on a worker so far (probation). */
  slowRuns: number
  /** Until when (epoch ms) the mark holds. */
  until: number
  /** The statement on trial (probation), or the one timed fast (fast). */
  probe: object
}

interface CompanyMarks {
  shapes: Map<object, ShapeMark>
  /** Marks counted in the router's total (`shapes.size` when last counted). */
  counted: number
  /** Until when all of the company's list reads go to the workers (epoch ms; 0: not so). */
  allUntil: number
}

/**
 * Which company's reads of which statement shape run on the read workers instead of the event
 * loop. The first run of a shape for a company is timed on a worker, so a query the router
 * knows nothing about never stalls the loop, however expensive it is for that company; a shape
 * fast there runs in process (the fast path) from then on, until one of its statements takes
 * `thresholdMs` or more there. Slow on a worker twice, the company's reads of that shape go to
 * the workers (see `ShapeMark`).
 *
 * - The trial costs one worker hop per company and shape every `ttlMs`.
 * - Scheduling noise on a busy machine costs a worker hop or two, never a move.
 * - Confirmed shapes stay off the loop until none of their runs has been slow for `ttlMs`;
 *   fast runs do not bring them back, or alternating cheap and costly filter values would
 *   stall the loop once per round.
 * - After `shapesPerCompany` confirmed shapes the whole company moves.
 *
 * The key is the company, not the statement alone: the same SQL is cheap for a company of
 * 45 users and expensive for one of 100,000, and only the latter should pay the worker hop.
 */
export class SlowReadRouter {
  /** In order of last use: the first is the least recently seen company. */
  readonly #companies = new Map<number, CompanyMarks>()
  readonly #thresholdMs: number
  readonly #ttlMs: number
  readonly #shapesPerCompany: number
  readonly #maxMarks: number
  /** Marks held over all companies. */
  #marksHeld = 0

  constructor(options: { thresholdMs?: number; ttlMs?: number; shapesPerCompany?: number; maxMarks?: number } = {}) {
    this.#thresholdMs = options.thresholdMs ?? DEFAULT_SLOW_READ_MS
    this.#ttlMs = options.ttlMs ?? SLOW_READ_TTL_MS
    this.#shapesPerCompany = options.shapesPerCompany ?? SLOW_SHAPES_PER_COMPANY
    this.#maxMarks = options.maxMarks ?? MAX_SHAPE_MARKS
  }

  /** Shape marks held now, over all companies (their bound is `maxMarks`). */
  get marks(): number {
    return this.#marksHeld
  }

  /** Companies remembered now. */
  get companies(): number {
    return this.#companies.size
  }

  /**
   * Whether this run of `query`, of `shape`, for `companyId`, goes to a worker. With a
   * threshold of 0, every one does. Each `true` must be followed by `observeOffLoop` or
   * `probeFailed` for the same run.
   */
  offLoop(companyId: number, shape: object, query: object): boolean {
    if (this.#thresholdMs === 0) return true
    const marks = this.#marks(companyId)
    const now = Date.now()
    if (marks.allUntil > now) return true
    const mark = marks.shapes.get(shape)
    if (mark === undefined || mark.until <= now) {
      // New, or its verdict expired: on trial before it may run on the loop.
      this.#mark(companyId, marks, shape, { state: 'probation', slowRuns: 0, until: now + this.#ttlMs, probe: query })
      return true
    }
    if (mark.state === 'confirmed') return true
    return mark.state === 'probation' && mark.probe === query
  }

  /** `query` of `shape` ran for `ms` of wall time on the event loop: a slow run puts the shape on probation. */
  observeInProcess(companyId: number, shape: object, query: object, ms: number): void {
    if (ms < this.#thresholdMs || this.#thresholdMs === 0) return
    const marks = this.#marks(companyId)
    const mark = marks.shapes.get(shape)
    if (mark === undefined || mark.state === 'fast') {
      this.#mark(companyId, marks, shape, { state: 'probation', slowRuns: 0, until: Date.now() + this.#ttlMs, probe: query })
    }
  }

  /** `query` of `shape` ran for `ms` on a worker, waits for a CPU excluded: moves the shape's mark on (see `ShapeMark`). */
  observeOffLoop(companyId: number, shape: object, query: object, ms: number): void {
    if (this.#thresholdMs === 0) return
    const marks = this.#companies.get(companyId)
    const mark = marks?.shapes.get(shape)
    if (marks === undefined || mark === undefined) return
    const now = Date.now()
    if (ms < this.#thresholdMs) {
      if (mark.state === 'probation' && mark.probe === query) Object.assign(mark, { state: 'fast', slowRuns: 0, until: now + this.#ttlMs })
      return
    }
    if (mark.state === 'fast') return
    mark.until = now + this.#ttlMs
    if (mark.state === 'probation' && ++mark.slowRuns < CONFIRMING_RUNS) return
    mark.state = 'confirmed'
    let confirmed = 0
    for (const [known, other] of marks.shapes) {
      if (other.until <= now) marks.shapes.delete(known)
      else if (other.state === 'confirmed') confirmed++
    }
    this.#recount(marks)
    if (confirmed >= this.#shapesPerCompany) marks.allUntil = now + this.#ttlMs
  }

  /**
   * A worker could not run `query` (timed out, died, busy). A shape on probation goes back in
   * process (so a pool that cannot run anything does not fail every read of it), where a slow
   * run puts it on probation again; a confirmed one stays.
   */
  probeFailed(companyId: number, shape: object, query: object): void {
    const mark = this.#companies.get(companyId)?.shapes.get(shape)
    if (mark !== undefined && mark.state === 'probation' && mark.probe === query) Object.assign(mark, { state: 'fast', slowRuns: 0 })
  }

  /** The company's marks, made its most recently seen. */
  #marks(companyId: number): CompanyMarks {
    let marks = this.#companies.get(companyId)
    if (marks === undefined) {
      if (this.#companies.size >= MAX_COMPANIES) this.#forgetOldest()
      marks = { shapes: new Map(), counted: 0, allUntil: 0 }
    } else {
      this.#companies.delete(companyId)
    }
    this.#companies.set(companyId, marks)
    return marks
  }

  /** Sets a mark, then forgets the least recently seen other companies while over the bound. */
  #mark(companyId: number, marks: CompanyMarks, shape: object, mark: ShapeMark): void {
    marks.shapes.set(shape, mark)
    this.#recount(marks)
    while (this.#marksHeld > this.#maxMarks && this.#companies.size > 1) {
      if (this.#companies.keys().next().value === companyId) break
      this.#forgetOldest()
    }
    // One company alone over the bound (it used every shape): its expired marks go first.
    if (this.#marksHeld > this.#maxMarks) {
      const now = Date.now()
      for (const [known, other] of marks.shapes) if (other.until <= now && known !== shape) marks.shapes.delete(known)
      this.#recount(marks)
    }
  }

  #recount(marks: CompanyMarks): void {
    this.#marksHeld += marks.shapes.size - marks.counted
    marks.counted = marks.shapes.size
  }

  #forgetOldest(): void {
    const [oldest, marks] = this.#companies.entries().next().value as [number, CompanyMarks]
    this.#companies.delete(oldest)
    this.#marksHeld -= marks.counted
  }
}
