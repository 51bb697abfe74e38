import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { postgresCodec, postgresColumnTypes, postgresTypes } from '../../adapters/postgres/postgres-codec.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { defineUsageMigrationSuite } from './usage-migration-suite.js'

describePostgres('migration 0012 (usage not_modified) on Postgres', () => {
  const database = useTestDatabase()
  defineUsageMigrationSuite({
    name: 'Postgres',
    types: postgresColumnTypes,
    codec: postgresCodec,
    open: async () => {
      const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.current.url, types: postgresTypes }) }) })
      return { db, close: () => db.destroy() }
    },
  })
})
