import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { it } from 'vitest'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { postgresCodec, postgresColumnTypes } from '../../adapters/postgres/postgres-codec.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { expectMigrated, insertOldShape, migrateToBefore } from './user-id-migration.js'

describePostgres('migration 0009 on Postgres', () => {
  const database = useTestDatabase()
  it('a shared person keeps their id in their first company, gets a fresh one in the next, and references follow', async () => {
    const schema = 'user_id_migration'
    const plain = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.current.url, max: 1 }) }) })
    try {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(plain)
      const db = plain.withSchema(schema)
      await migrateToBefore(db, postgresColumnTypes, schema)
      await insertOldShape(db, postgresCodec)
      // Explicit ids do not move identities; the old code's next person would have been 10.
      await sql`select setval(pg_get_serial_sequence(${`"${schema}".wfa_users`}, 'id'), 10, false)`.execute(plain)
    } finally {
      await plain.destroy()
    }
    const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema })
    try {
      await expectMigrated(adapter.db, postgresCodec, adapter)
    } finally {
      await adapter.close()
    }
  })
})
