import type { CompanyRecord } from '../../../src/ports/records.js'
import type { SqlCodec } from '../codec.js'
import { param, type QueryDb } from '../prepared.js'
import { STAMPS, timestamps, type FixtureTable, type Query, type Row, type StoredTables } from './table.js'

const rows: FixtureTable<'companies'> = {
  dataset: 'companies',
  table: 'wfa_companies',
  columns: ['id', 'name', 'timezone', 'country', ...STAMPS],
  values: (c, r) => [r.id, r.name, r.timezone, r.country, c.instant(r.created_at), c.instant(r.updated_at)],
}

/** The tenant's own company: one row, read by `Storage.company`, never listed. */
export interface CompanyTable extends StoredTables {
  /** The company with id `param('company_id')`: every column of its table. */
  query(db: QueryDb): Query
  decode(row: Row, codec: SqlCodec): CompanyRecord
}

export const company: CompanyTable = {
  tables: [rows],
  query: (db) => db.selectFrom(rows.table).select([...rows.columns]).where('id', '=', param('company_id')),
  decode: (row, codec) => ({
    id: codec.readInt(row.id),
    name: row.name as string,
    timezone: row.timezone as string,
    country: row.country as string,
    ...timestamps(row, codec),
  }),
}
