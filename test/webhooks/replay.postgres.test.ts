import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { describePostgres, readChangeEvents, useTestDatabase } from '../helpers/postgres.js'
import type { WriteAdapterFactory } from '../helpers/write-app.js'
import { defineReplaySuite } from './replay-suite.js'

describePostgres('webhook replay on Postgres', () => {
  const database = useTestDatabase()
  let next = 0
  // A fresh schema per app: each test starts from an empty store.
  const postgres: WriteAdapterFactory = {
    name: 'postgres',
    async open() {
      const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema: `replay_${++next}` })
      return { adapter, events: () => readChangeEvents(adapter), idempotencyRecords: async () => [] }
    },
  }
  defineReplaySuite(postgres)
})
