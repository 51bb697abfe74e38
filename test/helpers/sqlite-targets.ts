import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteAdapter, type SqliteAdapter } from '../../adapters/sqlite/index.js'

/** An adapter under test, and how to dispose of it (its temp directory too). */
export interface OpenedSqlite {
  adapter: SqliteAdapter
  /** The database file, or `:memory:`. */
  filename: string
  dispose(): Promise<void>
}

export interface SqliteTarget {
  name: string
  open(): Promise<OpenedSqlite>
}

/** Opens a SQLite adapter over a fresh file in its own temp directory (WAL, busy timeout). */
export async function openSqliteFile(): Promise<OpenedSqlite> {
  const directory = mkdtempSync(join(tmpdir(), 'wfa-sql-writes-'))
  const filename = join(directory, 'workforce.db')
  const adapter = await openSqliteAdapter({ filename })
  return {
    adapter,
    filename,
    async dispose() {
      await adapter.close()
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

/** The two ways a host runs SQLite: `describe.each(SQLITE_TARGETS)`. */
export const SQLITE_TARGETS: SqliteTarget[] = [
  { name: 'file', open: openSqliteFile },
  {
    name: ':memory:',
    async open() {
      const adapter = await openSqliteAdapter({ filename: ':memory:' })
      return { adapter, filename: ':memory:', dispose: () => adapter.close() }
    },
  },
]
