import type { Kysely } from 'kysely'
import { openSqliteAdapter, sqliteCodec } from '../../adapters/sqlite/index.js'
import { describeStorageConformance } from '../../src/conformance/index.js'
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
