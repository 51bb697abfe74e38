import type { Kysely } from 'kysely'
import { expect, it } from 'vitest'
import { openSqliteAdapter, sqliteCodec } from '../../adapters/sqlite/index.js'
import { describeStorageConformance } from '../../src/conformance/index.js'
import { LIST_RESOURCES } from '../../src/conformance/resources.js'
import type { ChangeEvent } from '../../src/ports/write-storage.js'
import { portsOf } from '../../src/ports/index.js'

/** The committed change events, in id order: the port only writes them (the outbox will read them). */
async function readChangeEvents(db: Kysely<any>): Promise<ChangeEvent[]> {
  const rows = await db.selectFrom('wfa_change_events').select(['event_id', 'company_id', 'type', 'resource_id', 'occurred_at', 'payload']).orderBy('id').execute()
  return rows.map((row) => ({
    id: row.event_id as string,
    company_id: sqliteCodec.readInt(row.company_id),
    type: row.type as string,
    resource_id: sqliteCodec.readInt(row.resource_id),
    occurred_at: sqliteCodec.readInstant(row.occurred_at),
    payload: row.payload as string,
  }))
}

describeStorageConformance({
  name: 'sqlite',
  // A new in-memory database per test: migrated, empty, closed after the test.
  create: async () => {
    const adapter = await openSqliteAdapter({ filename: ':memory:' })
    return {
      ...portsOf(adapter),
      readEvents: () => readChangeEvents(adapter.db),
      // The adapter's own write transaction: the one a host publishes its events in.
      hostTransaction: (work) => adapter.transaction(work),
      loadDataset: (dataset) => adapter.loadDataset(dataset),
      close: () => adapter.close(),
    }
  },
})

// The "list seek" group reports a reader without `seek` as not applicable; ours must all be checked.
it('sqlite: every list reader offers seek, so the "list seek" group checks each', async () => {
  const adapter = await openSqliteAdapter({ filename: ':memory:' })
  try {
    expect(LIST_RESOURCES.filter((resource) => adapter.storage[resource].seek === undefined)).toEqual([])
  } finally {
    await adapter.close()
  }
})
