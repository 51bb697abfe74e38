import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { cachedForKysely } from '../../adapters/sqlite/sqlite-kysely-database.js'
import { STATEMENT_CACHE_MAX } from '../../adapters/sqlite/sqlite-statement-cache.js'
import { StorageUnavailable } from '../../src/ports/errors.js'

describe('cachedForKysely: the database Kysely sees, one statement per SQL text', () => {
  let database: Database.Database
  let prepared: string[]
  beforeEach(() => {
    database = new Database(':memory:')
    database.exec('create table t (id integer primary key, name text not null)')
    prepared = []
    const prepare = database.prepare.bind(database)
    vi.spyOn(database, 'prepare').mockImplementation(((text: string) => {
      prepared.push(text)
      return prepare(text)
    }) as typeof database.prepare)
  })
  afterEach(() => {
    if (database.open) database.close()
  })

  it('hands back the same statement for the same text, prepared once', () => {
    const wrapped = cachedForKysely(database)
    const first = wrapped.prepare('select name from t where id = ?')
    expect(wrapped.prepare('select name from t where id = ?')).toBe(first)
    expect(wrapped.prepare('select id from t')).not.toBe(first)
    expect(prepared).toEqual(['select name from t where id = ?', 'select id from t'])
    expect(wrapped.cachedStatements).toBe(2)
  })

  it('holds at most max statements: the least recently used is dropped and prepared again', () => {
    const wrapped = cachedForKysely(database, 2)
    wrapped.prepare('select 1')
    wrapped.prepare('select 2')
    wrapped.prepare('select 1')
    wrapped.prepare('select 3')
    expect(wrapped.cachedStatements).toBe(2)
    wrapped.prepare('select 1')
    wrapped.prepare('select 2')
    expect(prepared).toEqual(['select 1', 'select 2', 'select 3', 'select 2'])
    expect(wrapped.cachedStatements).toBe(2)
    expect(cachedForKysely(database).prepare('select 1')).toBeDefined()
    expect(STATEMENT_CACHE_MAX).toBeGreaterThan(2)
  })

  it("serves Kysely's inserts, updates and selects without preparing their text again", async () => {
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: cachedForKysely(database) }) })
    for (let i = 1; i <= 5; i += 1) {
      await db.insertInto('t').values({ id: i, name: `n${i}` }).execute()
      await db.updateTable('t').set({ name: `m${i}` }).where('id', '=', i).execute()
    }
    const rows = []
    for (let i = 1; i <= 5; i += 1) rows.push(await db.selectFrom('t').select('name').where('id', '=', i).executeTakeFirstOrThrow())
    // Each call binds its own parameters: a reused statement keeps none of the last call's.
    expect(rows.map((row) => row.name)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5'])
    const inserted = await db.insertInto('t').values({ id: 6, name: 'n6' }).executeTakeFirstOrThrow()
    expect(inserted.insertId).toBe(6n)
    // Three texts (insert, update, select), each prepared once, for 16 queries.
    expect(prepared).toHaveLength(3)
    await db.destroy()
  })

  it('iterates on a statement of its own, so the same text runs while an iterator is open', () => {
    database.exec("insert into t (id, name) values (1, 'a'), (2, 'b')")
    const wrapped = cachedForKysely(database)
    const text = 'select id, name from t order by id'
    expect(wrapped.prepare(text).all([])).toHaveLength(2)
    const rows = wrapped.prepare(text).iterate([])
    expect(rows.next().value).toEqual({ id: 1, name: 'a' })
    // Had the iterator taken the cached statement: "This statement is busy executing a query".
    expect(wrapped.prepare(text).all([])).toHaveLength(2)
    expect(rows.next().value).toEqual({ id: 2, name: 'b' })
    expect(rows.next().done).toBe(true)
  })

  it("streams Kysely's selects to the end, again and again", async () => {
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: cachedForKysely(database) }) })
    await db.insertInto('t').values([{ id: 1, name: 'a' }, { id: 2, name: 'b' }]).execute()
    for (let round = 0; round < 2; round += 1) {
      const seen = []
      for await (const row of db.selectFrom('t').select(['id', 'name']).orderBy('id').stream()) seen.push(row)
      expect(seen).toEqual([{ id: 1, name: 'a' }, { id: 2, name: 'b' }])
      // A stream left early ends its iteration, so the connection and the text serve the next query.
      for await (const row of db.selectFrom('t').select(['id', 'name']).orderBy('id').stream()) if (row.id === 1) break
      expect(await db.selectFrom('t').select(['id', 'name']).orderBy('id').execute()).toHaveLength(2)
    }
    await db.destroy()
  })

  it('rethrows busy errors as StorageUnavailable, from a cached statement too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfa-kysely-db-'))
    const file = join(dir, 'busy.db')
    const owner = new Database(file)
    owner.pragma('journal_mode = WAL')
    const other = new Database(file)
    other.pragma('busy_timeout = 0')
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: cachedForKysely(other) }) })
    await sql`begin immediate`.execute(db)
    await sql`commit`.execute(db)
    owner.exec('begin immediate')
    // The second `begin immediate` comes from the cache and still fails as the port says.
    await expect(sql`begin immediate`.execute(db)).rejects.toBeInstanceOf(StorageUnavailable)
    owner.exec('rollback')
    await db.destroy()
    owner.close()
    rmSync(dir, { recursive: true, force: true })
  })
})
