import Database from 'better-sqlite3'
import { Kysely, Migrator, SqliteDialect } from 'kysely'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { createMigrations } from '../../adapters/sql/migrations/index.js'
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE } from '../../adapters/sql/schema.js'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { sqliteCodec, sqliteColumnTypes } from '../../adapters/sqlite/sqlite-codec.js'
import { changeEvent } from '../../src/conformance/webhook-facts.js'
import { changeEventRow } from '../../adapters/sql/webhook-outbox.js'

// Migration 0011 (the events feed) over a database that already holds events: each event with a
// body is queued, so the company's first feed reads give them positions in the order recorded.

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

it('migration 0011 on SQLite: events recorded before it appear in the feed, in recording order, each company its own', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wfa-feed-migration-'))
  dirs.push(dir)
  const filename = join(dir, 'old.db')
  const old = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(filename) }) })
  const events = [changeEvent('before 1', 1, 'todos.created', 1), changeEvent('before 2', 2, 'todos.created', 2), changeEvent('before 3', 1, 'todos.updated', 1)]
  try {
    const migrations = createMigrations(sqliteColumnTypes)
    const migrator = new Migrator({ db: old, provider: { getMigrations: async () => migrations }, migrationTableName: MIGRATION_TABLE, migrationLockTableName: MIGRATION_LOCK_TABLE })
    const { error } = await migrator.migrateTo('2026_11_26_0010_list_row_counts')
    if (error !== undefined) throw error
    await old.insertInto('wfa_change_events').values(events.map((event) => changeEventRow(sqliteCodec, event))).execute()
    // An event of the first schema, before webhooks: no body, so nothing to show.
    await old.insertInto('wfa_change_events').values({ company_id: 1, type: 'todos.created', resource_id: 3, occurred_at: 0 }).execute()
  } finally {
    await old.destroy()
  }
  const adapter = await openSqliteAdapter({ filename })
  try {
    const read = async (company: number) => {
      const page = await adapter.webhooks.readFeed(company, { types: ['todos.created', 'todos.updated'], limit: 10, scan: 100 })
      if (page.expired) throw new Error('expired')
      return page.events.map((event) => [event.position, (JSON.parse(event.payload) as { id: string }).id])
    }
    expect(await read(1)).toEqual([
      [1, events[0]?.id],
      [2, events[2]?.id],
    ])
    expect(await read(2)).toEqual([[1, events[1]?.id]])
    expect(await adapter.db.selectFrom('wfa_event_queue').selectAll().execute()).toEqual([])
  } finally {
    await adapter.close()
  }
})
