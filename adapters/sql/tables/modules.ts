import type { FixtureTable, StoredTables } from './table.js'

const rows: FixtureTable<'modules'> = {
  dataset: 'modules',
  table: 'wfa_company_modules',
  columns: ['company_id', 'module', 'active'],
  values: (c, r) => [r.company_id, r.module, c.bool(r.active)],
}

/** Which platform modules each company has switched on or off (`SqlModuleRegistry`): no resource, but loaded with the rest. */
export const modules: StoredTables = { tables: [rows] }
