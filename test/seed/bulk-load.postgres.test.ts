import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, postgresCodec, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { loadPostgresDatasetStream } from '../../adapters/postgres/postgres-bulk-load.js'
import type { DatasetChunk } from '../../src/ports/dataset.js'
import { generateDataset, streamDataset } from '../../src/seed/generate.js'
import { createTestDatabase, describePostgres, type TestDatabase } from '../helpers/postgres.js'

// The bulk loader behind `seed --db postgres://…` against the loader every other test uses.
const SCALE = 97

describePostgres('loadPostgresDatasetStream', () => {
  const databases: TestDatabase[] = []
  const adapters: PostgresAdapter[] = []

  async function fresh(): Promise<PostgresAdapter> {
    const database = await createTestDatabase()
    databases.push(database)
    const adapter = await openPostgresAdapter({ connectionString: database.url })
    adapters.push(adapter)
    return adapter
  }

  async function load(adapter: PostgresAdapter, chunks: Iterable<DatasetChunk>): Promise<void> {
    const client = await adapter.pool.connect()
    try {
      await loadPostgresDatasetStream(client, postgresCodec, chunks)
    } finally {
      client.release()
    }
  }

  /** Every row of every table of ours (the list-version counters included) in key order, every index and constraint definition, the next identity of each table, every trigger and whether it is enabled. */
  async function snapshot(adapter: PostgresAdapter) {
    const { rows: tables } = await adapter.pool.query<{ name: string }>(
      `select table_name as name from information_schema.tables where table_schema = current_schema() and table_name like 'wfa\\_%' and table_name not like 'wfa\\_migration%' order by 1`,
    )
    const rows: Record<string, unknown[]> = {}
    // Each row also as Postgres prints it: exact to the microsecond, which a JS Date is not.
    const texts: Record<string, unknown[]> = {}
    for (const { name } of tables) {
      rows[name] = (await adapter.pool.query(`select * from "${name}" order by 1, 2`)).rows
      texts[name] = (await adapter.pool.query(`select t::text as row from "${name}" t order by 1`)).rows
    }
    const { rows: indexes } = await adapter.pool.query(`select indexname, indexdef from pg_indexes where schemaname = current_schema() order by 1`)
    // The loader drops primary keys and unique constraints for the load and adds them back.
    const { rows: constraints } = await adapter.pool.query(`
      select conrelid::regclass::text as relation, conname, contype, conindid::regclass::text as index, pg_get_constraintdef(oid) as definition
      from pg_constraint where connamespace = current_schema()::regnamespace order by 1, 2`)
    const { rows: identities } = await adapter.pool.query(`
      select table_name, pg_sequence_last_value(pg_get_serial_sequence(quote_ident(table_name), 'id')) as last
      from information_schema.columns
      where table_schema = current_schema() and column_name = 'id' and is_identity = 'YES' order by 1`)
    const { rows: triggers } = await adapter.pool.query(`
      select c.relname, g.tgname, g.tgenabled from pg_trigger g join pg_class c on c.oid = g.tgrelid
      where not g.tgisinternal and c.relnamespace = current_schema()::regnamespace order by 1, 2`)
    return { rows, texts, indexes, constraints, identities, triggers }
  }

  let reference: PostgresAdapter
  beforeAll(async () => {
    reference = await fresh()
    await reference.loadDataset(generateDataset({ scale: SCALE }))
  })
  afterAll(async () => {
    for (const adapter of adapters) await adapter.close()
    for (const database of databases) await database.drop()
  })

  it('stores exactly what loadDataset stores, with the same indexes and identities moved past the ids', async () => {
    const bulk = await fresh()
    await load(bulk, streamDataset({ scale: SCALE, chunkRows: 13 }))
    expect(await snapshot(bulk)).toEqual(await snapshot(reference))
    const [list] = (await bulk.pool.query(`insert into wfa_todo_lists (company_id, name) values (1, 'next') returning id`)).rows
    expect(Number(list.id)).toBe(7)
    // Vacuumed and analyzed after the commit: every page all-visible (index-only scans read no row), statistics present.
    const { rows: visible } = await bulk.pool.query(`select relpages, relallvisible, reltuples from pg_class where relname = 'wfa_todos' and relnamespace = current_schema()::regnamespace`)
    expect(visible[0].relpages).toBeGreaterThan(0)
    expect(visible[0]).toMatchObject({ relallvisible: visible[0].relpages, reltuples: SCALE + 45 })
    const { rows: stats } = await bulk.pool.query(`select count(*)::int as columns from pg_stats where schemaname = current_schema() and tablename = 'wfa_todos'`)
    expect(stats[0].columns).toBeGreaterThan(0)
  })

  it('counts list versions as the statement triggers would when older rows already sit past the new ones', async () => {
    const late = `insert into wfa_shifts (id, company_id, employee_id, status, starts_at, ends_at, break_minutes, created_at, updated_at)
      values (9999999, 2, 1, 'planned', now(), now(), 0, now(), now())`
    const before = await fresh()
    await before.pool.query(late)
    await before.loadDataset(generateDataset({ scale: SCALE }))
    const bulk = await fresh()
    await bulk.pool.query(late)
    await load(bulk, streamDataset({ scale: SCALE }))
    const counters = async (adapter: PostgresAdapter) => (await adapter.pool.query(`select * from wfa_list_versions order by 1, 2`)).rows
    expect(await counters(bulk)).toEqual(await counters(before))
    expect((await counters(bulk)).find((row) => row.company_id === '2' && row.resource === 'shifts')).toMatchObject({ removals: '1' })
  })

  it('writes nothing when the stream fails half way, and keeps every index', async () => {
    const adapter = await fresh()
    const before = await snapshot(adapter)
    function* failing(): Generator<DatasetChunk> {
      for (const chunk of streamDataset({ scale: SCALE, chunkRows: 50 })) {
        if (chunk.table === 'shifts') throw new Error('the generator broke')
        yield chunk
      }
    }
    await expect(load(adapter, failing())).rejects.toThrow('the generator broke')
    expect(await snapshot(adapter)).toEqual(before)
  })

  it('refuses rows that break a constraint inside a COPY, all or nothing, and the connection stays usable', async () => {
    const adapter = await fresh()
    const before = await snapshot(adapter)
    function* twice(): Generator<DatasetChunk> {
      for (const chunk of streamDataset({ scale: 40 })) {
        yield chunk
        if (chunk.table === 'people') yield chunk
      }
    }
    const client = await adapter.pool.connect()
    try {
      await expect(loadPostgresDatasetStream(client, postgresCodec, twice())).rejects.toThrow(/duplicate key value violates unique constraint|could not create unique index/)
      expect((await client.query('select 1 as ok')).rows).toEqual([{ ok: 1 }])
    } finally {
      client.release()
    }
    expect(await snapshot(adapter)).toEqual(before)
  })
})
