import { expect, it } from 'vitest'
import { DEFAULT_MIN_CONNECTIONS, openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { describePostgres, usePostgresAdapters, useTestDatabase } from '../helpers/postgres.js'

/** Issue 21 item 4: the pool's connections are open before the first request, and stay open. */
describePostgres('PostgresAdapter.warmUp', () => {
  const database = useTestDatabase()
  const { open, hostPool } = usePostgresAdapters(database)
  const serverConnections = async (adapter: PostgresAdapter) => {
    const { rows } = await adapter.pool.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = current_database()')
    return rows[0]?.n ?? 0
  }

  it(`opens ${DEFAULT_MIN_CONNECTIONS} connections on a pool it creates, idle and answering, which the idle timeout keeps`, async () => {
    const adapter = await open({ connectionString: database.current.url })
    const before = adapter.pool.totalCount
    expect(before).toBeLessThan(DEFAULT_MIN_CONNECTIONS)
    expect(await adapter.warmUp()).toBe(DEFAULT_MIN_CONNECTIONS)
    expect(adapter.pool.totalCount).toBe(DEFAULT_MIN_CONNECTIONS)
    expect(adapter.pool.idleCount).toBe(DEFAULT_MIN_CONNECTIONS)
    expect(await serverConnections(adapter)).toBeGreaterThanOrEqual(DEFAULT_MIN_CONNECTIONS)
    // pg-pool closes idle clients only above `min`.
    expect((adapter.pool as unknown as { options: { min: number } }).options.min).toBe(DEFAULT_MIN_CONNECTIONS)
    // A second warm-up opens nothing more.
    expect(await adapter.warmUp()).toBe(DEFAULT_MIN_CONNECTIONS)
    expect(adapter.pool.totalCount).toBe(DEFAULT_MIN_CONNECTIONS)
  })

  it('opens minConnections when given; on a host pool none unless asked, and never ends it', async () => {
    const three = await open({ connectionString: database.current.url }, { minConnections: 3 })
    await three.pool.query('select 1')
    expect(await three.warmUp()).toBe(3)
    expect(three.pool.totalCount).toBe(3)

    const pool = hostPool()
    const hosted = await open({ pool })
    const idleBefore = pool.totalCount
    expect(await hosted.warmUp()).toBe(0)
    expect(pool.totalCount).toBe(idleBefore)
    const asked = await open({ pool }, { minConnections: 4, migrate: false })
    expect(await asked.warmUp()).toBe(4)
    expect(pool.totalCount).toBeGreaterThanOrEqual(4)
    await asked.close()
    expect(pool.ended).toBe(false)
  })

  it('refuses a minConnections outside 0 to 10, naming the option', async () => {
    for (const minConnections of [-1, 11, 1.5]) {
      await expect(openPostgresAdapter({ connectionString: database.current.url }, { minConnections })).rejects.toThrow(/"minConnections" must be an integer from 0 to 10/)
    }
  })
})
