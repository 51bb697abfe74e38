import pg from 'pg'
import { afterAll, expect, it } from 'vitest'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { describeStorageConformance } from '../../src/conformance/index.js'
import { LIST_RESOURCES } from '../../src/conformance/resources.js'
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

  // The "list seek" group reports a reader without `seek` as not applicable; ours must all be checked.
  it('postgres: every list reader offers seek, so the "list seek" group checks each', async () => {
    const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema: 'conformance_seek_readers' })
    try {
      expect(LIST_RESOURCES.filter((resource) => adapter.storage[resource].seek === undefined)).toEqual([])
    } finally {
      await adapter.close()
      admin ??= new pg.Pool({ connectionString: database.current.url, max: 1 })
      await admin.query('drop schema conformance_seek_readers cascade')
    }
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
