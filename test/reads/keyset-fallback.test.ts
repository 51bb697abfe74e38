import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { KEYSET_SEARCH_ATTEMPTS, rowsAfterByList } from '../../src/api/keyset-fallback.js'
import { MAX_PER_PAGE } from '../../src/api/pagination.js'
import { StorageUnavailable } from '../../src/ports/errors.js'
import type { ListResult, PageWindow, Storage } from '../../src/ports/storage.js'
import { build, type TestApp } from '../helpers/build.js'

/**
 * `rowsAfterByList`, the keyset read of a reader without `seek`: `list()` takes offsets, so the
 * plugin searches for where the ids pass the cursor. Between two of its `list()` calls, another
 * request may change the rows; the answer must still skip no row that stayed.
 */

type Change = { kind: 'delete'; at: number } | { kind: 'insert'; at: number } | { kind: 'append' }

/** A list of ids that `list()` pages like an adapter, applying the next change after each call. */
class ChangingList {
  calls: PageWindow[] = []
  /** Every id that was ever a row. */
  readonly ever: Set<number>
  /** Changes made so far. */
  applied = 0

  constructor(
    public ids: number[],
    private readonly changes: Change[] = [],
  ) {
    this.ever = new Set(ids)
  }

  async list(_companyId: number, _filter: unknown, window: PageWindow): Promise<ListResult<{ id: number }>> {
    expect(window.limit, 'a window within the list() contract').toBeLessThanOrEqual(MAX_PER_PAGE)
    expect(window.limit).toBeGreaterThanOrEqual(1)
    this.calls.push(window)
    const answer = { rows: this.ids.slice(window.offset, window.offset + window.limit).map((id) => ({ id })), total: this.ids.length }
    const change = this.changes.shift()
    if (change !== undefined) {
      this.#apply(change)
      this.applied++
    }
    return answer
  }

  #apply(change: Change): void {
    const at = this.ids.length === 0 ? 0 : change.kind === 'append' ? this.ids.length : (change as { at: number }).at % this.ids.length
    if (change.kind === 'delete') {
      this.ids.splice(at, 1)
    } else if (change.kind === 'append') {
      const id = Math.max(0, ...this.ids) + 1
      this.ids.push(id)
      this.ever.add(id)
    } else {
      // A new id between its neighbours when one is free (an id freed by a delete, say).
      const before = at === 0 ? 0 : (this.ids[at - 1] as number)
      const after = this.ids[at] as number | undefined
      const id = after === undefined ? before + 1 : after - before > 1 ? before + 1 : undefined
      if (id !== undefined) {
        this.ids.splice(at, 0, id)
        this.ever.add(id)
      }
    }
  }
}

/**
 * The ids of a list that changes at every call, each time moving where its ids pass 500 (offset
 * 500, then 100): a binary search for that place sees each read contradict the one before.
 */
function contradicting(call: number): number[] {
  const ids = Array.from({ length: 1_000 }, (_, index) => index + 1)
  return call % 2 === 0 ? ids : ids.map((id) => (id <= 100 ? id : id + 400))
}

/** Sorted distinct positive ids, with gaps. */
const idList = fc.uniqueArray(fc.integer({ min: 1, max: 2_000 }), { maxLength: 400 }).map((ids) => ids.sort((a, b) => a - b))
const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(1_000) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(1_000) }),
  fc.record({ kind: fc.constant('append' as const) }),
)

describe('rowsAfterByList', () => {
  it('without changes: exactly the first `limit` ids above the cursor and the total, in about log2(total / window) calls', async () => {
    await fc.assert(
      fc.asyncProperty(idList, fc.integer({ min: 0, max: 2_100 }), fc.integer({ min: 2, max: 101 }), async (ids, after, limit) => {
        const list = new ChangingList([...ids])
        const { rows, total } = await rowsAfterByList(list, 1, {}, after, limit)
        expect(rows.map((row) => row.id)).toEqual(ids.filter((id) => id > after).slice(0, limit))
        expect(total).toBe(ids.length)
        const window = Math.min(limit + 1, MAX_PER_PAGE)
        // The binary search over windows, its last read, and the windows the rows then fill.
        expect(list.calls.length).toBeLessThanOrEqual(Math.ceil(Math.log2(ids.length / window + 1)) + 2 + Math.ceil(limit / (window - 1)))
      }),
      { numRuns: 300, seed: 24 },
    )
  })

  it('with rows deleted, inserted early and appended between its own calls: never skips a row that stayed', async () => {
    let exhausted = 0
    let changedUnder = 0
    await fc.assert(
      fc.asyncProperty(idList, fc.integer({ min: 0, max: 2_100 }), fc.integer({ min: 2, max: 101 }), fc.array(change, { maxLength: 40 }), async (ids, after, limit, changes) => {
        const list = new ChangingList([...ids], [...changes])
        let answer: ListResult<{ id: number }>
        try {
          answer = await rowsAfterByList(list, 1, {}, after, limit)
        } catch (error) {
          expect(error).toBeInstanceOf(StorageUnavailable)
          exhausted++
          return
        }
        const got = answer.rows.map((row) => row.id)
        if (list.applied > 0 && got.length > 0) changedUnder++
        expect(got.length).toBeLessThanOrEqual(limit)
        for (const [index, id] of got.entries()) expect(id).toBeGreaterThan(index === 0 ? after : (got[index - 1] as number))
        // A row there from the first call to the last, above the cursor and up to the last row
        // returned (or anywhere above the cursor when the answer is short), must be in it.
        const stayed = ids.filter((id) => list.ids.includes(id) && id > after)
        const reach = got.length < limit ? Number.POSITIVE_INFINITY : (got.at(-1) as number)
        const missed = stayed.filter((id) => id <= reach && !got.includes(id))
        expect(missed).toEqual([])
        // Every id answered was a row at some moment.
        for (const id of got) expect(list.ever.has(id)).toBe(true)
      }),
      { numRuns: 400, seed: 2424 },
    )
    // Random changes at every call rarely defeat four searches in a row.
    expect(exhausted).toBeLessThan(10)
    expect(changedUnder, 'runs whose rows changed during the call, with rows to answer').toBeGreaterThan(100)
  })

  it(`gives up with StorageUnavailable after ${KEYSET_SEARCH_ATTEMPTS} searches that each saw the list change under them`, async () => {
    let call = 0
    const flipping = {
      async list(_companyId: number, _filter: unknown, window: PageWindow) {
        const ids = contradicting(call++)
        return { rows: ids.slice(window.offset, window.offset + window.limit).map((id) => ({ id })), total: ids.length }
      },
    }
    await expect(rowsAfterByList(flipping, 1, {}, 500, 26)).rejects.toBeInstanceOf(StorageUnavailable)
    expect(call).toBeGreaterThanOrEqual(KEYSET_SEARCH_ATTEMPTS)
  })
})

/** A promise with its resolve function, to hold a storage call until the test lets it go. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

/** `storage` whose to-do lists are replaced by `list`. */
function withTodoList(storage: Storage, list: Storage['todos']['list']): Storage {
  const wrapped: Storage = Object.create(storage) as Storage
  Object.defineProperty(wrapped, 'todos', { value: { get: storage.todos.get.bind(storage.todos), list } })
  return wrapped
}

describe('starting_after over HTTP, on a reader without seek', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('a list changing faster than it can be searched: 503 service_unavailable with Retry-After, never a 500', async () => {
    let call = 0
    t = await build({
      options: (adapter) => ({
        rateLimit: false,
        storage: withTodoList(adapter.storage, async (companyId, filter, window) => {
          const { rows } = await adapter.storage.todos.list(companyId, filter, { offset: 0, limit: 1 })
          const template = rows[0]
          if (template === undefined) throw new Error('company 1 has no to-do')
          const all = contradicting(call++).map((id) => ({ ...template, id }))
          return { rows: all.slice(window.offset, window.offset + window.limit), total: all.length }
        }),
      }),
    })
    const key = await t.keyFor(1)
    const response = await t.get('/v1/todos?starting_after=500&per_page=25', key)
    expect(response.statusCode, response.body).toBe(503)
    expect(response.headers['retry-after']).toBe('1')
    expect(response.json()).toMatchObject({ error: { code: 'service_unavailable', status: 503 } })
  })

  it("takes the company's list-read slots like a page does: beyond the queue, 429 with Retry-After", async () => {
    const held: Array<ReturnType<typeof gate>> = []
    t = await build({
      options: (adapter) => ({
        rateLimit: false,
        listConcurrency: { perCompany: 1, queuePerCompany: 1 },
        storage: withTodoList(adapter.storage, async (...args) => {
          const hold = gate()
          held.push(hold)
          await hold.promise
          return adapter.storage.todos.list(...args)
        }),
      }),
    })
    const key = await t.keyFor(1)
    const running = t.get('/v1/todos?starting_after=0', key)
    const queued = t.get('/v1/todos?page=1', key)
    await vi.waitFor(() => expect(held).toHaveLength(1))
    const refused = await t.get('/v1/todos?starting_after=5', key)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.json()).toMatchObject({ error: { code: 'rate_limited', status: 429 } })
    // Release every list() call as it comes: the keyset search makes several.
    const release = setInterval(() => held.forEach((hold) => hold.open()), 1)
    try {
      expect((await running).statusCode).toBe(200)
      expect((await queued).statusCode).toBe(200)
    } finally {
      clearInterval(release)
    }
  })
})
