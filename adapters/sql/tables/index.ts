import { DATASET_TABLES, type Dataset } from '../../../src/ports/dataset.js'
import { absences } from './absences.js'
import { company } from './company.js'
import { employees } from './employees.js'
import { expenses } from './expenses.js'
import { modules } from './modules.js'
import { projects } from './projects.js'
import { roles } from './roles.js'
import { shifts } from './shifts.js'
import type { FixtureTable, ReaderName, StoredTables } from './table.js'
import { todos } from './todos.js'
import { users } from './users.js'

// The one list of the SQL adapters' table descriptors: readers, fixtures, bulk loads and the
// list-version bookkeeping are derived from it. A new read-only resource is one file here and
// one entry below (with its migration); a new dataset table belongs to one descriptor's `tables`.

/** The list resources, each read through `Storage[name]`. */
export const RESOURCE_TABLES = [users, employees, roles, projects, shifts, absences, expenses, todos] as const

// Compile-time: every list reader of `Storage` has a descriptor (the error names the one missing).
type Missing = Exclude<ReaderName, (typeof RESOURCE_TABLES)[number]['name']>
const everyReader: [Missing] extends [never] ? true : { missing: Missing } = true
void everyReader

/** Every descriptor: the resources', the company's, and the tables no resource lists. */
export const TABLES: readonly StoredTables[] = [company, ...RESOURCE_TABLES, modules]

const byDataset = new Map<keyof Dataset, FixtureTable>()
for (const table of TABLES.flatMap((descriptor) => descriptor.tables)) {
  if (byDataset.has(table.dataset)) throw new Error(`adapters/sql/tables: two descriptors store the dataset table ${table.dataset}`)
  byDataset.set(table.dataset, table)
}
for (const name of DATASET_TABLES) {
  if (!byDataset.has(name)) throw new Error(`adapters/sql/tables: no descriptor stores the dataset table ${name}`)
}

/** The SQL table a dataset table is loaded into (every one has exactly one, checked above). */
export function fixtureTable(name: keyof Dataset): FixtureTable {
  return byDataset.get(name)!
}

export { absences, company, employees, expenses, modules, projects, roles, shifts, todos, users }
export { USER_ID_COUNTER } from './users.js'
export type { FixtureTable, ResourceQuery, ResourceTable } from './table.js'
