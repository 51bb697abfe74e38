import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DATASET_TABLES, type Dataset, type DatasetChunk } from '../../src/ports/dataset.js'
import {
  insertSql,
  listVersionTrigger,
  listBlocksRecount,
  listVersionUpsert,
  LIST_VERSIONED,
  ListVersionTally,
  quoteIdentifier,
  walkBatches,
  type ListVersionBump,
  type LoadProgress,
} from '../sql/bulk-load.js'
import type { SqlCodec } from '../sql/codec.js'
import { fixtureTable } from '../sql/tables/index.js'

/** Rows per multi-row INSERT: one prepared statement per this many (1,900 values for a to-do batch, far under the 32,766 limit). */
const ROWS_PER_STATEMENT = 100
/** The page cache during a bulk load (KiB): a table's pages stay in memory while its indexes are rebuilt. */
const BULK_CACHE_KIB = 256 * 1024
/** The schema name a parallel loader's file is attached under. */
const WORKER_SCHEMA = 'wfa_parallel_load'

/** The better-sqlite3 `Database` surface a bulk load uses (typed here so this file needs no driver types). */
export interface SqliteBulkDatabase {
  prepare(source: string): {
    run(...params: unknown[]): unknown
    get(...params: unknown[]): unknown
    all(...params: unknown[]): unknown[]
  }
  exec(source: string): unknown
  pragma(source: string, options?: { simple?: boolean }): unknown
  readonly inTransaction: boolean
}

/**
 * Loads a stream of dataset chunks (the seed's `streamDataset`, say) into SQLite in one
 * transaction: all of it or none of it, like `loadDataset`, in memory bounded by one chunk.
 * What makes it fast:
 * - prepared 100-row INSERTs bound straight to better-sqlite3 (no query builder per batch);
 * - `INSERT OR ROLLBACK`: a failed row rolls the whole transaction back, which is what a load
 *   wants anyway, and so SQLite keeps no statement journal (a plain INSERT copies every page it
 *   touches there first, in case that one statement fails);
 * - each table's secondary indexes dropped before its rows and rebuilt right after them, inside
 *   the transaction, while its pages are still in the cache: a sort per index instead of
 *   millions of B-tree inserts;
 * - the list-version insert trigger of each listed table set aside meanwhile, and its counters
 *   bumped once per company (`ListVersionTally`);
 * - a large page cache, temporary B-trees in memory, and a rollback journal rather than WAL.
 *
 * Readers on other connections see the database as it was until the commit. The caller holds
 * the connection for the duration: nothing else may use it meanwhile.
 */
export async function loadSqliteDatasetStream(
  database: SqliteBulkDatabase,
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  progress: LoadProgress = {},
): Promise<void> {
  const restore = useBulkSettings(database)
  database.exec('BEGIN IMMEDIATE')
  try {
    commitLoad(database, await loadTables(database, codec, chunks, progress), progress)
  } catch (error) {
    if (database.inTransaction) database.exec('ROLLBACK')
    throw error
  } finally {
    restore()
  }
}

/**
 * What fills some of a dataset's tables into a SQLite file of its own while
 * `loadSqliteDatasetInParallel` loads the others: typically a worker thread that makes the rows
 * and loads them with `fillSqliteFile` (the seed's is `src/seed/sqlite-seed-worker.ts`).
 */
export interface SqliteParallelLoader {
  /** The dataset tables it fills; the stream loaded on this thread must not hold them. */
  readonly tables: readonly (keyof Dataset)[]
  /**
   * Starts filling `filename`, whose tables exist, empty, with their indexes and without
   * triggers, with a page cache of `cacheKib` KiB. `done` resolves once the file is closed
   * (closing releases its lock, so this thread may read it) with the list-version bumps owed
   * for its rows; `stop` ends the loader, done or not.
   */
  start(filename: string, cacheKib: number): { done: Promise<ListVersionBump[]>; stop(): Promise<unknown> }
}

/**
 * Loads `chunks` into `database` as `loadSqliteDatasetStream` does, while `loader` fills its
 * tables in a temporary file on another thread; then SQLite copies the loader's tables in whole,
 * rows and index entries already in order, which costs about a sixth of building them. Either
 * both halves commit or neither does; the temporary file is deleted either way.
 *
 * The copy appends to an empty table only: the loader's tables must be empty in `database`
 * (`sqliteTablesEmpty`), or this throws before loading anything.
 */
export async function loadSqliteDatasetInParallel(
  database: SqliteBulkDatabase,
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  loader: SqliteParallelLoader,
  progress: LoadProgress = {},
): Promise<void> {
  if (!sqliteTablesEmpty(database, loader.tables)) throw new Error(`bulk load: a parallel load needs ${loader.tables.join(', ')} empty`)
  const directory = mkdtempSync(join(tmpdir(), 'wfa-parallel-load-'))
  const restore = useBulkSettings(database)
  let attached = false
  let started: ReturnType<SqliteParallelLoader['start']> | undefined
  try {
    const filename = join(directory, 'worker.db')
    database.exec(`ATTACH DATABASE '${filename.replace(/'/g, "''")}' AS ${WORKER_SCHEMA}`)
    attached = true
    createWorkerSchema(database, loader.tables)
    // Deferred, not IMMEDIATE: IMMEDIATE would take the attached file's write lock too, which
    // the loader needs. The first INSERT takes ours, a moment later.
    database.exec('BEGIN')
    started = loader.start(filename, BULK_CACHE_KIB)
    const workerDone = started.done
    // Awaited below; until then a failure must not count as unhandled.
    workerDone.catch(() => {})
    const bumps = await loadTables(database, codec, chunks, progress)
    progress.stage?.('waiting for the worker')
    const workerBumps = await workerDone
    for (const name of loader.tables) {
      const { table } = fixtureTable(name)
      progress.stage?.(`copying ${table}`)
      await new Promise((resolve) => setImmediate(resolve))
      const trigger = setAsideTrigger(database, table)
      // SQLite's transfer optimisation: an empty table with the same columns and indexes gets
      // the worker's records and index entries copied as they are, in order, without decoding
      // or sorting them again. A trigger on the target would prevent it, hence set aside.
      database.exec(`INSERT INTO main.${quoteIdentifier(table)} SELECT * FROM ${WORKER_SCHEMA}.${quoteIdentifier(table)}`)
      if (trigger !== undefined) {
        database.exec(trigger)
        bumps.push(...workerBumps.filter((bump) => bump.table === table))
      }
    }
    commitLoad(database, bumps, progress)
  } catch (error) {
    if (database.inTransaction) database.exec('ROLLBACK')
    throw error
  } finally {
    await started?.stop()
    if (attached) database.exec(`DETACH DATABASE ${WORKER_SCHEMA}`)
    restore()
    rmSync(directory, { recursive: true, force: true })
  }
}

/**
 * A parallel loader's side: loads `chunks` into its own file, which nobody else reads until it
 * is closed, so without journal, sync or lock traffic. Returns the list-version bumps the main
 * thread owes for them.
 */
export async function fillSqliteFile(
  database: SqliteBulkDatabase,
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  cacheKib: number,
  progress: LoadProgress,
): Promise<ListVersionBump[]> {
  database.pragma('journal_mode = OFF')
  database.pragma('synchronous = OFF')
  database.pragma('locking_mode = EXCLUSIVE')
  database.pragma(`cache_size = ${-cacheKib}`)
  database.pragma('temp_store = MEMORY')
  database.exec('BEGIN')
  const tally = new ListVersionTally()
  await loadTables(database, codec, chunks, progress, tally)
  database.exec('COMMIT')
  // The worker's file has no triggers: every bump is owed, whatever was set aside here.
  return tally.bumps()
}

/** Whether every one of `tables` holds no row: what `loadSqliteDatasetInParallel` needs of its loader's tables. */
export function sqliteTablesEmpty(database: SqliteBulkDatabase, tables: readonly (keyof Dataset)[]): boolean {
  return tables.every((name) => isEmpty(database, fixtureTable(name).table))
}

/**
 * The tables' rows, inside the caller's transaction: indexes dropped and rebuilt around each
 * table's rows, the list-version trigger set aside. Returns the bumps owed for the tables whose
 * trigger was set aside.
 */
async function loadTables(
  database: SqliteBulkDatabase,
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  progress: LoadProgress,
  tally = new ListVersionTally(),
): Promise<ListVersionBump[]> {
  const statements = new Map<string, ReturnType<SqliteBulkDatabase['prepare']>>()
  const statement = (table: string, columns: readonly string[], rows: number) => {
    const key = `${table}:${rows}`
    let prepared = statements.get(key)
    if (prepared === undefined) {
      prepared = database.prepare(insertSql(table, columns, rows, () => '?', 'INSERT OR ROLLBACK'))
      statements.set(key, prepared)
    }
    return prepared
  }
  const owed = new Set<string>()
  let dropped: { name: string; sql: string }[] = []
  let trigger: string | undefined
  await walkBatches(codec, chunks, ROWS_PER_STATEMENT, progress, tally, {
    tableStart(table) {
      dropped = dropSqliteIndexes(database, table)
      trigger = setAsideTrigger(database, table)
      if (trigger === undefined) return undefined
      owed.add(table)
      return largestKeys(database, table)
    },
    batch(batch) {
      // Spread, not the array: better-sqlite3 binds arguments as they are, but reads an array
      // element by element through V8's object API, which made binding a third slower.
      if (batch.rows === ROWS_PER_STATEMENT) statement(batch.table, batch.columns, batch.rows).run(...batch.values)
      else {
        // The table's last rows: one statement each rather than one prepared for a single use.
        const width = batch.columns.length
        const single = statement(batch.table, batch.columns, 1)
        for (let row = 0; row < batch.rows; row++) single.run(...batch.values.slice(row * width, (row + 1) * width))
      }
    },
    tableDone() {
      for (const index of dropped) {
        database.exec(index.sql)
        progress.indexBuilt?.(index.name)
      }
      dropped = []
      if (trigger !== undefined) database.exec(trigger)
      trigger = undefined
    },
  })
  return tally.bumps().filter((bump) => owed.has(bump.table))
}

/** Ends a load: the list versions its set-aside triggers owe, then the commit. */
function commitLoad(database: SqliteBulkDatabase, bumps: readonly ListVersionBump[], progress: LoadProgress): void {
  applyListVersions(database, bumps)
  progress.stage?.('committing')
  database.exec('COMMIT')
}

/** Adds the bumps to `wfa_list_versions` in dataset table order: the order the triggers would have created its rows in. */
function applyListVersions(database: SqliteBulkDatabase, bumps: readonly ListVersionBump[]): void {
  if (bumps.length === 0) return
  const order = (bump: ListVersionBump) => DATASET_TABLES.findIndex((name) => fixtureTable(name).table === bump.table)
  const upsert = database.prepare(listVersionUpsert(() => '?'))
  for (const bump of [...bumps].sort((a, b) => order(a) - order(b))) {
    upsert.run(bump.companyId, bump.resource, bump.appends, bump.removals, bump.appends)
    database.prepare(listBlocksRecount(bump, () => '?')).run(bump.companyId)
  }
}

/** Drops `table`'s list-version insert trigger, if it has one; returns its SQL to create it again. */
function setAsideTrigger(database: SqliteBulkDatabase, table: string): string | undefined {
  const name = listVersionTrigger(table)
  if (name === undefined) return undefined
  const found = database.prepare(`SELECT sql FROM main.sqlite_master WHERE type = 'trigger' AND name = ? AND tbl_name = ?`).get(name, table) as
    | { sql: string }
    | undefined
  if (found === undefined) return undefined
  database.exec(`DROP TRIGGER main.${quoteIdentifier(name)}`)
  return found.sql
}

/** The largest list order key of each company in `table` now. */
function largestKeys(database: SqliteBulkDatabase, table: string): Map<number, number> {
  const key = quoteIdentifier(LIST_VERSIONED[table]!.orderedBy)
  const rows = database.prepare(`SELECT company_id AS company, max(${key}) AS largest FROM main.${quoteIdentifier(table)} GROUP BY company_id`).all() as {
    company: number
    largest: number
  }[]
  return new Map(rows.map(({ company, largest }) => [company, largest]))
}

/** Drops `table`'s indexes except those behind a PRIMARY KEY or UNIQUE constraint; returns them to rebuild. */
function dropSqliteIndexes(database: SqliteBulkDatabase, table: string): { name: string; sql: string }[] {
  // Constraint indexes (sqlite_autoindex_*) have no SQL and cannot be dropped.
  const indexes = database
    .prepare(`SELECT name, sql FROM main.sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name`)
    .all(table) as { name: string; sql: string }[]
  for (const { name } of indexes) database.exec(`DROP INDEX main.${quoteIdentifier(name)}`)
  return indexes
}

function isEmpty(database: SqliteBulkDatabase, table: string): boolean {
  return database.prepare(`SELECT 1 FROM main.${quoteIdentifier(table)} LIMIT 1`).get() === undefined
}

/**
 * Creates `tables` in the attached worker file as they are in ours, with their indexes (the copy
 * back needs the same columns and indexes on both sides) and without triggers. SQLite stores
 * each statement with its first two keywords in upper case, so the schema name goes after them.
 */
function createWorkerSchema(database: SqliteBulkDatabase, tables: readonly (keyof Dataset)[]): void {
  database.pragma(`${WORKER_SCHEMA}.page_size = ${Number(database.pragma('main.page_size', { simple: true }))}`)
  for (const name of tables) {
    const { table } = fixtureTable(name)
    const objects = database
      .prepare(`SELECT type, sql FROM main.sqlite_master WHERE tbl_name = ? AND type IN ('table', 'index') AND sql IS NOT NULL ORDER BY type DESC, name`)
      .all(table) as { type: 'table' | 'index'; sql: string }[]
    for (const { type, sql } of objects) {
      const keywords = type === 'table' ? /^CREATE TABLE /i : /^CREATE (UNIQUE )?INDEX /i
      if (!keywords.test(sql)) throw new Error(`bulk load: cannot copy the definition of ${table}: ${sql.slice(0, 60)}`)
      database.exec(sql.replace(keywords, (keywordsText) => `${keywordsText}${WORKER_SCHEMA}.`))
    }
  }
}

/**
 * Switches the connection to bulk settings: a large page cache, temporary B-trees in memory, a
 * rollback journal instead of WAL. Returns how to switch back.
 */
function useBulkSettings(database: SqliteBulkDatabase): () => void {
  const cacheSize = Number(database.pragma('cache_size', { simple: true }))
  const tempStore = Number(database.pragma('temp_store', { simple: true }))
  database.pragma(`cache_size = ${-BULK_CACHE_KIB}`)
  database.pragma('temp_store = MEMORY')
  const journal = useRollbackJournal(database)
  return () => {
    database.pragma(`cache_size = ${cacheSize}`)
    database.pragma(`temp_store = ${tempStore}`)
    journal.restore()
  }
}

/**
 * Switches a WAL database to a rollback journal for a bulk load. WAL writes every page twice
 * (the log, then the checkpoint into the file); a rollback journal saves only the pages that
 * existed before the transaction, so a load into a new database writes each page once, straight
 * into the file. SQLite refuses the switch while another connection is reading (SQLITE_BUSY):
 * the load then runs in WAL, only slower. Idle connections, in this process or another, follow
 * the switch and its undoing by themselves.
 */
function useRollbackJournal(database: SqliteBulkDatabase): { restore(): void } {
  const unchanged = { restore() {} }
  if (database.pragma('main.journal_mode', { simple: true }) !== 'wal') return unchanged
  try {
    if (database.pragma('main.journal_mode = DELETE', { simple: true }) !== 'delete') return unchanged
  } catch {
    return unchanged
  }
  return {
    restore() {
      try {
        database.pragma('main.journal_mode = WAL')
      } catch {
        // Busy: every adapter sets WAL again when it opens the database, so nothing is lost.
      }
    },
  }
}
