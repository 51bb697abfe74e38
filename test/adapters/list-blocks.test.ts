import type { Kysely } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import type { SeekableReader } from '../../src/ports/storage.js'
import { generateDataset } from '../../src/seed/generate.js'
import { mulberry32 } from '../../src/seed/prng.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'

/**
 * Unfiltered pages are found through `wfa_list_blocks` (migration 0010: each company's rows
 * counted per block of 1,024 ids, kept by the list-version triggers). Whatever rows the company
 * gains, loses or moves, in whichever block, every window of the seek port — after any row, any
 * skip, from the end — must be exactly the window of the plain list. The plain list (`list`,
 * COUNT and OFFSET) is the oracle.
 */
interface Adapter {
  db: Kysely<any>
  storage: { todos: { list: Function; seek?: SeekableReader<{ id: number }, object> } }
  loadDataset(dataset: ReturnType<typeof generateDataset>): Promise<void>
  close(): Promise<void>
}

const LIMIT = 7

async function windowsMatch(adapter: Adapter, companyId: number, random: () => number): Promise<string[]> {
  const seek = adapter.storage.todos.seek as SeekableReader<{ id: number }, object>
  const all = ((await adapter.storage.todos.list(companyId, {}, { limit: 100_000, offset: 0 })) as { rows: { id: number }[] }).rows.map((row) => row.id)
  const wrong: string[] = []
  const { total } = await seek.count(companyId, {})
  if (total !== all.length) wrong.push(`total ${total}, expected ${all.length}`)
  const skips = [0, 1, LIMIT, 1_023, 1_024, 1_025, all.length - 1, all.length, all.length + 3, ...Array.from({ length: 12 }, () => Math.floor(random() * (all.length + 5)))]
  const afters = [0, ...Array.from({ length: 6 }, () => all[Math.floor(random() * all.length)] ?? 0), (all[all.length - 1] ?? 0) + 1]
  for (const after of afters) {
    for (const skip of skips) {
      const page = (await seek.page(companyId, {}, { after, skip, limit: LIMIT })).rows.map((row) => row.id)
      const start = all.findIndex((id) => id > after)
      const expected = start < 0 ? [] : all.slice(start + skip, start + skip + LIMIT)
      if (JSON.stringify(page) !== JSON.stringify(expected)) wrong.push(`after ${after} skip ${skip}: ${JSON.stringify(page)} ≠ ${JSON.stringify(expected)}`)
    }
  }
  for (const skip of skips) {
    const page = (await seek.page(companyId, {}, { after: 0, skip, limit: LIMIT, fromEnd: true })).rows.map((row) => row.id)
    const end = all.length - skip
    const expected = end <= 0 ? [] : all.slice(Math.max(0, end - LIMIT), end)
    if (JSON.stringify(page) !== JSON.stringify(expected)) wrong.push(`from the end, skip ${skip}: ${JSON.stringify(page)} ≠ ${JSON.stringify(expected)}`)
  }
  return wrong
}

/** Deletes a run of ids across block edges, moves some rows to the other company, inserts early and late ids. */
async function churn(db: Kysely<any>, random: () => number): Promise<void> {
  const ids = (await db.selectFrom('wfa_todos').select('id').where('company_id', '=', 1).orderBy('id').execute()).map((row) => Number(row.id))
  const from = ids[Math.floor(random() * (ids.length - 1_500))] as number
  await db.deleteFrom('wfa_todos').where('company_id', '=', 1).where('id', '>=', from).where('id', '<', from + 1_300).execute()
  const moved = ids.filter(() => random() < 0.02)
  await db.updateTable('wfa_todos').set({ company_id: 2 }).where('id', 'in', moved).execute()
  // Early ids (before existing rows, in blocks that still hold rows) and a far one (a block of its own).
  const read = await db.selectFrom('wfa_todos').selectAll().where('company_id', '=', 1).orderBy('id').limit(1).executeTakeFirstOrThrow()
  // Postgres hands JSON columns back parsed: write them back as text.
  const template = Object.fromEntries(
    Object.entries(read).map(([name, value]) => [name, value !== null && typeof value === 'object' && !(value instanceof Date) ? JSON.stringify(value) : value]),
  )
  for (const id of [from + 5, from + 700, 9_000_000]) await db.insertInto('wfa_todos').values({ ...template, id }).execute()
}

function suite(open: () => Promise<Adapter>) {
  let adapter: Adapter | undefined
  afterEach(async () => {
    await adapter?.close()
    adapter = undefined
  })

  it('every window of an unfiltered list, after any row, at any skip and from the end, is the plain list’s window, before and after deletes, moves and early inserts across blocks', async () => {
    adapter = await open()
    await adapter.loadDataset(generateDataset({ scale: 4_000 }))
    const random = mulberry32(1_024)
    expect(await windowsMatch(adapter, 1, random)).toEqual([])
    await churn(adapter.db, random)
    expect(await windowsMatch(adapter, 1, random)).toEqual([])
    expect(await windowsMatch(adapter, 2, random)).toEqual([])
  })
}

describe('unfiltered pages through the block counts, SQLite', () => {
  suite(async () => (await openSqliteAdapter({ filename: ':memory:' })) as unknown as Adapter)
})

describePostgres('unfiltered pages through the block counts, Postgres', () => {
  const database = useTestDatabase()
  suite(async () => (await openPostgresAdapter({ connectionString: database.current.url })) as unknown as Adapter)
})
