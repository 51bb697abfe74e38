import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadSqliteDatasetStream } from '../../adapters/sql/sql-fixtures.js'
import { openSqliteAdapter, sqliteCodec, type SqliteAdapter } from '../../adapters/sqlite/index.js'
import { generateDataset, streamDataset, type DatasetChunk } from '../../src/seed/generate.js'

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

/** Every row of every table of ours, in key order, and every index definition. */
function snapshot(adapter: SqliteAdapter): { rows: Record<string, unknown[]>; indexes: unknown[] } {
  const db = adapter.database
  const tables = db.prepare(`select name from sqlite_master where type = 'table' and name like 'wfa_%' and name not like 'wfa_migration%' order by name`).pluck().all() as string[]
  const rows: Record<string, unknown[]> = {}
  for (const table of tables) rows[table] = db.prepare(`select * from "${table}" order by rowid`).all()
  const indexes = db.prepare(`select name, tbl_name, sql from sqlite_master where type = 'index' order by name`).all()
  return { rows, indexes }
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
