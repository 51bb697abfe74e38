import fc from 'fast-check'
import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory/index.js'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { openSqliteAdapter, type SqliteAdapter } from '../../adapters/sqlite/index.js'
import { ListPages } from '../../src/api/list-pages.js'
import type { Dataset } from '../../src/ports/dataset.js'
import { SHIFT_STATUSES, type ShiftRecord } from '../../src/ports/records.js'
import type { ShiftFilter, Storage } from '../../src/ports/storage.js'
import { generateDataset } from '../../src/seed/generate.js'
import { build, type TestApp } from '../helpers/build.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'

/**
 * Lists served through `ListPages` (cached totals, pages sought from remembered boundaries, pages
 * counted from the end) must equal, after any interleaving of changes, what a fresh uncached
 * `list()` answers: the ids of the page and the exact total. Changes are made in plain SQL, as a
 * host writing its own tables would, so the triggers are what keeps the versions honest.
 *
 * The memory adapter has no `seek`: the list route falls back to `list()` on every request. The
 * same scripts run against it through the route, with the changes made straight in its arrays
 * (as a host that passes its own `Dataset` would), so nothing between the route and the data
 * may remember an answer either.
 */

const COMPANY = 1
/** Rows per run: enough pages at `per_page` 1–7 that boundaries, jumps and the end all matter. */
const SCALE = 60

type Change =
  | { kind: 'append'; from: number }
  | { kind: 'status'; row: number; status: (typeof SHIFT_STATUSES)[number]; touch: boolean }
  | { kind: 'delete'; row: number }
  | { kind: 'reinsert' }
  | { kind: 'move'; row: number }
type Read = { kind: 'read'; filter: number; page: number; perPage: number }
type Step = Change | Read

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('read' as const), filter: fc.nat(4), page: fc.integer({ min: 1, max: 40 }), perPage: fc.integer({ min: 1, max: 7 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('append' as const), from: fc.nat(SCALE) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('status' as const), row: fc.nat(SCALE), status: fc.constantFrom(...SHIFT_STATUSES), touch: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), row: fc.nat(SCALE) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reinsert' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('move' as const), row: fc.nat(SCALE) }) },
)
/** A walk: many reads of consecutive pages, then the same pages again, as a syncing client does. */
const walk: fc.Arbitrary<Step[]> = fc.tuple(fc.nat(4), fc.integer({ min: 1, max: 7 })).map(([filter, perPage]) =>
  Array.from({ length: 2 * Math.ceil(SCALE / perPage) + 2 }, (_, index) => ({ kind: 'read' as const, filter, perPage, page: (index % (Math.ceil(SCALE / perPage) + 1)) + 1 })),
)
const script = fc.array(fc.oneof({ weight: 8, arbitrary: step.map((one) => [one]) }, { weight: 1, arbitrary: walk }), { minLength: 5, maxLength: 30 }).map((parts) => parts.flat())

type Status = (typeof SHIFT_STATUSES)[number]

/**
 * A backend under test: how company 1's shifts change, as a host would change them, and how
 * the plugin serves a page of them.
 */
interface Target {
  storage: Storage
  /** The company's shift ids now, in order: what rows a change picks among. */
  shiftIds(): Promise<number[]>
  /** A copy of `source` after every existing row. */
  append(source: number): Promise<void>
  /** A touch also moves the row into every updated_since window: the newest updated_at there is. */
  setStatus(row: number, status: Status, touch: boolean): Promise<void>
  remove(row: number): Promise<void>
  /** A copy of `source` under an id freed by a delete: before existing rows, not an append. */
  insertAt(id: number, source: number): Promise<void>
  /** To company 2. */
  move(row: number): Promise<void>
  /** The page as the plugin serves it. */
  served(filter: ShiftFilter, read: Read): Promise<{ ids: number[]; total: number }>
}

const COLUMNS = 'company_id, employee_id, project_id, status, starts_at, ends_at, break_minutes, internal_notes, created_at, updated_at'

/** Changes in plain SQL on `table` (schema-qualified where needed); pages from `ListPages` over the reader's `seek`. */
function sqlTarget(db: Kysely<any>, storage: Storage, table: string, pages: ListPages): Target {
  const raw = sql.raw(table)
  const seek = storage.shifts.seek
  if (seek === undefined) throw new Error('this adapter has no seek capability')
  return {
    storage,
    async shiftIds() {
      const { rows } = await sql<{ id: number | string }>`select id from ${raw} where company_id = ${COMPANY} order by id`.execute(db)
      return rows.map((row) => Number(row.id))
    },
    async append(source) {
      await sql`insert into ${raw} (${sql.raw(COLUMNS)}) select ${sql.raw(COLUMNS)} from ${raw} where id = ${source}`.execute(db)
    },
    async setStatus(row, status, touch) {
      const updated = touch ? sql`(select max(updated_at) from ${raw})` : sql`updated_at`
      await sql`update ${raw} set status = ${status}, updated_at = ${updated} where id = ${row}`.execute(db)
    },
    async remove(row) {
      await sql`delete from ${raw} where id = ${row}`.execute(db)
    },
    async insertAt(id, source) {
      await sql`insert into ${raw} (id, ${sql.raw(COLUMNS)}) select ${id}, ${sql.raw(COLUMNS)} from ${raw} where id = ${source}`.execute(db)
    },
    async move(row) {
      await sql`update ${raw} set company_id = 2 where id = ${row}`.execute(db)
    },
    async served(filter, read) {
      const page = await pages.list('shifts', seek, COMPANY, filter, { limit: read.perPage, offset: (read.page - 1) * read.perPage })
      return { ids: page.rows.map((row) => row.id), total: page.total }
    },
  }
}

/** Changes straight in the memory adapter's arrays; pages from `GET /v1/shifts`, the route's fallback to `list()`. */
function memoryTarget(adapter: MemoryAdapter, t: TestApp, key: string): Target {
  const rows = () => adapter.storage.data.shifts
  const row = (id: number) => {
    const found = rows().find((candidate) => candidate.id === id)
    if (found === undefined) throw new Error(`no shift ${id}`)
    return found
  }
  const copy = (source: number, id: number): Dataset['shifts'][number] => ({ ...structuredClone(row(source)), id })
  return {
    storage: adapter.storage,
    async shiftIds() {
      return rows()
        .filter((shift) => shift.company_id === COMPANY)
        .map((shift) => shift.id)
        .sort((a, b) => a - b)
    },
    async append(source) {
      rows().push(copy(source, Math.max(...rows().map((shift) => shift.id)) + 1))
    },
    async setStatus(id, status, touch) {
      const shift = row(id)
      shift.status = status
      if (touch) shift.updated_at = new Date(Math.max(...rows().map((candidate) => candidate.updated_at.getTime())))
    },
    async remove(id) {
      rows().splice(rows().indexOf(row(id)), 1)
    },
    async insertAt(id, source) {
      rows().push(copy(source, id))
    },
    async move(id) {
      row(id).company_id = 2
    },
    async served(filter, read) {
      const query = new URLSearchParams({ page: String(read.page), per_page: String(read.perPage) })
      if (filter.status !== undefined) query.set('status', filter.status)
      if (filter.updatedSince !== undefined) query.set('updated_since', filter.updatedSince.toISOString())
      if (filter.employeeId !== undefined) query.set('employee_id', String(filter.employeeId))
      const response = await t.get(`/v1/shifts?${query.toString()}`, key)
      expect(response.statusCode, response.body).toBe(200)
      const body = response.json() as { data: Array<{ id: number }>; pagination: { total: number } }
      return { ids: body.data.map((shift) => shift.id), total: body.pagination.total }
    },
  }
}

async function apply(target: Target, change: Change, deleted: number[]): Promise<void> {
  const ids = await target.shiftIds()
  const pick = (index: number) => ids[index % Math.max(1, ids.length)]
  switch (change.kind) {
    case 'append': {
      const source = pick(change.from)
      if (source !== undefined) await target.append(source)
      return
    }
    case 'status': {
      const row = pick(change.row)
      if (row !== undefined) await target.setStatus(row, change.status, change.touch)
      return
    }
    case 'delete': {
      const row = pick(change.row)
      if (row === undefined) return
      await target.remove(row)
      deleted.push(row)
      return
    }
    case 'reinsert': {
      const id = deleted.shift()
      const source = ids[0]
      if (id !== undefined && source !== undefined) await target.insertAt(id, source)
      return
    }
    case 'move': {
      const row = pick(change.row)
      if (row !== undefined) await target.move(row)
    }
  }
}

function filterOf(index: number, sinceDay: Date): ShiftFilter {
  switch (index) {
    case 1:
      return { status: 'scheduled' }
    case 2:
      return { updatedSince: sinceDay }
    case 3:
      return { status: 'completed', updatedSince: sinceDay }
    case 4:
      return { employeeId: 1 }
    default:
      return {}
  }
}

/** Runs a script, checking every read the plugin serves against a fresh `list()`. */
async function check(target: Target, steps: readonly Step[]): Promise<void> {
  const reader = target.storage.shifts
  const deleted: number[] = []
  const since = (await reader.list(COMPANY, {}, { limit: 100, offset: 0 })).rows.map((row) => row.updated_at.getTime()).sort((a, b) => a - b)
  const sinceDay = new Date(since[Math.floor(since.length / 2)] ?? 0)
  for (const [index, one] of steps.entries()) {
    if (one.kind !== 'read') {
      await apply(target, one, deleted)
      continue
    }
    const filter = filterOf(one.filter, sinceDay)
    const served = await target.served(filter, one)
    const fresh = await reader.list(COMPANY, filter, { limit: one.perPage, offset: (one.page - 1) * one.perPage })
    const ids = (rows: ShiftRecord[]) => rows.map((row) => row.id)
    expect({ step: index, ...served }).toEqual({ step: index, ids: ids(fresh.rows), total: fresh.total })
  }
}

describe('lists served by ListPages equal a fresh computation, on SQLite', () => {
  it('after any interleaving of appends, updates in and out of filters, deletes, early inserts and moves', async () => {
    await fc.assert(
      fc.asyncProperty(script, async (steps) => {
        const adapter: SqliteAdapter = await openSqliteAdapter({ filename: ':memory:' })
        try {
          await adapter.loadDataset(generateDataset({ scale: SCALE }))
          await check(sqlTarget(adapter.db, adapter.storage, 'wfa_shifts', new ListPages()), steps)
        } finally {
          await adapter.close()
        }
      }),
      { numRuns: 60, seed: 1313 },
    )
  })

  it('counts and pages at the version of their own snapshot', async () => {
    const adapter = await openSqliteAdapter({ filename: ':memory:' })
    try {
      await adapter.loadDataset(generateDataset({ scale: SCALE }))
      const seek = adapter.storage.shifts.seek
      const before = await seek?.count(COMPANY, {})
      await sql`update wfa_shifts set status = 'cancelled' where id = 3`.execute(adapter.db)
      const after = await seek?.count(COMPANY, {})
      expect(after?.total).toBe(before?.total)
      expect(after?.version).toEqual({ ...before?.version, updates: (before?.version.updates ?? 0) + 1 })
      const page = await seek?.page(COMPANY, {}, { after: 0, skip: 0, limit: 3, fromEnd: true })
      expect(page?.rows.map((row) => row.id)).toEqual([SCALE - 2, SCALE - 1, SCALE])
      expect(page?.version).toEqual(after?.version)
    } finally {
      await adapter.close()
    }
  })
})

describe('lists served without seek equal a fresh computation, on memory (the route falls back to list())', () => {
  const dataset = generateDataset({ scale: SCALE })
  const adapter = createMemoryAdapter()
  let t: TestApp
  let key: string
  beforeAll(async () => {
    // One app for every run, as a long-lived server: each run reloads the data under it.
    // Loaded once here as well: a key is made only for a company the storage holds.
    t = await build({ adapter: { name: 'memory', open: async () => adapter }, dataset, options: { rateLimit: false } })
    key = await t.keyFor(COMPANY)
  })
  afterAll(async () => {
    await t?.close()
  })

  it('after any interleaving of appends, updates in and out of filters, deletes, early inserts and moves in its arrays', async () => {
    expect(adapter.storage.shifts.seek, 'the memory reader offers no seek, so the route takes the fallback').toBeUndefined()
    await fc.assert(
      fc.asyncProperty(script, async (steps) => {
        await adapter.loadDataset(dataset)
        await check(memoryTarget(adapter, t, key), steps)
      }),
      { numRuns: 60, seed: 1313 },
    )
  })
})

describePostgres('lists served by ListPages equal a fresh computation, on Postgres', () => {
  const database = useTestDatabase()
  let first: PostgresAdapter
  let second: PostgresAdapter
  beforeAll(async () => {
    first = await openPostgresAdapter({ connectionString: database.current.url })
    await first.loadDataset(generateDataset({ scale: SCALE }))
    second = await openPostgresAdapter({ connectionString: database.current.url })
  })
  afterAll(async () => {
    await first?.close()
    await second?.close()
  })

  it('after any interleaving of changes (statement-level triggers), one instance writing and reading', async () => {
    const pages = new ListPages()
    await fc.assert(
      fc.asyncProperty(script, async (steps) => {
        await check(sqlTarget(first.db, first.storage, 'wfa_shifts', pages), steps)
      }),
      { numRuns: 15, seed: 1313 },
    )
  })

  it("two instances: a write on one is in the other's next total and pages", async () => {
    const pagesOfSecond = new ListPages()
    const seek = second.storage.shifts.seek
    if (seek === undefined) throw new Error('no seek capability')
    const [victim] = (await second.storage.shifts.list(COMPANY, {}, { limit: 1, offset: 0 })).rows
    if (victim === undefined) throw new Error('company 1 has no shift')
    const filter: ShiftFilter = { status: victim.status }
    const windows = [0, 3, 6].map((offset) => ({ limit: 3, offset }))
    // The second instance remembers the total and the boundaries of three pages.
    for (const window of windows) await pagesOfSecond.list('shifts', seek, COMPANY, filter, window)
    // The first instance moves the list's first row out of the filter: every later row shifts.
    const other = SHIFT_STATUSES.find((status) => status !== victim.status) as ShiftRecord['status']
    await sql`update wfa_shifts set status = ${other} where id = ${victim.id}`.execute(first.db)
    for (const window of [...windows].reverse()) {
      const fast = await pagesOfSecond.list('shifts', seek, COMPANY, filter, window)
      const fresh = await second.storage.shifts.list(COMPANY, filter, window)
      expect(fast.total).toBe(fresh.total)
      expect(fast.rows.map((row) => row.id)).toEqual(fresh.rows.map((row) => row.id))
      expect(fast.rows.map((row) => row.id)).not.toContain(victim.id)
    }
  })
})
