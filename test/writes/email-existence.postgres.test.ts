import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { describePostgres, readChangeEvents, useTestDatabase } from '../helpers/postgres.js'
import type { WriteAdapterFactory } from '../helpers/write-app.js'
import { describeEmailExistence } from './email-existence.js'

// Issue 21 on Postgres: the same proof as email-existence.test.ts, a fresh schema per app.
describePostgres('POST /v1/users reveals nothing about other companies (postgres)', () => {
  const database = useTestDatabase()
  let next = 0
  const postgres: WriteAdapterFactory = {
    name: 'postgres',
    async open() {
      const adapter = await openPostgresAdapter({ connectionString: database.current.url }, { schema: `email_existence_${++next}` })
      return { adapter, events: () => readChangeEvents(adapter), idempotencyRecords: async () => [] }
    },
  }
  describeEmailExistence(postgres)
})
