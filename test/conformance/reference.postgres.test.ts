import pg from 'pg'
import { afterAll } from 'vitest'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { describeStorageConformance } from '../../src/conformance/index.js'
import { describePostgres, readChangeEvents, useTestDatabase } from '../helpers/postgres.js'
import { portsOf } from '../../src/ports/index.js'

describePostgres('postgres conformance', () => {
  // One fresh database for this file; every test gets its own schema in it, migrated and
  // empty, dropped when the suite closes the subject.
  const database = useTestDatabase()
  let admin: pg.Pool | undefined
  let next = 0

  afterAll(async () => {
    await admin?.end()
  })

  describeStorageConformance({
    name: 'postgres',
    create: async () => {
      const schema = `conformance_${++next}`
      const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema })
      return {
        ...portsOf(adapter),
        readEvents: () => readChangeEvents(adapter),
        // A host's own Kysely transaction on the database: publish applies the schema to it.
        hostTransaction: (work) => adapter.db.transaction().execute(work),
        loadDataset: adapter.loadDataset,
        async close() {
          await adapter.close()
          admin ??= new pg.Pool({ connectionString: database.current.url, max: 1 })
          await admin.query(`drop schema ${pg.escapeIdentifier(schema)} cascade`)
        },
      }
    },
  })
})
