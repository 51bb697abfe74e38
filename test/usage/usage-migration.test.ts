import Database from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { sqliteCodec, sqliteColumnTypes } from '../../adapters/sqlite/sqlite-codec.js'
import { defineUsageMigrationSuite } from './usage-migration-suite.js'

defineUsageMigrationSuite({
  name: 'SQLite',
  types: sqliteColumnTypes,
  codec: sqliteCodec,
  open: async () => {
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) })
    return { db, close: () => db.destroy() }
  },
})
