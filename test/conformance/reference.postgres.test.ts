import pg from 'pg'
import { afterAll, expect, it } from 'vitest'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { describeStorageConformance } from '../../src/conformance/index.js'
import { conformanceFixture, loadableCopy } from '../../src/conformance/fixture.js'
import { LIST_RESOURCES } from '../../src/conformance/resources.js'
import { describePostgres, readChangeEvents, useTestDatabase } from '../helpers/postgres.js'
import { postgresSchemaPool, relationsOf, type PostgresSchemaPool } from '../helpers/postgres-schema-pool.js'
import { portsOf } from '../../src/ports/index.js'

describePostgres('postgres conformance', () => {
  // One fresh database for this file; every test gets a schema in it as its migrations left it:
  // migrated once, then put back after each test (test/helpers/postgres-schema-pool.ts).
  const database = useTestDatabase()
  let admin: pg.Pool | undefined
  let pool: PostgresSchemaPool | undefined
  const schemas = () => (pool ??= postgresSchemaPool(database.current.url, 'conformance'))

  afterAll(async () => {
    await pool?.end()
    await admin?.end()
  })

  // The "list seek" group reports a reader without `seek` as not applicable; ours must all be checked.
  it('postgres: every list reader offers seek, so the "list seek" group checks each', async () => {
    const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema: 'conformance_seek_readers' })
    try {
      expect(LIST_RESOURCES.filter((resource) => adapter.storage[resource].seek === undefined)).toEqual([])
    } finally {
      await adapter.close()
      admin ??= adminPool(database.current.url)
      await admin.query('drop schema conformance_seek_readers cascade')
    }
  })

  // What the pool hands out stands for a fresh schema: after a test's writes, put back, it holds
  // the rows and sequence positions of one migrated just now.
  it('postgres: a schema put back after writes holds what a freshly migrated one does', async () => {
    admin ??= adminPool(database.current.url)
    const schema = await schemas().take()
    const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema })
    await adapter.loadDataset(loadableCopy(conformanceFixture().dataset))
    await adapter.close()
    const written = await contentsOf(admin, schema)
    await schemas().release(schema)
    const fresh = await openPostgresAdapter({ connectionString: database.current.url }, { schema: 'conformance_fresh' })
    await fresh.close()
    try {
      const reset = await contentsOf(admin, schema)
      expect(reset).toEqual(await contentsOf(admin, 'conformance_fresh'))
      // The check can fail: the written schema differed from a fresh one before it was put back.
      expect(written).not.toEqual(reset)
      expect(await schemas().take()).toBe(schema)
    } finally {
      await schemas().release(schema)
      await admin.query('drop schema conformance_fresh cascade')
    }
  })

  describeStorageConformance({
    name: 'postgres',
    create: async () => {
      const schema = await schemas().take()
      const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema })
      return {
        ...portsOf(adapter),
        readEvents: () => readChangeEvents(adapter),
        // A host's own Kysely transaction on the database: publish applies the schema to it.
        hostTransaction: (work) => adapter.db.transaction().execute(work),
        loadDataset: adapter.loadDataset,
        async close() {
          try {
            await adapter.close()
          } finally {
            await schemas().release(schema)
          }
        },
      }
    },
  })
})

/** Every table's rows (when each migration ran left out) and every sequence's position, by name. */
async function contentsOf(admin: pg.Pool, schema: string): Promise<Record<string, unknown>> {
  const contents: Record<string, unknown> = {}
  const { name, tables, sequences } = await relationsOf(admin, schema)
  for (const tablename of tables) {
    const { rows } = await admin.query(`select * from ${name(tablename)} order by 1`)
    contents[tablename] = tablename === 'wfa_migrations' ? rows.map(({ timestamp: _ran, ...row }) => row) : rows
  }
  for (const sequencename of sequences) {
    contents[sequencename] = (await admin.query(`select last_value, is_called from ${name(sequencename)}`)).rows[0]
  }
  return contents
}

/** A pool for the file's own queries, with idle-client errors ignored (the database is dropped at the end). */
function adminPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  pool.on('error', () => {})
  return pool
}
