import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { EventNames, describeQuery, pageViolations } from '../../src/conformance/groups/event-feed.js'
import { changeEvent } from '../../src/conformance/webhook-facts.js'
import { WRITE_NOW } from '../../src/conformance/write-facts.js'
import type { FeedPage, FeedQuery, WebhookStore } from '../../src/ports/webhook-store.js'
import type { ChangeEvent } from '../../src/ports/write-storage.js'
import { describePostgres, useTestDatabase, usePostgresAdapters } from '../helpers/postgres.js'

// The events feed (WebhookStore.readFeed / feedHead) against a model, for random interleavings
// of commits (some rolled back, some held open while a read runs), reads from random cursors
// with random limit, scan and types, head reads, and purges. The model: each company's committed
// events in commit order, of which purges take a prefix. From any cursor the feed must give
// exactly the model's suffix after that cursor, filtered by type, and never another company's.

const TYPES = ['todos.created', 'todos.updated', 'users.created', 'shifts.deleted'] as const
const WHOLE = { types: TYPES, limit: 1_000, scan: 1_000_000_000 }
/** Milliseconds between two events' instants: purges cut between them. */
const STEP_MS = 10
const MAX_PAGES = 500
/** Runs per adapter: each plays up to 24 steps; together well under a minute on a shared machine. */
const MEMORY_RUNS = 200
const SQLITE_RUNS = 100
const POSTGRES_RUNS = 30

type Via = 'publish' | 'recordEvent'
/** Index 0 or 1 of the run's two companies. */
type Side = 0 | 1

interface EventSpec {
  side: Side
  type: (typeof TYPES)[number]
}

type Op =
  | { kind: 'commit'; events: EventSpec[]; rollback: boolean; via: Via }
  | { kind: 'held'; side: Side; events: EventSpec[]; rollback: boolean; via: Via; cursor: number }
  | { kind: 'read'; side: Side; cursor: number; types: string[]; limit: number; extraScan: number; follow: boolean }
  | { kind: 'head'; side: Side }
  | { kind: 'foreign'; side: Side; cursor: number }
  | { kind: 'purge'; back: number; limit: number }

const side = fc.constantFrom<Side>(0, 1)
const events = fc.array(fc.record({ side, type: fc.constantFrom(...TYPES) }), { minLength: 1, maxLength: 4 })
const via = fc.constantFrom<Via>('publish', 'recordEvent')
/** -1: after omitted; otherwise an index (modulo) into the company's cursors. */
const cursor = fc.integer({ min: -1, max: 20 })
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('commit' as const), events, rollback: fc.constantFrom(false, false, false, true), via }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('held' as const), side, events, rollback: fc.boolean(), via, cursor }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      side,
      cursor,
      types: fc.subarray([...TYPES], { minLength: 1 }),
      limit: fc.integer({ min: 1, max: 4 }),
      extraScan: fc.integer({ min: 0, max: 5 }),
      follow: fc.boolean(),
    }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant('head' as const), side }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('foreign' as const), side, cursor }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('purge' as const), back: fc.integer({ min: 0, max: 12 }), limit: fc.integer({ min: 1, max: 5 }) }), weight: 1 },
)
const ops = fc.array(op, { minLength: 1, maxLength: 24 })

/** One adapter, shared by every run of a property; each run takes two companies of its own. */
interface FeedSubject {
  webhooks: WebhookStore
  /** Records `events` in one transaction by `via`, then runs `then` inside it (it may throw: rollback). */
  transaction(via: Via, events: readonly ChangeEvent[], then: () => Promise<void>): Promise<void>
}

interface ModelEvent {
  label: string
  event: ChangeEvent
  /** The event's instant, in steps: purges cut by it. */
  at: number
  purged?: boolean
}

interface Cursor {
  value: number
  /** How many of the company's committed events (purged ones included) are at or before it. */
  index: number
}

/** Resolves when `open` is called. */
function latch(): { wait: Promise<void>; open: () => void } {
  let open!: () => void
  const wait = new Promise<void>((resolve) => (open = resolve))
  return { wait, open }
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

let runs = 0
/** Instants only grow across runs, so a run's first purge clears what earlier runs left. */
let clock = 0

/** Plays `script` against `subject` and the model, asserting after every step. */
async function play(subject: FeedSubject, script: readonly Op[]): Promise<void> {
  const store = subject.webhooks
  const run = ++runs
  const companies = [run * 10 + 1, run * 10 + 2] as const
  // Earlier runs' events would count in this run's purges: gone before it starts.
  const start = ++clock
  while ((await store.purgeFinished(new Date(WRITE_NOW.getTime() + start * STEP_MS), 10_000)) > 0);

  const names = new EventNames(0)
  const committed: [ModelEvent[], ModelEvent[]] = [[], []]
  const purged: [number, number] = [0, 0]
  /** Every committed event, both companies, in commit order: the order purges take them in. */
  const everyCommitted: Array<ModelEvent & { side: Side }> = []
  const cursors: [Cursor[], Cursor[]] = [[], []]
  const positions = new Map<string, number>()
  const heads: [number, number] = [0, 0]
  const trail: string[] = []
  let made = 0

  const retained = (s: Side) => committed[s].slice(purged[s])
  const labels = (list: readonly ModelEvent[], types: readonly string[] = TYPES) => list.filter((entry) => types.includes(entry.event.type)).map((entry) => entry.label)
  const pick = (s: Side, n: number): Cursor | undefined => (n < 0 || cursors[s].length === 0 ? undefined : cursors[s][n % cursors[s].length])
  const say = (what: string) => `${what}\n  after: ${trail.join('\n         ')}`

  const make = (specs: readonly EventSpec[]) =>
    specs.map((spec) => {
      const at = ++clock
      const label = `run ${run} #${++made} (company ${companies[spec.side]}, ${spec.type})`
      const event = names.add(label, changeEvent(`feed property: ${label}`, companies[spec.side], spec.type, made, at * STEP_MS))
      return { side: spec.side, label, event, at }
    })
  const commitToModel = (batch: ReadonlyArray<ModelEvent & { side: Side }>) => {
    for (const entry of batch) {
      committed[entry.side].push(entry)
      everyCommitted.push(entry)
    }
  }

  /** One checked page: the port's contract for a single answer. */
  const page = async (s: Side, query: FeedQuery): Promise<FeedPage> => {
    const answer = await store.readFeed(companies[s], query)
    if (!answer.expired) expect(pageViolations(answer, companies[s], query, names), say(describeQuery(companies[s], query))).toEqual([])
    return answer
  }

  /** The whole feed with after omitted must be the retained events; learns every retained event's position. */
  const oracle = async (s: Side) => {
    const seen: Array<{ label: string; position: number }> = []
    let after: number | undefined
    for (let pages = 0; ; pages += 1) {
      expect(pages < MAX_PAGES, say(`company ${companies[s]}'s whole feed: has_more after ${MAX_PAGES} pages`)).toBe(true)
      const answer = await page(s, after === undefined ? WHOLE : { ...WHOLE, after })
      expect(answer.expired, say(`company ${companies[s]}'s feed with after omitted answered expired`)).toBe(false)
      if (answer.expired) return
      seen.push(...answer.events.map((event) => ({ label: names.of(event.payload).label, position: event.position })))
      after = answer.next
      if (!answer.has_more) break
    }
    expect(
      seen.map((entry) => entry.label),
      say(`company ${companies[s]}'s whole feed (after omitted): its retained committed events, in commit order`),
    ).toEqual(labels(retained(s)))
    for (const { label, position } of seen) {
      const known = positions.get(label)
      expect(known ?? position, say(`the position of ${label}: given once, never changed`)).toBe(position)
      positions.set(label, position)
    }
  }

  /** Where a cursor stands in the model: the purged prefix, then the retained events at or before it. */
  const indexOf = (s: Side, value: number) => purged[s] + retained(s).filter((entry) => (positions.get(entry.label) as number) <= value).length

  const expectAnswer = (s: Side, from: Cursor | undefined, answer: FeedPage, what: string): answer is Extract<FeedPage, { expired: false }> => {
    const lost = from !== undefined && purged[s] > from.index
    const after = from === undefined ? 0 : Math.max(0, purged[s] - from.index)
    expect(answer.expired, say(`${what}: expired must be ${lost}, as ${after} events after the cursor were purged`)).toBe(lost)
    return !answer.expired
  }

  /** Records a new cursor of the company, where the model says it stands. */
  const remember = async (s: Side, value: number, from: number): Promise<Cursor> => {
    await oracle(s)
    const cursor = { value, index: indexOf(s, value) }
    expect(cursor.index >= from, say(`cursor ${value} of company ${companies[s]} stands before where the read started (event ${from}): it went back`)).toBe(true)
    cursors[s].push(cursor)
    return cursor
  }

  for (const step of script) {
    trail.push(JSON.stringify(step))
    switch (step.kind) {
      case 'commit': {
        const batch = make(step.events)
        const outcome = await subject
          .transaction(step.via, batch.map((entry) => entry.event), async () => {
            if (step.rollback) throw new RollBack()
          })
          .then(
            () => 'committed',
            (error: unknown) => (error instanceof RollBack ? 'rolled back' : Promise.reject(error)),
          )
        if (outcome === 'committed') commitToModel(batch)
        break
      }
      case 'held': {
        const s = step.side
        const from = pick(s, step.cursor)
        const batch = make(step.events)
        const held = latch()
        const recorded = latch()
        const transaction = subject
          .transaction(step.via, batch.map((entry) => entry.event), async () => {
            recorded.open()
            await held.wait
            if (step.rollback) throw new RollBack()
          })
          .then(
            () => true,
            (error: unknown) => (error instanceof RollBack ? false : Promise.reject(error)),
          )
        await recorded.wait
        let released = false
        let answeredWhileOpen = false
        const query: FeedQuery = from === undefined ? WHOLE : { ...WHOLE, after: from.value }
        // Not awaited inside the transaction: memory and SQLite reads wait for it, Postgres ones do not.
        const during = page(s, query).then((answer) => {
          answeredWhileOpen = !released
          return answer
        })
        await Promise.race([during, pause(20)])
        released = true
        held.open()
        if (await transaction) commitToModel(batch)
        const answer = await during
        const what = `${describeQuery(companies[s], query)} while a transaction was open`
        if (!expectAnswer(s, from, answer, what)) break
        const shown = answer.events.map((event) => names.of(event.payload).label)
        if (answeredWhileOpen) {
          expect(shown.filter((label) => batch.some((entry) => entry.label === label)), say(`${what}, answered before it ended: its events`)).toEqual([])
        }
        const startIndex = from?.index ?? purged[s]
        const next = await remember(s, answer.next, startIndex)
        expect(shown, say(`${what}: the committed events between its start and its next`)).toEqual(labels(committed[s].slice(startIndex, next.index)))
        break
      }
      case 'read': {
        const s = step.side
        const from = pick(s, step.cursor)
        const shape = { types: step.types, limit: step.limit, scan: step.limit + step.extraScan }
        const query: FeedQuery = from === undefined ? shape : { ...shape, after: from.value }
        const startIndex = from?.index ?? purged[s]
        if (!step.follow) {
          const answer = await page(s, query)
          if (!expectAnswer(s, from, answer, describeQuery(companies[s], query))) break
          const next = await remember(s, answer.next, startIndex)
          expect(
            answer.events.map((event) => names.of(event.payload).label),
            say(`${describeQuery(companies[s], query)}: every event of those types between its start and its next (${answer.next})`),
          ).toEqual(labels(committed[s].slice(startIndex, next.index), step.types))
          if (!answer.has_more) expect(next.index, say(`${describeQuery(companies[s], query)}: has_more false, so no committed event lies beyond next`)).toBe(committed[s].length)
          break
        }
        const shown: string[] = []
        let after = from?.value
        let last: FeedPage | undefined
        for (let pages = 0; ; pages += 1) {
          expect(pages < MAX_PAGES, say(`following ${describeQuery(companies[s], query)}: has_more after ${MAX_PAGES} pages`)).toBe(true)
          const current: FeedQuery = after === undefined ? shape : { ...shape, after }
          const answer = await page(s, current)
          if (pages === 0) {
            if (!expectAnswer(s, from, answer, describeQuery(companies[s], current))) break
          } else {
            expect(answer.expired, say(`${describeQuery(companies[s], current)}: expired in the middle of a walk, with nothing purged`)).toBe(false)
          }
          if (answer.expired) break
          shown.push(...answer.events.map((event) => names.of(event.payload).label))
          after = answer.next
          last = answer
          if (!answer.has_more) break
        }
        if (last === undefined || last.expired) break
        expect(shown, say(`following next from ${describeQuery(companies[s], query)}: the model's suffix of those types, each once`)).toEqual(
          labels(committed[s].slice(startIndex), step.types),
        )
        const end = await remember(s, last.next, startIndex)
        expect(end.index, say(`the walk's last next (${last.next}) is past every committed event`)).toBe(committed[s].length)
        break
      }
      case 'head': {
        const s = step.side
        const value = await store.feedHead(companies[s])
        expect(value >= heads[s], say(`feedHead(${companies[s]}) = ${value} after ${heads[s]}: it went back`)).toBe(true)
        const highest = Math.max(0, ...committed[s].map((entry) => positions.get(entry.label) ?? 0))
        expect(value >= highest, say(`feedHead(${companies[s]}) = ${value}, below position ${highest} already returned`)).toBe(true)
        heads[s] = value
        const head = await remember(s, value, 0)
        expect(head.index, say(`feedHead(${companies[s]}) = ${value}: every event committed before it is at or before it`)).toBe(committed[s].length)
        break
      }
      case 'foreign': {
        // Another company's cursor: whatever the answer, only this company's events.
        const s = step.side
        const theirs = pick(s === 0 ? 1 : 0, step.cursor)
        if (theirs === undefined) break
        await page(s, { ...WHOLE, after: theirs.value })
        await page(s, { types: ['users.created'], limit: 2, scan: 3, after: theirs.value })
        break
      }
      case 'purge': {
        const cutoff = clock - step.back
        const candidates = everyCommitted.filter((entry) => entry.at < cutoff && entry.purged !== true).slice(0, step.limit)
        const deleted = await store.purgeFinished(new Date(WRITE_NOW.getTime() + cutoff * STEP_MS), step.limit)
        expect(deleted, say(`purgeFinished(cutoff ${cutoff}, ${step.limit}): the oldest events before the cutoff`)).toBe(candidates.length)
        for (const entry of candidates) {
          entry.purged = true
          purged[entry.side] += 1
        }
        break
      }
    }
  }
  // However the script ended: the whole feed of each company is its retained events.
  await oracle(0)
  await oracle(1)
}

class RollBack extends Error {
  constructor() {
    super('property test: roll the transaction back')
  }
}

/** Runs the property on `subject` (opened once for every run), bounded to keep the file under a minute. */
function checkFeed(subject: () => FeedSubject, numRuns: number, shrink = true) {
  return fc.assert(
    fc.asyncProperty(ops, (script) => play(subject(), script)),
    // Shrinking replays scripts: cheap on memory and SQLite, too slow on Postgres.
    { numRuns, endOnFailure: !shrink, interruptAfterTimeLimit: 45_000 },
  )
}

describe('the events feed against its model', () => {
  it('memory: every read from every cursor gives the committed suffix of its types, and purges expire loudly', async () => {
    const adapter = createMemoryAdapter()
    try {
      await checkFeed(
        () => ({
          webhooks: adapter.webhooks,
          transaction: (via, events, then) =>
            adapter.writes.transaction(async (tx) => {
              if (via === 'publish') await adapter.webhooks.publish(tx, events)
              else for (const event of events) await tx.recordEvent(event)
              await then()
            }),
        }),
        MEMORY_RUNS,
      )
    } finally {
      await adapter.close()
    }
  })

  it('sqlite: the same', async () => {
    const adapter = await openSqliteAdapter({ filename: ':memory:' })
    try {
      await checkFeed(
        () => ({
          webhooks: adapter.webhooks,
          transaction: (via, events, then) =>
            via === 'publish'
              ? adapter.transaction(async (trx) => {
                  await adapter.webhooks.publish(trx, events)
                  await then()
                })
              : adapter.writes.transaction(async (tx) => {
                  for (const event of events) await tx.recordEvent(event)
                  await then()
                }),
        }),
        SQLITE_RUNS,
      )
    } finally {
      await adapter.close()
    }
  })
})

describePostgres('the events feed against its model on postgres', () => {
  const database = useTestDatabase()
  const adapters = usePostgresAdapters(database)

  it('postgres: the same, with reads that answer while a transaction is open', async () => {
    const adapter = await adapters.open({ connectionString: database.current.url })
    await checkFeed(
      () => ({
        webhooks: adapter.webhooks,
        transaction: (via, events, then) =>
          via === 'publish'
            ? adapter.db.transaction().execute(async (trx) => {
                await adapter.webhooks.publish(trx, events)
                await then()
              })
            : adapter.writes.transaction(async (tx) => {
                for (const event of events) await tx.recordEvent(event)
                await then()
              }),
      }),
      POSTGRES_RUNS,
      false,
    )
  }, 60_000)
})
