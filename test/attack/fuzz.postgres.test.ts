import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { defineFuzzTests } from './fuzz-suite.js'
import { startServer } from './harness.js'

/**
 * Issue 8: the fuzz campaign of fuzz.test.ts on Postgres. With memory and SQLite it makes over
 * 10,000 generated requests per CI run. Replay a run with WORKFORCE_FUZZ_SEED=<seed>.
 */
describePostgres('fuzzing every route over HTTP (postgres)', () => {
  const database = useTestDatabase()
  defineFuzzTests('postgres', { target: 3_000, batchSize: 50, readConcurrency: 3 }, async () =>
    startServer(await openPostgresAdapter({ connectionString: database.current.url })),
  )
})
