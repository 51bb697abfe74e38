import Database from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, it } from 'vitest'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { sqliteCodec, sqliteColumnTypes } from '../../adapters/sqlite/sqlite-codec.js'
import { expectMigrated, insertOldShape, migrateToBefore } from './user-id-migration.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

it('migration 0009 on SQLite: a shared person keeps their id in their first company, gets a fresh one in the next, and references follow', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wfa-user-ids-'))
  dirs.push(dir)
  const filename = join(dir, 'old.db')
  const old = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(filename) }) })
  try {
    await migrateToBefore(old, sqliteColumnTypes)
    await insertOldShape(old, sqliteCodec)
  } finally {
    await old.destroy()
  }
  // Opening the adapter migrates to the latest.
  const adapter = await openSqliteAdapter({ filename })
  try {
    await expectMigrated(adapter.db, sqliteCodec, adapter)
  } finally {
    await adapter.close()
  }
})
