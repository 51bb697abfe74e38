import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { FeedPage, FeedQuery, WebhookStore } from '../../ports/webhook-store.js'
import type { ChangeEvent } from '../../ports/write-storage.js'
import type { ConformanceContext } from '../context.js'
import type { ConformanceGroup } from '../group.js'
import { changeEvent } from '../webhook-facts.js'
import { afterNow } from '../write-facts.js'
import { DeliberateRollback, outcomeOf, pause } from '../write-outcomes.js'
import { recordEvents } from './webhook-outbox.js'

/** The types the group records; `RARE` is recorded seldom, to filter for. */
const COMMON = 'todos.updated'
const RARE = 'users.created'
const ALL_TYPES = [COMMON, RARE, 'todos.created', 'shifts.deleted'] as const

/** One page holds everything the group records. */
const WHOLE = { types: ALL_TYPES, limit: 1_000, scan: 1_000_000 } as const

/** A walk that is still told `has_more` after this many pages never ends for a reader either. */
const MAX_PAGES = 400

/**
 * How long a second transaction gets to commit while a first one is held open. Adapters that
 * run transactions one at a time (memory, SQLite) keep it waiting: the test then checks the
 * order they do allow instead of deadlocking.
 */
const OVERLAP_WAIT_MS = 300

/** Rounds of readers racing a purge; each round has 8 readers, and a few hit the window on Postgres. */
const PURGE_RACE_ROUNDS = 30

/** Names the events a test recorded by payload (the feed's body is the recorded one, byte for byte). */
export class EventNames {
  readonly #byPayload = new Map<string, ChangeEvent & { label: string }>()

  constructor(readonly companyId: number) {}

  add(label: string, event: ChangeEvent): ChangeEvent {
    this.#byPayload.set(event.payload, { ...event, label })
    return event
  }

  /** A feed event as a label, or what is wrong with it: not one the test recorded, another company's. */
  of(payload: string): { label: string; type: string | undefined; company: number | undefined } {
    const known = this.#byPayload.get(payload)
    if (known !== undefined) return { label: known.label, type: known.type, company: known.company_id }
    return { label: `an unknown payload: ${payload.slice(0, 80)}`, type: undefined, company: undefined }
  }

  labelOf(event: ChangeEvent): string {
    return this.#byPayload.get(event.payload)?.label ?? event.id
  }
}

/** Every way one page breaks the port's contract, in words (empty: none). */
export function pageViolations(page: Extract<FeedPage, { expired: false }>, companyId: number, query: FeedQuery, names: EventNames): string[] {
  const wrong: string[] = []
  const positions = page.events.map((event) => event.position)
  if (!Number.isInteger(page.next)) wrong.push(`next is ${String(page.next)}, not an integer`)
  if (typeof page.has_more !== 'boolean') wrong.push(`has_more is ${String(page.has_more)}, not a boolean`)
  if (!Number.isInteger(page.head)) wrong.push(`head is ${String(page.head)}, not an integer`)
  if (page.events.length > query.limit) wrong.push(`${page.events.length} events for limit ${query.limit}`)
  for (let index = 1; index < positions.length; index += 1) {
    if ((positions[index] as number) <= (positions[index - 1] as number)) wrong.push(`positions not increasing: ${positions.join(', ')}`)
  }
  const last = positions.at(-1)
  if (last !== undefined && page.next < last) wrong.push(`next ${page.next} is below the last position returned, ${last}: the reader would see it again`)
  if (last !== undefined && page.head < last) wrong.push(`head ${page.head} is below the last position returned, ${last}`)
  if (query.after !== undefined) {
    const bound = query.after + query.scan
    const beyond = positions.filter((position) => position <= query.after! || position > bound)
    if (beyond.length > 0) wrong.push(`positions ${beyond.join(', ')} outside (after, after + scan] = (${query.after}, ${bound}]`)
    if (page.next < query.after) wrong.push(`next ${page.next} is below after ${query.after}: the reader would go back`)
    if (page.next > bound) wrong.push(`next ${page.next} is beyond after + scan = ${bound}: more than scan positions examined`)
    if (page.has_more && page.next <= query.after) wrong.push(`has_more with next ${page.next} not beyond after ${query.after}: a reader following next never moves`)
  }
  for (const event of page.events) {
    const seen = names.of(event.payload)
    if (seen.company !== companyId) wrong.push(`position ${event.position}: ${seen.company === undefined ? seen.label : `${seen.label}, of company ${seen.company}`}`)
    else if (!query.types.includes(seen.type as string)) wrong.push(`position ${event.position}: ${seen.label} of type ${seen.type}, not asked for (${query.types.join(', ')})`)
  }
  return wrong
}

export function describeQuery(companyId: number, query: FeedQuery): string {
  return `readFeed(${companyId}, { after: ${query.after ?? 'omitted'}, types: [${query.types.join(', ')}], limit: ${query.limit}, scan: ${query.scan} })`
}

/** One page, checked against the contract. */
async function readPage(store: WebhookStore, companyId: number, query: FeedQuery, names: EventNames): Promise<FeedPage> {
  const page = await store.readFeed(companyId, query)
  if (!page.expired) expect(pageViolations(page, companyId, query, names), describeQuery(companyId, query)).toEqual([])
  return page
}

interface Walk {
  expired: boolean
  /** The events seen, as labels, in the order the pages gave them. */
  labels: string[]
  positions: number[]
  /** The last page's `next`: where the reader resumes later. */
  next: number
  pages: number
}

/**
 * Follows `next` from `start.after` until `has_more` is false, as a client does, checking every
 * page. Expired is only acceptable on the first page (nothing is purged during a walk).
 */
async function walkFeed(store: WebhookStore, companyId: number, start: FeedQuery, names: EventNames): Promise<Walk> {
  const walk: Walk = { expired: false, labels: [], positions: [], next: start.after ?? 0, pages: 0 }
  let after = start.after
  while (walk.pages < MAX_PAGES) {
    const query: FeedQuery = after === undefined ? { types: start.types, limit: start.limit, scan: start.scan } : { ...start, after }
    const page = await readPage(store, companyId, query, names)
    walk.pages += 1
    if (page.expired) {
      expect(walk.pages, `${describeQuery(companyId, query)} answered expired in the middle of a walk that started ${describeQuery(companyId, start)}, with nothing purged meanwhile`).toBe(1)
      return { ...walk, expired: true }
    }
    walk.labels.push(...page.events.map((event) => names.of(event.payload).label))
    walk.positions.push(...page.events.map((event) => event.position))
    walk.next = page.next
    after = page.next
    if (!page.has_more) return walk
  }
  throw new Error(`${describeQuery(companyId, start)}: has_more still true after ${MAX_PAGES} pages following next (now at ${String(after)}): a reader never finishes`)
}

/** The labels of the events whose type is in `types`, in the order given. */
function labelsOf(events: ReadonlyArray<{ label: string; event: ChangeEvent }>, types: readonly string[] = ALL_TYPES): string[] {
  return events.filter(({ event }) => types.includes(event.type)).map(({ label }) => label)
}

/** Records the events in one transaction: through `publish` in a host transaction, or through `recordEvent`. */
function recordIn(ctx: ConformanceContext, path: RecordPath, events: readonly ChangeEvent[], work: () => Promise<void> = async () => {}): Promise<void> {
  if (path === 'publish') {
    return ctx.hostTransaction(async (handle) => {
      await ctx.webhooks().publish(handle, events)
      await work()
    })
  }
  return ctx.writes().transaction(async (tx) => {
    for (const event of events) await tx.recordEvent(event)
    await work()
  })
}

type RecordPath = 'publish' | 'recordEvent'
const RECORD_PATHS: readonly RecordPath[] = ['publish', 'recordEvent']

/** Lets `count` turns of the event loop pass: enough for a query or two of another task to run. */
async function ticks(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn += 1) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** A promise and the function that settles it. */
function latch(): { wait: Promise<void>; open: () => void } {
  let open!: () => void
  const wait = new Promise<void>((resolve) => (open = resolve))
  return { wait, open }
}

/**
 * The events feed of the `WebhookStore` (`readFeed`, `feedHead`; src/ports/webhook-store.ts):
 * each company sees its own committed events, each once, in the order their transactions
 * committed, never before they commit; `limit`, `scan` and `types` bound and narrow a page
 * while `next` and `has_more` let a reader that follows them see everything; a purge expires
 * the cursors it cut short, loudly.
 */
export const eventFeed: ConformanceGroup = {
  title: 'events feed',
  requires: ['writes', 'webhooks'],
  define(ctx) {
    it('lists each company\'s committed events once, in commit order (not creation order), with the recorded body, and none of another company\'s', async () => {
      const store = ctx.webhooks()
      const one = new EventNames(1)
      const two = new EventNames(2)
      const named = (names: EventNames, label: string, type: string, atMs: number) => ({ label, event: names.add(label, changeEvent(`feed order: ${label}`, names.companyId, type, 40 + atMs, atMs)) })
      // Created in this order (ids, instants), committed in another: the feed follows the commits.
      const created = named(one, 'created first, committed third', COMMON, 0)
      const early = named(one, 'created second, committed first', 'todos.created', 10)
      const theirs = named(two, "company 2's, committed with company 1's second", COMMON, 20)
      const batch = [named(one, 'batch: a', RARE, 30), named(one, 'batch: b', COMMON, 31), named(one, 'batch: c', 'shifts.deleted', 32)]
      const lateTheirs = named(two, "company 2's own transaction", RARE, 40)
      const start = { 1: await store.feedHead(1), 2: await store.feedHead(2) }

      await recordIn(ctx, 'recordEvent', [early.event])
      await recordIn(ctx, 'publish', [batch[0]!.event, theirs.event, batch[1]!.event, batch[2]!.event])
      await recordEvents(ctx, [created.event])
      await recordIn(ctx, 'publish', [lateTheirs.event])
      const expectedOne = [early, ...batch, created]
      const expectedTwo = [theirs, lateTheirs]

      const whole = await readPage(store, 1, { ...WHOLE, after: start[1] }, one)
      expect(whole.expired, `${describeQuery(1, { ...WHOLE, after: start[1] })}: expired`).toBe(false)
      if (whole.expired) return
      expect(
        whole.events.map((event) => one.of(event.payload).label),
        "company 1's feed from its head before the writes: every committed event once, in commit order",
      ).toEqual(labelsOf(expectedOne))
      expect(
        whole.events.map((event) => event.payload),
        "company 1's feed: each event's body exactly as recorded (the webhook body)",
      ).toEqual(expectedOne.map(({ event }) => event.payload))
      expect(whole.has_more, 'has_more after a page that holds every event').toBe(false)
      const omitted = await walkFeed(store, 1, WHOLE, one)
      expect(omitted.labels, "company 1's feed with after omitted: from the oldest retained event").toEqual(labelsOf(expectedOne))
      expect((await walkFeed(store, 2, { ...WHOLE, after: start[2] }, two)).labels, "company 2's feed").toEqual(labelsOf(expectedTwo))
      expect((await walkFeed(store, 3, WHOLE, new EventNames(3))).labels, 'the feed of a company without events').toEqual([])

      const idle = await readPage(store, 1, { ...WHOLE, after: whole.next }, one)
      expect(idle, "company 1's feed from its last next, with nothing new: the same next, nothing more").toEqual({ expired: false, events: [], next: whole.next, has_more: false, head: whole.next })
    })

    it('a reader following next with small limit and scan sees every event exactly once, also when filtering for a rare type', async () => {
      const store = ctx.webhooks()
      const one = new EventNames(1)
      const two = new EventNames(2)
      const start = await store.feedHead(1)
      const recorded: Array<{ label: string; event: ChangeEvent }> = []
      // 4 transactions of 1 to 5 events; the rare type twice, far apart; company 2 in between.
      const sizes = [3, 5, 1, 4]
      let n = 0
      for (const [tx, size] of sizes.entries()) {
        const events: ChangeEvent[] = []
        for (let index = 0; index < size; index += 1, n += 1) {
          const type = n === 1 || n === 11 ? RARE : n % 3 === 0 ? 'todos.created' : COMMON
          const label = `#${n} (${type})`
          const event = one.add(label, changeEvent(`feed walk: ${label}`, 1, type, n, n))
          recorded.push({ label, event })
          events.push(event)
          if (index === 1) events.push(two.add(`company 2 #${n}`, changeEvent(`feed walk: company 2 #${n}`, 2, RARE, n, n)))
        }
        await recordIn(ctx, tx % 2 === 0 ? 'publish' : 'recordEvent', events)
      }

      for (const [limit, scan] of [[1, 1], [2, 3], [3, 3], [1, 100], [5, 7]] as const) {
        const walk = await walkFeed(store, 1, { types: ALL_TYPES, limit, scan, after: start }, one)
        expect(walk.labels, `following next from ${start}, limit ${limit}, scan ${scan}: every event once, in order`).toEqual(labelsOf(recorded))
        const pagesAtLeast = Math.ceil(recorded.length / limit)
        expect(walk.pages >= pagesAtLeast, `pages walked with limit ${limit}: ${walk.pages}, at least ${pagesAtLeast}`).toBe(true)
      }
      for (const [types, limit, scan] of [
        [[RARE], 1, 1],
        [[RARE], 1, 2],
        [[RARE], 5, 5],
        [['todos.created', RARE], 2, 4],
        [['no.such.type'], 1, 3],
      ] as const) {
        const walk = await walkFeed(store, 1, { types, limit, scan, after: start }, one)
        expect(walk.labels, `following next from ${start} for [${types.join(', ')}], limit ${limit}, scan ${scan}: each such event once, in order`).toEqual(labelsOf(recorded, types))
        const all = await walkFeed(store, 1, { ...WHOLE, after: start }, one)
        expect(walk.next >= (all.positions.at(-1) ?? start), `the filtered walk ends at next ${walk.next}, at or past the last event's position ${all.positions.at(-1)}: a filtering reader still moves`).toBe(true)
      }
      const omitted = await walkFeed(store, 1, { types: [RARE], limit: 1, scan: 2 }, one)
      expect(omitted.labels, 'the same for a rare type with after omitted').toEqual(labelsOf(recorded, [RARE]))
    })

    it('feedHead is at or past every position given, and the feed from it holds exactly what commits afterwards', async () => {
      const store = ctx.webhooks()
      const one = new EventNames(1)
      const start = await store.feedHead(1)
      const first = [0, 1, 2].map((n) => ({ label: `before the head #${n}`, event: one.add(`before the head #${n}`, changeEvent(`feed head: before #${n}`, 1, COMMON, n, n)) }))
      await recordEvents(ctx, first.map(({ event }) => event))
      // Read (giving positions) before asking for the head, and once without reading first.
      const seen = await walkFeed(store, 1, { ...WHOLE, after: start }, one)
      const head = await store.feedHead(1)
      const last = seen.positions.at(-1) ?? start
      expect(head >= last, `feedHead ${head} after reading positions up to ${last}: never below a position already returned`).toBe(true)
      expect(head >= start, `feedHead ${head} after ${start}: it never goes back`).toBe(true)

      const second = [3, 4].map((n) => ({ label: `after the head #${n}`, event: one.add(`after the head #${n}`, changeEvent(`feed head: after #${n}`, 1, RARE, n, n)) }))
      await recordIn(ctx, 'publish', second.map(({ event }) => event))
      const unread = await store.feedHead(1)
      expect(unread >= head, `feedHead ${unread} after ${head}: it never goes back`).toBe(true)
      const third = [5, 6].map((n) => ({ label: `after the second head #${n}`, event: one.add(`after the second head #${n}`, changeEvent(`feed head: later #${n}`, 1, COMMON, n, n)) }))
      await recordEvents(ctx, third.map(({ event }) => event))

      expect((await walkFeed(store, 1, { ...WHOLE, after: head }, one)).labels, `the feed from the first head ${head}`).toEqual(labelsOf([...second, ...third]))
      expect(
        (await walkFeed(store, 1, { ...WHOLE, after: unread }, one)).labels,
        `the feed from feedHead ${unread}, taken before any read gave the events committed before it positions`,
      ).toEqual(labelsOf(third))
      const all = await walkFeed(store, 1, { ...WHOLE, after: start }, one)
      const newest = await store.feedHead(1)
      expect(newest >= (all.positions.at(-1) ?? start), `feedHead ${newest}: at or past the last position returned, ${all.positions.at(-1)}`).toBe(true)
    })

    it('returns only the types asked for, at most limit events, and never positions beyond after + scan', async () => {
      const store = ctx.webhooks()
      const one = new EventNames(1)
      const start = await store.feedHead(1)
      const types = [COMMON, COMMON, COMMON, COMMON, COMMON, RARE, COMMON, 'todos.created', RARE, COMMON]
      const recorded = types.map((type, n) => ({ label: `#${n} (${type})`, event: one.add(`#${n} (${type})`, changeEvent(`feed bounds: #${n}`, 1, type, n, n)) }))
      await recordEvents(ctx, recorded.map(({ event }) => event))
      const positions = (await walkFeed(store, 1, { ...WHOLE, after: start }, one)).positions
      expect(positions.length, 'events in the feed').toBe(recorded.length)

      // Each page is checked by readPage: length, type, positions within (after, after + scan], next.
      for (const after of [start, ...positions]) {
        for (const [pageTypes, limit, scan] of [
          [ALL_TYPES, 2, 2],
          [ALL_TYPES, 1, 5],
          [[RARE], 1, 3],
          [[RARE], 3, 3],
          [['todos.created'], 1, 1],
          [[COMMON], 4, 4],
        ] as const) {
          await readPage(store, 1, { after, types: pageTypes, limit, scan }, one)
        }
      }
      const rare = await readPage(store, 1, { after: start, types: [RARE], limit: 10, scan: 1_000_000 }, one)
      expect(rare.expired ? 'expired' : rare.events.map((event) => one.of(event.payload).label), `the ${RARE} events only`).toEqual(labelsOf(recorded, [RARE]))
      const firstTwo = await readPage(store, 1, { after: start, types: ALL_TYPES, limit: 2, scan: 1_000_000 }, one)
      expect(firstTwo.expired ? 'expired' : firstTwo.events.map((event) => one.of(event.payload).label), 'limit 2: the first two events').toEqual(labelsOf(recorded.slice(0, 2)))
      expect(!firstTwo.expired && firstTwo.has_more, 'limit 2 of 10: has_more').toBe(true)
    })

    it("never shows company 2's events in company 1's feed, whatever the cursor", async () => {
      const store = ctx.webhooks()
      const one = new EventNames(1)
      const two = new EventNames(2)
      // Company 2 writes more, so its positions run past company 1's.
      const ours = [0, 1].map((n) => one.add(`ours #${n}`, changeEvent(`feed isolation: ours #${n}`, 1, COMMON, n, n)))
      const theirs = Array.from({ length: 8 }, (_, n) => two.add(`theirs #${n}`, changeEvent(`feed isolation: theirs #${n}`, 2, n % 2 === 0 ? COMMON : RARE, n, 10 + n)))
      await recordEvents(ctx, [theirs[0]!, ours[0]!, ...theirs.slice(1, 5)])
      await recordIn(ctx, 'publish', [...theirs.slice(5), ours[1]!])
      const theirWalk = await walkFeed(store, 2, WHOLE, two)
      expect(theirWalk.labels, "company 2's own feed").toEqual(theirs.map((event) => two.labelOf(event)))
      const ourWalk = await walkFeed(store, 1, WHOLE, one)
      expect(ourWalk.labels, "company 1's own feed").toEqual(ours.map((event) => one.labelOf(event)))

      // Both companies' events are named in `one`, so a leak reads as "of company 2".
      const both = new EventNames(1)
      for (const event of ours) both.add(one.labelOf(event), event)
      for (const event of theirs) both.add(two.labelOf(event), event)
      const cursors = [...new Set([0, ...ourWalk.positions, ...theirWalk.positions, theirWalk.next, await store.feedHead(2), theirWalk.next + 1_000])]
      for (const after of cursors) {
        for (const types of [ALL_TYPES, [RARE]]) {
          const page = await store.readFeed(1, { after, types, limit: 100, scan: 1_000_000 })
          if (page.expired) continue
          expect(pageViolations(page, 1, { after, types, limit: 100, scan: 1_000_000 }, both), `${describeQuery(1, { after, types, limit: 100, scan: 1_000_000 })}: only company 1's events`).toEqual([])
        }
      }
    })

    for (const path of RECORD_PATHS) {
      const how = path === 'publish' ? 'publish in a host transaction' : 'recordEvent in a write transaction'
      it(`an event (${how}) appears only once its transaction commits, exactly once, and never if it rolls back`, async () => {
        const store = ctx.webhooks()
        const one = new EventNames(1)
        const cursor = await store.feedHead(1)
        const committed: ChangeEvent[] = []
        for (const ending of ['commits', 'rolls back'] as const) {
          const event = one.add(`held open, ${ending}`, changeEvent(`feed commit: ${path} ${ending}`, 1, COMMON, 1, ending === 'commits' ? 1 : 2))
          if (ending === 'commits') committed.push(event)
          // Taken before the transaction starts: a memory or SQLite read would wait for it.
          const from = (await walkFeed(store, 1, { ...WHOLE, after: cursor }, one)).next
          const held = latch()
          const recorded = latch()
          const transaction = recordIn(ctx, path, [event], async () => {
            recorded.open()
            await held.wait
            if (ending === 'rolls back') throw new DeliberateRollback()
          })
          const settled = outcomeOf(transaction)
          await recorded.wait
          // Not awaited inside the transaction: a memory or SQLite read waits for it to end, a Postgres one does not.
          let released = false
          let answeredWhileOpen = false
          const during = store.readFeed(1, { ...WHOLE, after: from }).then((page) => {
            answeredWhileOpen = !released
            return page
          })
          await Promise.race([during, pause(50)])
          released = true
          held.open()
          expect(await settled, `the transaction: record, wait, then ${ending === 'commits' ? 'resolve' : 'throw'}`).toBe(ending === 'commits' ? 'resolved' : 'DeliberateRollback')
          const first = await during
          expect(first.expired, `${describeQuery(1, { ...WHOLE, after: from })} while the transaction was open: expired`).toBe(false)
          if (first.expired) return
          expect(pageViolations(first, 1, { ...WHOLE, after: from }, one), `${describeQuery(1, { ...WHOLE, after: from })} while the transaction was open`).toEqual([])
          const labelsDuring = first.events.map((page) => one.of(page.payload).label)
          if (answeredWhileOpen) expect(labelsDuring, 'a read that answered while the transaction was still open: the event is not committed yet').toEqual([])
          const later = await walkFeed(store, 1, { ...WHOLE, after: first.next }, one)
          const wanted = ending === 'commits' ? [one.labelOf(event)] : []
          expect([...labelsDuring, ...later.labels], `the read during the transaction, then the feed from its next ${first.next} after it ${ending}`).toEqual(wanted)
          expect((await walkFeed(store, 1, { ...WHOLE, after: from }, one)).labels, `the feed from ${from} after the transaction ${ending}`).toEqual(wanted)
        }
        const after = one.add('after the rollback', changeEvent(`feed commit: ${path} after`, 1, RARE, 1, 3))
        await recordIn(ctx, path, [after])
        expect((await walkFeed(store, 1, { ...WHOLE, after: cursor }, one)).labels, 'the feed at the end: the committed events only').toEqual(
          [...committed, after].map((event) => one.labelOf(event)),
        )
      })
    }

    it('orders two transactions open at once by their commits: one that records first and commits last comes after', async () => {
      const store = ctx.webhooks()
      const one = new EventNames(1)
      const cursor = await store.feedHead(1)
      const first = one.add('recorded first, committed last', changeEvent('feed overlap: A', 1, COMMON, 1, 0))
      const second = one.add('recorded second, committed first', changeEvent('feed overlap: B', 1, RARE, 2, 10))
      const held = latch()
      const recorded = latch()
      const a = outcomeOf(
        recordIn(ctx, 'publish', [first], async () => {
          recorded.open()
          await held.wait
        }),
      )
      await recorded.wait
      const b = outcomeOf(recordIn(ctx, 'publish', [second]))
      // Memory and SQLite run one transaction at a time: B waits for A, and A commits first.
      const overlapped = (await Promise.race([b.then(() => true), pause(OVERLAP_WAIT_MS).then(() => false)])) === true
      if (overlapped) {
        expect(await b, 'B: published and committed while A is open').toBe('resolved')
        const during = await readPage(store, 1, { ...WHOLE, after: cursor }, one)
        expect(during.expired ? 'expired' : during.events.map((event) => one.of(event.payload).label), 'the feed while A is still open: B only').toEqual([one.labelOf(second)])
        held.open()
        expect(await a, 'A: committed after B').toBe('resolved')
        if (during.expired) return
        const later = await walkFeed(store, 1, { ...WHOLE, after: during.next }, one)
        expect(later.labels, `the feed from the next (${during.next}) of the read while A was open: A, after B`).toEqual([one.labelOf(first)])
        const whole = await walkFeed(store, 1, { ...WHOLE, after: cursor }, one)
        expect(whole.labels, 'the whole feed: B then A, the commit order').toEqual([one.labelOf(second), one.labelOf(first)])
      } else {
        held.open()
        expect([await a, await b], 'A, then B once A had committed').toEqual(['resolved', 'resolved'])
        const whole = await walkFeed(store, 1, { ...WHOLE, after: cursor }, one)
        expect(whole.labels, 'the whole feed: A then B, the commit order of transactions run one at a time').toEqual([one.labelOf(first), one.labelOf(second)])
      }
    })

    it('a read racing a purge is either expired or whole: never silently short of the purged events', async () => {
      const store = ctx.webhooks()
      const one = new EventNames(1)
      const answers = { expired: 0, whole: 0 }
      // The race is a window of a statement or two: readers start at staggered moments around the purge.
      for (let round = 0; round < PURGE_RACE_ROUNDS; round += 1) {
        const start = await store.feedHead(1)
        const old = [0, 1, 2].map((n) => one.add(`round ${round}: old #${n}`, changeEvent(`feed purge race: ${round} old ${n}`, 1, COMMON, n, -10_000 + n)))
        const fresh = [0, 1].map((n) => one.add(`round ${round}: fresh #${n}`, changeEvent(`feed purge race: ${round} fresh ${n}`, 1, COMMON, n, 10_000 + n)))
        await recordEvents(ctx, [...old, ...fresh])
        await store.feedHead(1)
        const query = { ...WHOLE, after: start }
        const readers = Array.from({ length: 8 }, (_, reader) => ticks(reader * 3).then(() => store.readFeed(1, query)))
        const [pages] = await Promise.all([Promise.all(readers), ticks(round % 12).then(() => store.purgeFinished(afterNow(0), 100))])
        const whole = [...old, ...fresh].map((event) => one.labelOf(event))
        for (const [reader, page] of pages.entries()) {
          if (page.expired) {
            answers.expired += 1
            continue
          }
          answers.whole += 1
          expect(
            page.events.map((event) => one.of(event.payload).label),
            `round ${round}, reader ${reader}: ${describeQuery(1, query)} racing purgeFinished answered not expired, so it must hold the events the purge deleted too`,
          ).toEqual(whole)
        }
      }
      expect(answers.expired + answers.whole, 'answers').toBe(PURGE_RACE_ROUNDS * 8)
    })

    it('readers following next while transactions commit concurrently each see the final feed, every event once', async () => {
      const store = ctx.webhooks()
      const one = new EventNames(1)
      const start = await store.feedHead(1)
      const batches = Array.from({ length: 6 }, (_, tx) =>
        [0, 1, 2].map((n) => one.add(`tx ${tx} #${n}`, changeEvent(`feed concurrency: tx ${tx} #${n}`, 1, n === 1 && tx % 2 === 0 ? RARE : COMMON, tx, tx * 10 + n))),
      )
      let writing = true
      // Polls as a client does; it stops once a page read after the last commit says nothing is left.
      const follow = async (types: readonly string[], limit: number, scan: number): Promise<string[]> => {
        const seen: string[] = []
        let after = start
        for (let polls = 0; polls < 2_000; polls += 1) {
          const writersDone = !writing
          const page = await readPage(store, 1, { types, limit, scan, after }, one)
          expect(page.expired, `${describeQuery(1, { types, limit, scan, after })}: expired with nothing purged`).toBe(false)
          if (page.expired) return seen
          seen.push(...page.events.map((event) => one.of(event.payload).label))
          after = page.next
          if (!page.has_more) {
            if (writersDone) return seen
            await pause(1)
          }
        }
        throw new Error(`a reader following ${describeQuery(1, { types, limit, scan, after })} never finished`)
      }
      const writers = Promise.all(batches.map((events, tx) => recordIn(ctx, tx % 2 === 0 ? 'publish' : 'recordEvent', events)))
      const readers = Promise.all([follow(ALL_TYPES, 2, 3), follow(ALL_TYPES, 1, 1), follow([RARE], 1, 2)])
      await writers
      writing = false
      const [pairs, singles, rare] = await readers
      const final = await walkFeed(store, 1, { ...WHOLE, after: start }, one)
      const every = batches.flat().map((event) => one.labelOf(event))
      expect([...final.labels].sort(), 'the feed after the writers: every committed event once').toEqual([...every].sort())
      for (const [tx, events] of batches.entries()) {
        const labels = events.map((event) => one.labelOf(event))
        expect(final.labels.filter((label) => labels.includes(label)), `transaction ${tx}'s events in the feed: in the order recorded`).toEqual(labels)
      }
      expect(pairs, 'a reader of limit 2, scan 3 that followed next during the commits: the final feed').toEqual(final.labels)
      expect(singles, 'a reader of limit 1, scan 1 that followed next during the commits: the final feed').toEqual(final.labels)
      expect(rare, `a reader of ${RARE} that followed next during the commits: the final feed's ${RARE} events`).toEqual(
        final.labels.filter((label) => batches.flat().some((event) => one.labelOf(event) === label && event.type === RARE)),
      )
    })

    it('after a purge, a cursor below a purged event is expired, reading from the start skips the purged ones, and no purged event returns', async () => {
      const store = ctx.webhooks()
      const one = new EventNames(1)
      const two = new EventNames(2)
      const start = { 1: await store.feedHead(1), 2: await store.feedHead(2) }
      const event = (names: EventNames, label: string, type: string, atMs: number) => ({ label, event: names.add(label, changeEvent(`feed purge: ${names.companyId} ${label}`, names.companyId, type, 5, atMs)) })
      // No endpoint, so no delivery needs them: old ones are purged once the cutoff passes them.
      const old = [event(one, 'old #0', COMMON, -3_000), event(one, 'old #1', RARE, -2_000)]
      const fresh = [event(one, 'fresh #0', COMMON, 1_000), event(one, 'fresh #1', RARE, 2_000)]
      const theirs = [event(two, 'theirs, fresh', COMMON, 1_500)]
      await recordEvents(ctx, old.map(({ event }) => event))
      await recordEvents(ctx, [...fresh, ...theirs].map(({ event }) => event))
      const before = await walkFeed(store, 1, { ...WHOLE, after: start[1] }, one)
      expect(before.labels, 'the feed before the purge').toEqual(labelsOf([...old, ...fresh]))
      const theirsBefore = await walkFeed(store, 2, { ...WHOLE, after: start[2] }, two)
      const [oldAt, lastOldAt, firstFreshAt] = before.positions as [number, number, number]

      let purged = 0
      for (let round = 0; round < 10; round += 1) {
        const deleted = await store.purgeFinished(afterNow(0), 1)
        purged += deleted
        if (deleted === 0) break
      }
      expect(purged, 'purgeFinished(WRITE_NOW, 1) until 0: the two old events').toBe(2)

      for (const [what, after] of [[`the head before the old events (${start[1]})`, start[1]], [`the first old event's position (${oldAt})`, oldAt]] as const) {
        expect(await store.readFeed(1, { ...WHOLE, after }), `readFeed(1) from ${what}, below a purged event`).toEqual({ expired: true })
        expect(await store.readFeed(1, { types: [COMMON], limit: 1, scan: 1, after }), `readFeed(1, ${COMMON}, limit 1, scan 1) from ${what}`).toEqual({ expired: true })
      }
      const fromLastOld = await walkFeed(store, 1, { ...WHOLE, after: lastOldAt }, one)
      expect(fromLastOld.expired ? 'expired' : fromLastOld.labels, `the feed from the last purged position (${lastOldAt}): a reader who saw every purged event goes on`).toEqual(labelsOf(fresh))
      expect((await walkFeed(store, 1, { ...WHOLE, after: firstFreshAt }, one)).labels, `the feed from a retained event's position (${firstFreshAt})`).toEqual(labelsOf(fresh.slice(1)))
      expect((await walkFeed(store, 1, WHOLE, one)).labels, 'the feed with after omitted: past the purged events').toEqual(labelsOf(fresh))
      expect((await walkFeed(store, 1, { types: [RARE], limit: 1, scan: 1 }, one)).labels, `the feed for ${RARE} with after omitted, limit 1, scan 1`).toEqual(labelsOf(fresh, [RARE]))
      const theirsAfter = await walkFeed(store, 2, { ...WHOLE, after: start[2] }, two)
      expect(theirsAfter.expired ? 'expired' : theirsAfter.labels, "company 2's feed from its old head: nothing of it was purged").toEqual(theirsBefore.labels)

      // An event purged before any read gave it a position: every cursor handed out before it is expired.
      const unread = event(one, 'purged unread', COMMON, -1_000)
      const head = await store.feedHead(1)
      await recordEvents(ctx, [unread.event])
      const later = event(one, 'after the unread purge', RARE, 3_000)
      expect(await store.purgeFinished(afterNow(0), 10), 'purgeFinished: the event no read has seen').toBe(1)
      await recordEvents(ctx, [later.event])
      const fromHead = await walkFeed(store, 1, { ...WHOLE, after: head }, one)
      expect(fromHead.expired ? 'expired' : fromHead.labels, `the feed from feedHead ${head}, taken before the purged event was recorded`).toBe('expired')
      expect((await walkFeed(store, 1, WHOLE, one)).labels, 'the feed with after omitted after the second purge').toEqual(labelsOf([later]))
    })
  },
}
