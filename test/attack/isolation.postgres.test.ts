import { afterAll, beforeAll, it } from 'vitest'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { runIsolation } from './isolation-run.js'
import { fuzzSeed, startServer, type AttackServer } from './harness.js'

/** Issue 8: tenant isolation as a property (isolation.test.ts) on Postgres. */
const { seed, origin } = fuzzSeed()

describePostgres('tenant isolation as a property (postgres)', () => {
  const database = useTestDatabase()
  let server: AttackServer
  beforeAll(async () => {
    console.log(`[attack] isolation seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}`)
    server = await startServer(await openPostgresAdapter({ connectionString: database.current.url }))
  })
  afterAll(async () => {
    await server?.close()
  })

  it("answers another company's ids exactly as ids that never existed, and changes nothing", async () => {
    try {
      const report = await runIsolation(server, seed, 250)
      console.log(`[attack isolation postgres] ${report.probes} probes, ${report.requests} requests; statuses ${JSON.stringify(report.byStatus)}; ${report.echoes} answers echo the id`)
    } catch (error) {
      throw new Error(`[attack isolation postgres] seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}\n${(error as Error).message}`, { cause: error })
    }
  }, 60_000)
})
