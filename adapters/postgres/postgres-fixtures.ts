import { sql, type Kysely } from 'kysely'
import type { Dataset } from '../../src/ports/dataset.js'
import { TABLE_PREFIX } from '../sql/schema.js'
import { loadDataset } from '../sql/sql-fixtures.js'
import { postgresCodec } from './postgres-codec.js'
import { pgDriver } from './postgres-driver.js'

/**
 * Loads a dataset with its explicit ids, then moves every identity sequence past the
 * largest id. Postgres does not advance an identity when a row supplies its own id, so
 * without this the next ordinary insert would be given id 1 and collide, and ids would
 * stop growing monotonically (spec 2.4).
 *
 * @param queryDb the schema-qualified instance the adapter queries through
 * @param db the same connection without the schema plugin, for catalogue queries
 */
export async function loadPostgresDataset(queryDb: Kysely<any>, db: Kysely<any>, dataset: Dataset, schema?: string): Promise<void> {
  await loadDataset(queryDb, postgresCodec, dataset)
  await restartIdentitiesAfterMaxId(db, schema)
}

async function restartIdentitiesAfterMaxId(db: Kysely<any>, schema: string | undefined): Promise<void> {
  const { rows } = await sql<{ table_name: string }>`
    select table_name from information_schema.columns
    where table_schema = ${schema ?? sql`current_schema()`}
      and column_name = 'id' and is_identity = 'YES' and starts_with(table_name, ${TABLE_PREFIX})
    order by table_name`.execute(db)
  for (const { table_name: table } of rows) {
    // pg_get_serial_sequence parses its argument as SQL, so the name is quoted as SQL.
    const qualified = schema === undefined ? pgDriver.escapeIdentifier(table) : `${pgDriver.escapeIdentifier(schema)}.${pgDriver.escapeIdentifier(table)}`
    const from = schema === undefined ? sql.table(table) : sql.table(`${schema}.${table}`)
    await sql`
      select setval(pg_get_serial_sequence(${qualified}, 'id'), coalesce((select max(id) from ${from}), 0) + 1, false)
    `.execute(db)
  }
}
