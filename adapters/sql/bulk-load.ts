import type { DatasetChunk } from '../../src/ports/dataset.js'
import type { SqlCodec } from './codec.js'
import { LIST_BLOCK_IDS } from './list-shape.js'
import { fixtureTable, RESOURCE_TABLES, type FixtureTable } from './tables/index.js'

// What the SQLite and Postgres bulk loaders share (`workforce-api seed` drives them, from
// src/seed/): streamed dataset chunks walked as batches of one table, the list-version counters
// their triggers would have kept, names. They load any `DatasetChunk` stream: no demo data here.

/** What a bulk load reports as it goes (for a progress bar). */
export interface LoadProgress {
  /** `count` more rows were written (committed only at the end). */
  rowsLoaded?(count: number): void
  /** A secondary index was rebuilt (after its table's rows). */
  indexBuilt?(name: string): void
  /** The load moved on to a step that writes no new rows (copying a table a worker made, committing). */
  stage?(label: string): void
}

/** How often a bulk load lets timers run (a progress bar redraws, a worker's messages arrive). */
export const YIELD_EVERY_MS = 50

/**
 * Rows of one table as the batch walker hands them on: `rows` rows' bound values, flat, in
 * `columns` order. The array is reused for the next batch: the callee must be done with it on
 * return (or copy it).
 */
export interface Batch {
  table: string
  columns: readonly string[]
  values: unknown[]
  rows: number
}

export interface BatchHandlers {
  /**
   * Before a table's first batch. For a list-versioned table whose trigger the loader set
   * aside, returns the largest order key each company already holds (see `ListVersionTally`).
   */
  tableStart(table: string, columns: readonly string[]): ReadonlyMap<number, number> | void | Promise<ReadonlyMap<number, number> | void>
  batch(batch: Batch): void | Promise<void>
  tableDone(table: string): void | Promise<void>
}

/**
 * Walks streamed chunks as batches of at most `rowsPerBatch` rows of one table, calling
 * `tableStart` before a table's first batch and `tableDone` after its last; `tally` counts the
 * rows of list-versioned tables on the way. Memory: one chunk and one batch. Yields to the event
 * loop every `YIELD_EVERY_MS`, because the SQLite loaders are otherwise synchronous.
 */
export async function walkBatches(
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  rowsPerBatch: number,
  progress: LoadProgress,
  tally: ListVersionTally,
  on: BatchHandlers,
): Promise<void> {
  let batch: Batch | undefined
  let fixture: FixtureTable | undefined
  let counter: TableTally | undefined
  let yieldedAt = Date.now()
  const flush = async () => {
    if (batch === undefined || batch.rows === 0) return
    // A short last batch: the callee sees exactly its rows' values.
    if (batch.rows < rowsPerBatch) batch.values.length = batch.rows * batch.columns.length
    await on.batch(batch)
    batch.rows = 0
  }
  for (const chunk of chunks) {
    if (fixture?.table !== fixtureTable(chunk.table).table) {
      await flush()
      if (batch !== undefined) await on.tableDone(batch.table)
      fixture = fixtureTable(chunk.table)
      const start = await on.tableStart(fixture.table, fixture.columns)
      batch = { table: fixture.table, columns: fixture.columns, values: new Array(rowsPerBatch * fixture.columns.length), rows: 0 }
      counter = tally.forTable(fixture.table, fixture.columns, start ?? undefined)
    }
    const { values } = fixture
    const width = batch!.columns.length
    for (const row of chunk.rows) {
      const bound = values(codec, row)
      const target = batch!.values
      const offset = batch!.rows * width
      for (let index = 0; index < width; index++) target[offset + index] = bound[index]
      counter?.row(bound)
      if (++batch!.rows === rowsPerBatch) await flush()
    }
    progress.rowsLoaded?.(chunk.rows.length)
    if (Date.now() - yieldedAt >= YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      yieldedAt = Date.now()
    }
  }
  await flush()
  if (batch !== undefined) await on.tableDone(batch.table)
}

// ---------------------------------------------------------------------------------------------
// List versions (migration 2026_11_24_0006_list_versions)

/**
 * The listed tables whose per-row insert trigger (`wfa_lv_<resource>_insert`) bumps
 * `wfa_list_versions`, with the column each list is ordered by: each resource's `listed` table
 * (`adapters/sql/tables/`), as migration 0006 declares them. A bulk load sets that trigger
 * aside (it costs more than the insert, and stops SQLite's table copy), counts what it would
 * have counted (`ListVersionTally`) and bumps the counters once per company. The bulk-load
 * tests compare every table, counters included, with `loadDataset`, which runs the triggers: a
 * change to them that this misses fails there.
 */
export const LIST_VERSIONED: Readonly<Record<string, { resource: string; orderedBy: string }>> = Object.fromEntries(
  RESOURCE_TABLES.map(({ name, listed }) => [listed.table.table, { resource: name, orderedBy: listed.orderedBy }]),
)

/** The name of the insert trigger that keeps `table`'s list version, if it has one. */
export function listVersionTrigger(table: string): string | undefined {
  const listed = LIST_VERSIONED[table]
  return listed === undefined ? undefined : `wfa_lv_${listed.resource}_insert`
}

/** One company's counts for one table: what the insert trigger would have added. */
export interface ListVersionBump {
  table: string
  resource: string
  companyId: number
  appends: number
  /** What SQLite's row-level trigger counts: rows that arrived before a larger key of their company. */
  removals: number
  /** The smallest key loaded: Postgres' statement-level trigger counts one removal when an older row lies past it. */
  smallestKey: number
  /** The company's largest key before the load, if it had rows. */
  largestBefore: number | undefined
}

/** Counts one table's rows as they stream by. */
interface TableTally {
  row(bound: readonly unknown[]): void
}

/**
 * What the list-version insert triggers would have counted for the rows loaded with them set
 * aside: per company one append per row and, for SQLite's row-level trigger, one removal per
 * row that arrived while a row of the same company with a larger order key already existed
 * (`start` gives the largest key each company held before the load). Postgres' trigger runs
 * once per statement (`postgresRemovals`).
 */
export class ListVersionTally {
  readonly #bumps: ListVersionBump[] = []

  /** The counter for `table`, or undefined when it keeps no list version. */
  forTable(table: string, columns: readonly string[], start: ReadonlyMap<number, number> = new Map()): TableTally | undefined {
    const listed = LIST_VERSIONED[table]
    if (listed === undefined) return undefined
    const companyAt = columns.indexOf('company_id')
    const keyAt = columns.indexOf(listed.orderedBy)
    if (companyAt < 0 || keyAt < 0) throw new Error(`bulk load: ${table} has no company_id or ${listed.orderedBy}`)
    const largest = new Map(start)
    // A company's bump, in the order companies first appear: the triggers insert counter rows in that order.
    const byCompany = new Map<number, ListVersionBump>()
    const bumps = this.#bumps
    return {
      row(bound) {
        const companyId = bound[companyAt] as number
        const key = bound[keyAt] as number
        let bump = byCompany.get(companyId)
        if (bump === undefined) {
          bump = { table, resource: listed.resource, companyId, appends: 0, removals: 0, smallestKey: key, largestBefore: start.get(companyId) }
          byCompany.set(companyId, bump)
          bumps.push(bump)
        }
        bump.appends++
        if (key < bump.smallestKey) bump.smallestKey = key
        const before = largest.get(companyId)
        if (before !== undefined && before > key) bump.removals++
        else largest.set(companyId, key)
      },
    }
  }

  /** Every bump so far, table by table in load order. */
  bumps(): ListVersionBump[] {
    return [...this.#bumps]
  }
}

/** The statement that adds one bump to `wfa_list_versions`, with the trigger's own upsert; `$n` or `?` placeholders. */
export function listVersionUpsert(placeholder: (index: number) => string, table = 'wfa_list_versions'): string {
  // Bound: company, resource, appends, removals, and the appends again: every row loaded is one
  // more row of its company (`row_count`, migration 0010), as the insert trigger counts it.
  const [company, resource, appends, removals, rows] = [0, 1, 2, 3, 4].map(placeholder)
  return `INSERT INTO ${table} (company_id, resource, appends, updates, removals, row_count) VALUES (${company}, ${resource}, ${appends}, 0, ${removals}, ${rows})
    ON CONFLICT (company_id, resource) DO UPDATE SET appends = wfa_list_versions.appends + excluded.appends,
      updates = wfa_list_versions.updates + excluded.updates, removals = wfa_list_versions.removals + excluded.removals,
      row_count = wfa_list_versions.row_count + excluded.row_count`
}

/**
 * The statement that recounts one company's `wfa_list_blocks` rows of `bump`'s table from the
 * table itself (migration 0010), as the set-aside insert trigger would have kept them: one row
 * per block of 1,024 ids with its count, a block the company already had updated in place (a
 * load only adds rows, so no block it had can be left over). Recounting, not adding, stays exact
 * whatever the company held before. Bound: the company id.
 */
export function listBlocksRecount(bump: ListVersionBump, placeholder: (index: number) => string): string {
  const { orderedBy } = LIST_VERSIONED[bump.table] as { orderedBy: string }
  const resource = `'${bump.resource.replace(/'/g, "''")}'`
  const block = `${quoteIdentifier(orderedBy)} / ${LIST_BLOCK_IDS}`
  // `WHERE … GROUP BY` before ON CONFLICT: SQLite would read a bare SELECT's ON as a join's.
  return `INSERT INTO wfa_list_blocks (company_id, resource, block, row_count)
    SELECT company_id, ${resource}, ${block}, count(*) FROM ${quoteIdentifier(bump.table)} WHERE company_id = ${placeholder(0)} GROUP BY company_id, ${block}
    ON CONFLICT (company_id, resource, block) DO UPDATE SET row_count = excluded.row_count`
}

// ---------------------------------------------------------------------------------------------
// Names

/** `INSERT INTO table (columns) VALUES (…), (…)` for `rows` rows, placeholders numbered from 0. */
export function insertSql(table: string, columns: readonly string[], rows: number, placeholder: (index: number) => string, verb = 'INSERT'): string {
  const tuples: string[] = []
  for (let row = 0; row < rows; row++) tuples.push(`(${columns.map((_, column) => placeholder(row * columns.length + column)).join(', ')})`)
  return `${verb} INTO ${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(', ')}) VALUES ${tuples.join(', ')}`
}

/** A SQL identifier quoted for both dialects. Our names are plain; this keeps them safe regardless. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/**
 * The removals Postgres' statement-level trigger would have counted had the load been one
 * statement: one when the company already had a row past the smallest key loaded.
 */
export function postgresRemovals(bump: ListVersionBump): number {
  return bump.largestBefore !== undefined && bump.largestBefore > bump.smallestKey ? 1 : 0
}
