import { Migrator, type Kysely } from 'kysely'
import { expect, it } from 'vitest'
import type { SqlCodec, SqlColumnTypes } from '../../adapters/sql/codec.js'
import { createMigrations } from '../../adapters/sql/migrations/index.js'
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE } from '../../adapters/sql/schema.js'
import { SqlUsageStore } from '../../adapters/sql/sql-usage-store.js'

const MIGRATION = '2026_11_27_0012_usage_not_modified'
const KEY = 'aaaaaaaaaaaaaaa1'
const HOUR = new Date('2027-02-03T04:00:00.000Z')

export interface UsageMigrationTarget {
  name: string
  types: SqlColumnTypes
  codec: SqlCodec
  /** A fresh, empty database, and how to let it go. */
  open(): Promise<{ db: Kysely<any>; close(): Promise<void> }>
}

/**
 * Migration 0012 over a usage table that already holds hours: they read back with
 * `not_modified` 0 and add to it; a row inserted as the previous version inserts it (without the
 * column, as during a rolling upgrade) still goes in; `down` drops the column and keeps the rows.
 */
export function defineUsageMigrationSuite(target: UsageMigrationTarget): void {
  it(`migration 0012 on ${target.name}: hours counted before it read 0 not-modified and add to it; down keeps them`, async () => {
    const { db, close } = await target.open()
    try {
      const migrations = createMigrations(target.types)
      const names = Object.keys(migrations)
      // Whatever comes before ours in the list (the lead may add migrations in between).
      const previous = names[names.indexOf(MIGRATION) - 1] as string
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableName: MIGRATION_TABLE, migrationLockTableName: MIGRATION_LOCK_TABLE })
      const migrateTo = async (name: string) => {
        const { error } = await migrator.migrateTo(name)
        if (error !== undefined) throw error
      }
      const c = target.codec
      const oldRow = (requests: number) => ({ company_id: 1, key_id: KEY, hour: c.instant(HOUR), requests, client_errors: 1, server_errors: 0, rate_limited: 0, last_rate_limited_at: null })
      await migrateTo(previous)
      await db.insertInto('wfa_key_usage').values(oldRow(4)).execute()

      await migrateTo(MIGRATION)
      const usage = new SqlUsageStore(db, c)
      const read = async () => (await usage.hourly(1, HOUR)).map((row) => [row.requests, row.not_modified, row.client_errors])
      expect(await read(), 'the hour counted before the migration').toEqual([[4, 0, 1]])
      await usage.add([{ company_id: 1, key_id: KEY, hour: HOUR, requests: 3, client_errors: 0, server_errors: 0, rate_limited: 0, last_rate_limited_at: null, not_modified: 2 }])
      expect(await read(), 'after adding 3 requests, 2 of them 304').toEqual([[7, 2, 1]])
      // An instance still on the previous version inserts a new hour without the column.
      const laterHour = new Date(HOUR.getTime() + 3_600_000)
      await db.insertInto('wfa_key_usage').values({ ...oldRow(5), hour: c.instant(laterHour) }).execute()
      expect(await read(), 'with an hour inserted as the previous version does').toEqual([
        [7, 2, 1],
        [5, 0, 1],
      ])

      await migrateTo(previous)
      const rows = await db.selectFrom('wfa_key_usage').selectAll().orderBy('hour').execute()
      expect(rows.map((row) => [c.readInt(row.requests), 'not_modified' in row])).toEqual([
        [7, false],
        [5, false],
      ])
    } finally {
      await close()
    }
  })
}
