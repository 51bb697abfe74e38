import Database from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createSqliteKysely } from '../../adapters/sqlite/sqlite-database.js'

/**
 * SQLite plans with the value bound to a plain `LIMIT ?`, so every new binding made it prepare
 * the statement again (every list page did). The adapter's Kysely writes a bound LIMIT as
 * `? + 0`, computed when the statement runs (adapters/sqlite/sqlite-database.ts).
 */
describe('the SQLite adapter’s Kysely: a bound LIMIT the planner does not read', () => {
  let database: Database.Database
  let db: Kysely<any>
  beforeEach(() => {
    database = new Database(':memory:')
    database.exec('create table t (id integer primary key, company_id integer not null, name text not null); create index t_company on t (company_id, id)')
    const insert = database.prepare('insert into t (company_id, name) values (?, ?)')
    for (let n = 0; n < 30; n += 1) insert.run(n % 2, `row ${n}`)
    db = createSqliteKysely(database)
  })
  afterEach(async () => {
    await db.destroy()
  })

  const page = (limit: number, offset = 0) => db.selectFrom('t').select(['id']).where('company_id', '=', 1).orderBy('id').limit(limit).offset(offset)

  it('writes a bound LIMIT as `? + 0` and a literal one as it is', () => {
    expect(page(5).compile().sql).toMatch(/ limit \? \+ 0 offset \?$/)
    expect(db.selectFrom('t').select('id').limit(sql.lit(1)).compile().sql).toMatch(/ limit 1$/)
  })

  it('answers what a plain bound LIMIT answers, with the same plan', async () => {
    const plain = new Kysely<any>({ dialect: new SqliteDialect({ database }) })
    for (const [limit, offset] of [
      [5, 0],
      [3, 4],
      [100, 0],
      [1, 14],
    ] as const) {
      expect(await page(limit, offset).execute()).toEqual(
        await plain.selectFrom('t').select(['id']).where('company_id', '=', 1).orderBy('id').limit(limit).offset(offset).execute(),
      )
    }
    const ours = page(5, 2).compile()
    const theirs = plain.selectFrom('t').select(['id']).where('company_id', '=', 1).orderBy('id').limit(5).offset(2).compile()
    const planOf = (text: string, parameters: readonly unknown[]) =>
      (database.prepare(`explain query plan ${text}`).all(...parameters) as Array<{ detail: string }>).map((step) => step.detail)
    expect(planOf(ours.sql, ours.parameters)).toEqual(planOf(theirs.sql, theirs.parameters))
    expect(planOf(ours.sql, ours.parameters)).toEqual(['SEARCH t USING COVERING INDEX t_company (company_id=?)'])
  })
})
