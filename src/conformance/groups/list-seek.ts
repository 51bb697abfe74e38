import { expect } from '../vitest-api.js'
import { it, notApplicable } from '../harness.js'
import type { ListVersion, SeekableReader, SeekWindow } from '../../ports/storage.js'
import type { TodoRecord, TodoStatus } from '../../ports/records.js'
import type { TodoFields } from '../../ports/write-storage.js'
import type { ConformanceContext } from '../context.js'
import type { ConformanceGroup } from '../group.js'
import { WHOLE_LIST, type LooseRecord } from '../list-assertions.js'
import { LIST_RESOURCES, readerOf, type ListResource } from '../resources.js'
import { expectedPage, forwardWindows, fromEndWindows, seekCases, type SeekCase } from '../seek-cases.js'
import { WRITE_NOW, writeFacts } from '../write-facts.js'
import { DeliberateRollback } from '../write-outcomes.js'

type AnySeek = SeekableReader<LooseRecord, object>
type Counter = keyof ListVersion

const COUNTERS: readonly Counter[] = ['appends', 'updates', 'removals']
const EMPTY_COMPANY = 3
/** Not in the fixture at all: its counters are zeros too. */
const UNKNOWN_COMPANY = 987_654

/** The reader's `seek`, or the test ends as not applicable: the capability is optional. */
function seekOf(ctx: ConformanceContext, resource: ListResource): AnySeek {
  const seek = readerOf(ctx.storage(), resource).seek as AnySeek | undefined
  if (seek === undefined) notApplicable(`${ctx.name}: storage.${resource} has no seek (an optional capability, docs/adapters.md 2g)`)
  return seek
}

/** Every row `list()` matches (the fixture keeps each company's table under one page), in id order. */
async function listAll(ctx: ConformanceContext, resource: ListResource, companyId: number, filter: object): Promise<LooseRecord[]> {
  const { rows, total } = await readerOf(ctx.storage(), resource).list(companyId, filter, WHOLE_LIST)
  if (rows.length !== total) throw new Error(`conformance suite bug: ${resource} of company ${companyId} do not fit one page (${total} rows)`)
  return rows as LooseRecord[]
}

const describeSeek = (resource: ListResource, call: string, companyId: number, filter: SeekCase, window?: SeekWindow) =>
  `${resource}.seek.${call}(company ${companyId}, ${filter.name}${window === undefined ? '' : `, ${JSON.stringify(window)}`})`

/** The filters asked of a company: its own rows' values; the empty company gets company 1's. */
const casesOf = (ctx: ConformanceContext, resource: ListResource, companyId: number) =>
  seekCases(ctx.expected, resource, companyId === EMPTY_COMPANY ? 1 : companyId)

const NO_FILTER: SeekCase = { name: 'no filter', filter: {} }
/** Every row at once, from the start and from the end. */
const WHOLE: readonly SeekWindow[] = [
  { after: 0, skip: 0, limit: 100 },
  { after: 0, skip: 0, limit: 100, fromEnd: true },
]

/**
 * Asserts `page(window)` over a list whose matching rows are `rows`: exactly its slice (ids
 * first, for a readable diff, then whole records as `list()` returns them), with `version`, or
 * `null` when no row matched.
 */
async function expectPage(
  seek: AnySeek,
  resource: ListResource,
  companyId: number,
  filter: SeekCase,
  window: SeekWindow,
  rows: readonly LooseRecord[],
  version: ListVersion,
  note = '',
): Promise<void> {
  const expected = expectedPage(rows, window)
  const what = `${describeSeek(resource, 'page', companyId, filter, window)}${note}`
  const page = await seek.page(companyId, filter.filter, window)
  expect({ ids: page.rows.map((row) => row.id), version: page.version }, `${what}: ids in id order, and the version (null when no row matched)`).toEqual({
    ids: expected.map((row) => row.id),
    version: expected.length === 0 ? null : version,
  })
  expect(page.rows, `${what}: the records, as list() returns them`).toEqual(expected)
}

/** How each counter moved; a failure message shows both versions. */
function moved(before: ListVersion, after: ListVersion): Record<Counter, number> {
  return { appends: after.appends - before.appends, updates: after.updates - before.updates, removals: after.removals - before.removals }
}

/**
 * Counters only grow, and the change bumped at least one of `bumped`: the ones the plugin needs
 * to see it (docs/adapters.md 2g). Bumping a more cautious one too is allowed.
 */
function expectBumped(before: ListVersion, after: ListVersion, bumped: readonly Counter[], what: string): void {
  const delta = moved(before, after)
  const message = `${what}: version ${JSON.stringify(before)} → ${JSON.stringify(after)}`
  expect(COUNTERS.filter((counter) => delta[counter] < 0), `${message}; counters that went down (they only grow)`).toEqual([])
  expect(bumped.some((counter) => delta[counter] > 0), `${message}; one of ${bumped.join(' or ')} must grow`).toBe(true)
}

/** The writable fields of a to-do: a valid `insertTodo` argument copied from an existing one. */
function fieldsOf(todo: TodoRecord): TodoFields {
  const { title, notes, status, priority, important, due_day, due_at, due_is_all_day, list_id, assigned_to, assignee_group_id } = todo
  return { title, notes, status, priority, important, due_day, due_at, due_is_all_day, list_id, assigned_to, assignee_group_id }
}

/**
 * The optional `seek` capability of a `ResourceReader` (docs/adapters.md 2g), checked against the
 * same adapter's plain `list()` for every list resource and the fixture's filters: `count` is
 * `list().total`; `page` is exactly the id-ordered slice after `after` (with `fromEnd`, the
 * right tail); `walkIds` changes no answer; another company's rows never appear or count; and
 * `version` is three growing counters, stable while nothing is written, reported by `count`
 * and by every page that found rows.
 *
 * A reader without `seek` has nothing to check: its tests end as not applicable (reported
 * skipped, with the reason), so an adapter without the capability passes. The write checks run
 * only with `supports.writes`; through the `WriteStorage` port they can append and update
 * to-dos and add or remove users (memberships), so they cover every counter, but they see
 * no host-side change (a direct SQL write, a bulk load): the reference adapters' property tests
 * (test/reads/list-pages.test.ts) cover those.
 */
export const listSeek: ConformanceGroup = {
  title: 'list seek',
  requires: [],
  define(ctx) {
    const companies = [...ctx.expected.companyIds]

    /** Runs `check` for each company and filter case, with the company's version and matching rows. */
    const eachCase = async (
      resource: ListResource,
      companyIds: readonly number[],
      check: (seek: AnySeek, companyId: number, filter: SeekCase, rows: LooseRecord[], version: ListVersion) => Promise<void>,
    ) => {
      const seek = seekOf(ctx, resource)
      for (const companyId of companyIds) {
        const version = await seek.version(companyId)
        for (const filter of casesOf(ctx, resource, companyId)) {
          await check(seek, companyId, filter, await listAll(ctx, resource, companyId, filter.filter), version)
        }
      }
    }

    for (const resource of LIST_RESOURCES) {
      it(`${resource}: count equals list().total, with and without filters, at the current version`, () =>
        eachCase(resource, companies, async (seek, companyId, filter, rows, version) => {
          expect(await seek.count(companyId, filter.filter), describeSeek(resource, 'count', companyId, filter)).toEqual({ total: rows.length, version })
        }))

      it(`${resource}: page({ after, skip, limit }) is exactly the rows with an id above after, skipping skip, in id order`, () =>
        eachCase(resource, companies, async (seek, companyId, filter, rows, version) => {
          for (const window of forwardWindows(rows.map((row) => row.id))) {
            await expectPage(seek, resource, companyId, filter, window, rows, version)
          }
        }))

      it(`${resource}: page with fromEnd is the limit rows before the skip last ones, in id order`, () =>
        eachCase(resource, companies, async (seek, companyId, filter, rows, version) => {
          for (const window of fromEndWindows(rows.length)) await expectPage(seek, resource, companyId, filter, window, rows, version)
        }))

      it(`${resource}: walkIds is only a hint: the same pages with it`, () =>
        eachCase(resource, [1, 2], async (seek, companyId, filter, rows, version) => {
          for (const window of forwardWindows(rows.map((row) => row.id))) {
            await expectPage(seek, resource, companyId, filter, { ...window, walkIds: true }, rows, version)
          }
        }))

      it(`${resource}: another company's rows never appear or count, whatever the filter or boundary`, async () => {
        const seek = seekOf(ctx, resource)
        const version = await seek.version(1)
        // Company 1 asked with filters built from company 2's rows.
        for (const filter of seekCases(ctx.expected, resource, 2)) {
          const rows = await listAll(ctx, resource, 1, filter.filter)
          expect(await seek.count(1, filter.filter), `${describeSeek(resource, 'count', 1, filter)}, a filter from company 2's rows`).toEqual({ total: rows.length, version })
          for (const window of WHOLE) await expectPage(seek, resource, 1, filter, window, rows, version, ", a filter from company 2's rows")
        }
        // Against the fixture, not list(): from the start and from company 2's ids.
        const own = ctx.expected.records(resource, 1) as unknown as LooseRecord[]
        for (const after of [0, ...ctx.expected.foreignIds(resource, 1).slice(0, 5)]) {
          const window = { after, skip: 0, limit: 100 }
          await expectPage(seek, resource, 1, NO_FILTER, window, own, version, ' (the fixture says)')
        }
        for (const companyId of [EMPTY_COMPANY, UNKNOWN_COMPANY]) {
          const zero = { appends: 0, updates: 0, removals: 0 }
          expect(await seek.version(companyId), `${resource}.seek.version(company ${companyId}), a company without rows`).toEqual(zero)
          for (const filter of seekCases(ctx.expected, resource, 1)) {
            expect(await seek.count(companyId, filter.filter), describeSeek(resource, 'count', companyId, filter)).toEqual({ total: 0, version: zero })
            for (const window of WHOLE) await expectPage(seek, resource, companyId, filter, window, [], zero)
          }
        }
      })
    }

    it('version: three counters as safe integers, unchanged while nothing is written, the same in count and page', async () => {
      for (const resource of LIST_RESOURCES) {
        const seek = seekOf(ctx, resource)
        for (const companyId of companies) {
          const version = await seek.version(companyId)
          const what = `${resource}.seek.version(company ${companyId})`
          expect(Object.keys(version).sort(), `${what}: its members`).toEqual(['appends', 'removals', 'updates'])
          const odd = COUNTERS.filter((counter) => !Number.isSafeInteger(version[counter]) || version[counter] < 0)
          expect(odd, `${what}: counters that are not non-negative integers (an int8 read as text?): ${JSON.stringify(version)}`).toEqual([])
          // Reads of every kind in between: none may move the counters.
          await listAll(ctx, resource, companyId, {})
          const counted = await seek.count(companyId, {})
          const page = await seek.page(companyId, {}, { after: 0, skip: 0, limit: 5 })
          const tail = await seek.page(companyId, {}, { after: 0, skip: 0, limit: 5, fromEnd: true })
          const found = counted.total === 0 ? null : version
          expect(
            { count: counted.version, page: page.version, fromEnd: tail.version, again: await seek.version(companyId) },
            `${what}, with no write: what count, page, page fromEnd and version again report`,
          ).toEqual({ count: version, page: found, fromEnd: found, again: version })
        }
      }
    })

    if (ctx.supports.writes) defineWriteChecks(ctx)
  },
}

/**
 * The counters a write through the `WriteStorage` port must move (docs/adapters.md 2g): an
 * append (a new to-do), an update in place (a to-do's status, a person's login), a row inserted
 * before others (an existing person joining) and a deleted row (a declined invitation); and a
 * rolled-back write moves nothing.
 */
function defineWriteChecks(ctx: ConformanceContext): void {
  const firstTodo = () => {
    const todo = ctx.expected.records('todos', 1)[0]
    if (todo === undefined) throw new Error('conformance suite bug: company 1 has no to-do')
    return todo
  }
  const otherStatus = (todo: TodoRecord): TodoStatus => (todo.status === 'open' ? 'done' : 'open')

  it('todos: an inserted to-do changes the version; count and pages include it at once, in its company only', async () => {
    const seek = seekOf(ctx, 'todos')
    const source = firstTodo()
    const byStatus = { status: source.status }
    const before = { version: await seek.version(1), all: await seek.count(1, {}), byStatus: await seek.count(1, byStatus), other: await seek.count(2, {}) }
    const created = await ctx.writes().transaction((tx) => tx.insertTodo(1, fieldsOf(source), WRITE_NOW))
    const after = await seek.version(1)
    expectBumped(before.version, after, COUNTERS, `todos of company 1, after insertTodo (id ${created.id})`)
    expect(
      { all: await seek.count(1, {}), byStatus: await seek.count(1, byStatus), other: (await seek.count(2, {})).total },
      `todos.seek.count of company 1 (all, status ${source.status}) and of company 2, after the insert into company 1`,
    ).toEqual({
      all: { total: before.all.total + 1, version: after },
      byStatus: { total: before.byStatus.total + 1, version: after },
      other: before.other.total,
    })
    const rows = await listAll(ctx, 'todos', 1, {})
    expect(rows.map((row) => row.id), 'todos of company 1 by list(), after the insert').toEqual([...ctx.expected.records('todos', 1).map((row) => row.id), created.id])
    const previous = rows[rows.length - 2]?.id ?? 0
    for (const window of [{ after: 0, skip: 0, limit: 1, fromEnd: true }, { after: previous, skip: 0, limit: 100 }, { after: 0, skip: rows.length - 1, limit: 100 }]) {
      await expectPage(seek, 'todos', 1, NO_FILTER, window, rows, after, ' after the insert')
    }
  })

  it('todos: an update that moves a row between filters bumps updates or removals; filtered counts and pages follow', async () => {
    const seek = seekOf(ctx, 'todos')
    // The first row: every later row of its old filter moves to an earlier offset.
    const todo = firstTodo()
    const from = todo.status
    const to = otherStatus(todo)
    const counts = async () => ({ from: await seek.count(1, { status: from }), to: await seek.count(1, { status: to }), all: await seek.count(1, {}) })
    const [before, version] = [await counts(), await seek.version(1)]
    await ctx.writes().transaction((tx) => tx.updateTodo(1, todo.id, { status: to }, WRITE_NOW))
    const after = await seek.version(1)
    expectBumped(version, after, ['updates', 'removals'], `todos of company 1, after updateTodo(${todo.id}, status ${from} → ${to})`)
    expect(await counts(), `todos.seek.count(company 1) by status, after moving to-do ${todo.id} from ${from} to ${to}`).toEqual({
      from: { total: before.from.total - 1, version: after },
      to: { total: before.to.total + 1, version: after },
      all: { total: before.all.total, version: after },
    })
    for (const status of [from, to]) {
      const filter = { name: `status ${status}`, filter: { status } }
      const rows = await listAll(ctx, 'todos', 1, filter.filter)
      for (const window of [{ after: 0, skip: 0, limit: 100 }, { after: todo.id - 1, skip: 1, limit: 3 }, { after: 0, skip: 0, limit: 2, fromEnd: true }]) {
        await expectPage(seek, 'todos', 1, filter, window, rows, after, ' after the update')
      }
    }
  })

  it('users: a new (pending) member appends, and a deleted (declined) membership bumps removals', async () => {
    const seek = seekOf(ctx, 'users')
    const facts = writeFacts(ctx.fixture)
    const pending = facts.pendingMemberships[0]
    if (pending === undefined) throw new Error('conformance suite bug: the fixture has no pending membership')

    // A new user gets an id above every other (issue 21): an append.
    const before = { version: await seek.version(1), count: await seek.count(1, {}) }
    const sent = { email: 'Joining.List@Example.com', first_name: 'Joining', last_name: 'List' }
    const joining = await ctx.writes().transaction((tx) => tx.addPendingMembership(1, [], sent, WRITE_NOW))
    const joined = await seek.version(1)
    expectBumped(before.version, joined, ['appends'], `users of company 1, after adding user ${joining}`)
    expect(await seek.count(1, {}), 'users.seek.count(company 1) after the new member').toEqual({ total: before.count.total + 1, version: joined })
    const rows = await listAll(ctx, 'users', 1, {})
    for (const window of [{ after: 0, skip: 0, limit: 100 }, { after: joining - 1, skip: 0, limit: 2 }]) {
      await expectPage(seek, 'users', 1, NO_FILTER, window, rows, joined, ' after the new member')
    }

    const { companyId, userId } = pending
    const declining = { version: await seek.version(companyId), count: await seek.count(companyId, {}) }
    const removed = await ctx.writes().transaction((tx) => tx.removePendingMembership(companyId, userId))
    if (!removed) throw new Error(`conformance suite bug: no pending membership of user ${userId} in company ${companyId}`)
    const declined = await seek.version(companyId)
    expectBumped(declining.version, declined, ['removals'], `users of company ${companyId}, after deleting the pending membership of user ${userId}`)
    expect(await seek.count(companyId, {}), `users.seek.count(company ${companyId}) after the deletion`).toEqual({ total: declining.count.total - 1, version: declined })
    const left = await listAll(ctx, 'users', companyId, {})
    if (left.some((row) => row.id === userId)) throw new Error(`users of company ${companyId}: list() still has user ${userId} after the deletion`)
    for (const window of [{ after: userId - 1, skip: 0, limit: 1 }, ...WHOLE]) {
      await expectPage(seek, 'users', companyId, NO_FILTER, window, left, declined, ' after the deletion')
    }
  })

  it("users: a person's change bumps updates or removals in every company that lists them", async () => {
    const seek = seekOf(ctx, 'users')
    const facts = writeFacts(ctx.fixture)
    const shared = facts.sharedUser
    const state = async (companyId: number) => ({ version: await seek.version(companyId), active: await seek.count(companyId, { active: true }) })
    const before = [await state(1), await state(2)]
    await ctx.writes().transaction((tx) => tx.setUserActive(1, shared, false, WRITE_NOW))
    for (const [index, companyId] of [1, 2].entries()) {
      const was = before[index] as Awaited<ReturnType<typeof state>>
      const after = await seek.version(companyId)
      expectBumped(was.version, after, ['updates', 'removals'], `users of company ${companyId}, after setUserActive(${shared}, false)`)
      expect(await seek.count(companyId, { active: true }), `users.seek.count(company ${companyId}, active) after deactivating user ${shared}`).toEqual({
        total: was.active.total - 1,
        version: after,
      })
    }
  })

  it('a rolled-back write leaves the version, the count and the pages as they were', async () => {
    const seek = seekOf(ctx, 'todos')
    const todo = firstTodo()
    const state = async () => ({ version: await seek.version(1), count: await seek.count(1, {}), tail: await seek.page(1, {}, { after: 0, skip: 0, limit: 3, fromEnd: true }) })
    const before = await state()
    const outcome = await ctx
      .writes()
      .transaction(async (tx) => {
        await tx.insertTodo(1, fieldsOf(todo), WRITE_NOW)
        await tx.updateTodo(1, todo.id, { status: otherStatus(todo) }, WRITE_NOW)
        throw new DeliberateRollback()
      })
      .then(
        () => 'resolved',
        (error: unknown) => (error instanceof DeliberateRollback ? 'rolled back' : String(error)),
      )
    expect(outcome, 'the transaction that threw DeliberateRollback').toBe('rolled back')
    expect(await state(), 'todos.seek of company 1 after an insert and an update that rolled back').toEqual(before)
  })
}
