import { DATASET_TABLES, type Dataset } from '../../src/ports/dataset.js'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'
import { fixtureTable } from './tables/index.js'

/** Rows per INSERT: keeps every statement well under SQLite's and Postgres' bind-parameter limits. */
const BATCH_SIZE = 500

/**
 * Writes a whole dataset, with its ids, in one transaction: all of it or none of it, table by
 * table in `DATASET_TABLES` order, each into the SQL table its descriptor names
 * (`adapters/sql/tables/`). The fixture-loading hook of the SQL adapters (seed, tests,
 * conformance suite).
 */
export async function loadDataset(db: QueryDb, codec: SqlCodec, data: Dataset): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const name of DATASET_TABLES) {
      const { table, columns, values } = fixtureTable(name)
      const rows: readonly Dataset[keyof Dataset][number][] = data[name]
      const toRecord = (row: Dataset[keyof Dataset][number]) => {
        const bound = values(codec, row)
        return Object.fromEntries(columns.map((column, index) => [column, bound[index]]))
      }
      for (let start = 0; start < rows.length; start += BATCH_SIZE) {
        await trx.insertInto(table).values(rows.slice(start, start + BATCH_SIZE).map(toRecord)).execute()
      }
    }
  })
}
