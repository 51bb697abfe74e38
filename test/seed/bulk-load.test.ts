import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadSqliteDatasetStream } from '../../adapters/sqlite/sqlite-bulk-load.js'
import { openSqliteAdapter, sqliteCodec, type SqliteAdapter } from '../../adapters/sqlite/index.js'
import type { DatasetChunk } from '../../src/ports/dataset.js'
import { generateDataset, seedRowCount, streamDataset } from '../../src/seed/generate.js'
import { seedSqliteDatabase } from '../../src/seed/sqlite-seed.js'

// The bulk loader behind `seed` against the loader every other test uses: same rows, same
// schema afterwards, all or nothing.
const SCALE = 97

let directory: string
const opened: SqliteAdapter[] = []

async function open(name: string): Promise<SqliteAdapter> {
  const adapter = await openSqliteAdapter({ filename: join(directory, name), readWorkers: 0 })
  opened.push(adapter)
  return adapter
}

/**
 * Every row of every table of ours (the list-version counters included) in insertion order,
 * the AUTOINCREMENT high-water marks, and every index and trigger definition.
 */
function snapshot(adapter: SqliteAdapter): { rows: Record<string, unknown[]>; sequences: unknown[]; schema: unknown[] } {
  const db = adapter.database
  const tables = db.prepare(`select name from sqlite_master where type = 'table' and name like 'wfa_%' and name not like 'wfa_migration%' order by name`).pluck().all() as string[]
  const rows: Record<string, unknown[]> = {}
  for (const table of tables) rows[table] = db.prepare(`select * from "${table}" order by rowid`).all()
  const sequences = db.prepare(`select name, seq from sqlite_sequence order by name`).all()
  const schema = db.prepare(`select type, name, tbl_name, sql from sqlite_master where type in ('index', 'trigger') order by name`).all()
  return { rows, sequences, schema }
}

beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), 'wfa-bulk-load-'))
})
afterAll(async () => {
  for (const adapter of opened) await adapter.close()
  rmSync(directory, { recursive: true, force: true })
})

describe('loadSqliteDatasetStream', () => {
  it('stores exactly what loadDataset stores, and leaves the same indexes', async () => {
    const reference = await open('reference.db')
    await reference.loadDataset(generateDataset({ scale: SCALE }))
    const bulk = await open('bulk.db')
    let rows = 0
    const built: string[] = []
    await loadSqliteDatasetStream(bulk.database, sqliteCodec, streamDataset({ scale: SCALE, chunkRows: 13 }), {
      rowsLoaded: (count) => (rows += count),
      indexBuilt: (name) => built.push(name),
    })
    expect(snapshot(bulk)).toEqual(snapshot(reference))
    expect(rows).toBe(Object.values(generateDataset({ scale: SCALE })).reduce((sum, table) => sum + table.length, 0))
    expect(built.length).toBeGreaterThan(30)
  })

  it('counts list versions as the row triggers would when older rows already sit past the new ones', async () => {
    // A shift of company 2 with a larger id than any seed shift: every seed shift of company 2
    // then arrives before an existing row, which the insert trigger counts as a removal.
    const late = `insert into wfa_shifts (id, company_id, employee_id, status, starts_at, ends_at, break_minutes, created_at, updated_at) values (9999999, 2, 1, 'planned', 0, 1, 0, 0, 0)`
    const reference = await open('reference-late.db')
    reference.database.exec(late)
    await reference.loadDataset(generateDataset({ scale: SCALE }))
    const bulk = await open('bulk-late.db')
    bulk.database.exec(late)
    await loadSqliteDatasetStream(bulk.database, sqliteCodec, streamDataset({ scale: SCALE }))
    expect(snapshot(bulk)).toEqual(snapshot(reference))
    expect(bulk.database.prepare(`select removals from wfa_list_versions where company_id = 2 and resource = 'shifts'`).pluck().get()).toBe(45)
  })

  it('is what seed runs on two threads: the same rows, counters, sequences, indexes and triggers', async () => {
    const reference = await open('reference-parallel.db')
    await reference.loadDataset(generateDataset({ scale: SCALE }))
    const parallel = await open('parallel.db')
    let rows = 0
    const stages: string[] = []
    await seedSqliteDatabase(parallel.database, { scale: SCALE, parallel: true }, { rowsLoaded: (count) => (rows += count), stage: (label) => stages.push(label) })
    expect(snapshot(parallel)).toEqual(snapshot(reference))
    expect(rows).toBe(seedRowCount({ scale: SCALE }))
    // The worker's tables were copied in, not loaded here.
    expect(stages).toContain('copying wfa_todos')
    expect(parallel.database.prepare(`pragma database_list`).all()).toHaveLength(1)
    expect(parallel.database.pragma('journal_mode', { simple: true })).toBe('wal')
  })

  it('on two threads, writes nothing when the main thread fails, and leaves no worker file or attachment', async () => {
    const adapter = await open('parallel-failed.db')
    // A person with the seed's first email: the main thread's load of wfa_users fails on it.
    const [first] = generateDataset({ scale: 40 }).people
    adapter.database
      .prepare(`insert into wfa_users (id, email, email_lower, first_name, last_name, active, password_hash, created_at, updated_at) values (9999999, ?, ?, 'A', 'B', 1, 'x', 0, 0)`)
      .run(first!.email, first!.email.toLowerCase())
    const before = snapshot(adapter)
    const workerFiles = () => readdirSync(tmpdir()).filter((name) => name.startsWith('wfa-parallel-load-'))
    const filesBefore = workerFiles()
    await expect(seedSqliteDatabase(adapter.database, { scale: SCALE, parallel: true })).rejects.toThrow(/UNIQUE constraint failed: wfa_users.email_lower/)
    expect(snapshot(adapter)).toEqual(before)
    expect(adapter.database.inTransaction).toBe(false)
    expect(adapter.database.prepare(`pragma database_list`).all()).toHaveLength(1)
    expect(workerFiles().filter((name) => !filesBefore.includes(name))).toEqual([])
  })

  it('leaves the database in WAL mode with its usual page cache', async () => {
    const adapter = await open('modes.db')
    const cache = adapter.database.pragma('cache_size', { simple: true })
    await loadSqliteDatasetStream(adapter.database, sqliteCodec, streamDataset({ scale: 40 }))
    expect(adapter.database.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(adapter.database.pragma('cache_size', { simple: true })).toBe(cache)
  })

  it('stays in WAL when another connection is reading, and that reader keeps its snapshot until the commit', async () => {
    const adapter = await open('shared.db')
    adapter.database.pragma('busy_timeout = 50')
    const reader = new Database(join(directory, 'shared.db'), { readonly: true })
    try {
      reader.exec('BEGIN')
      const companies = reader.prepare('select count(*) from wfa_companies').pluck()
      expect(companies.get()).toBe(0)
      await loadSqliteDatasetStream(adapter.database, sqliteCodec, streamDataset({ scale: 40 }))
      expect(adapter.database.pragma('journal_mode', { simple: true })).toBe('wal')
      expect(companies.get()).toBe(0)
      reader.exec('COMMIT')
      expect(companies.get()).toBe(3)
    } finally {
      reader.close()
    }
  })

  it('writes nothing when the stream fails half way, and keeps every index', async () => {
    const adapter = await open('failed.db')
    const before = snapshot(adapter)
    function* failing(): Generator<DatasetChunk> {
      for (const chunk of streamDataset({ scale: SCALE, chunkRows: 50 })) {
        if (chunk.table === 'shifts') throw new Error('the generator broke')
        yield chunk
      }
    }
    await expect(loadSqliteDatasetStream(adapter.database, sqliteCodec, failing())).rejects.toThrow('the generator broke')
    expect(snapshot(adapter)).toEqual(before)
    expect(adapter.database.inTransaction).toBe(false)
  })

  it('refuses rows that break a constraint, all or nothing, like loadDataset', async () => {
    const adapter = await open('duplicate.db')
    const before = snapshot(adapter)
    function* twice(): Generator<DatasetChunk> {
      for (const chunk of streamDataset({ scale: 40 })) {
        yield chunk
        if (chunk.table === 'people') yield chunk
      }
    }
    await expect(loadSqliteDatasetStream(adapter.database, sqliteCodec, twice())).rejects.toThrow(/UNIQUE constraint failed/)
    expect(snapshot(adapter)).toEqual(before)
  })
})
