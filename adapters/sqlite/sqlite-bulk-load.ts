import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Dataset } from '../../src/ports/dataset.js'
import { DATASET_TABLES, seedRowCount, streamDataset, type DatasetChunk, type SeedOptions } from '../../src/seed/generate.js'
import {
  insertSql,
  listVersionTrigger,
  listBlocksRecount,
  listVersionUpsert,
  LIST_VERSIONED,
  ListVersionTally,
  quoteIdentifier,
  walkBatches,
  YIELD_EVERY_MS,
  type ListVersionBump,
  type LoadProgress,
} from '../sql/bulk-load.js'
import type { SqlCodec } from '../sql/codec.js'
import { fixtureTable } from '../sql/sql-fixtures.js'
import { sqliteCodec } from './sqlite-codec.js'
import type { SeedWorkerData, SeedWorkerMessage } from './sqlite-seed-protocol.js'

/** Rows per multi-row INSERT: one prepared statement per this many (1,900 values for a to-do batch, far under the 32,766 limit). */
const ROWS_PER_STATEMENT = 100
/** The page cache during a bulk load (KiB): a table's pages stay in memory while its indexes are rebuilt. */
const BULK_CACHE_KIB = 256 * 1024
/** Below this many rows a seed loads on one thread: starting a worker and copying its tables would cost more than it saves. */
const PARALLEL_MIN_ROWS = 200_000
/**
 * The tables a seed worker makes, loads and indexes in a file of its own while the main thread
 * does the rest; the main thread then copies them in. Chosen by measurement at scale 1,000,000
 * so both threads finish together: the main thread's share plus the copy (about a sixth of what
 * building a table costs) equals the worker's share. To-dos are the widest table; projects,
 * expenses and absences carry five or six indexes each.
 */
const WORKER_TABLES: readonly (keyof Dataset)[] = ['projects', 'expenses', 'todos']
/** The schema name the worker's file is attached under. */
const WORKER_SCHEMA = 'wfa_seed_worker'

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
 * Loads streamed rows (`streamDataset`) into SQLite in one transaction: all of it or none of
 * it, like `loadDataset`, in memory bounded by one chunk. What makes it fast:
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
    const bumps = await loadTables(database, codec, chunks, progress)
    applyListVersions(database, bumps)
    progress.stage?.('committing')
    database.exec('COMMIT')
  } catch (error) {
    if (database.inTransaction) database.exec('ROLLBACK')
    throw error
  } finally {
    restore()
  }
}

export interface SqliteSeedOptions extends SeedOptions {
  /**
   * Load on two threads: a worker makes some tables in a file of its own while this thread
   * makes the others, then they are copied in. Default: when the machine has two cores or
   * more and the seed has at least 200,000 rows.
   */
  parallel?: boolean
}

/**
 * Seeds `database` with `generateDataset(options)`, in one transaction: `workforce-api seed`.
 * Large seeds run on two threads. A worker thread makes, loads and indexes `WORKER_TABLES`
 * in a temporary file while this thread loads the other tables straight into `database` (as
 * `loadSqliteDatasetStream`); then SQLite copies the worker's tables in whole, rows and index
 * entries already in order, which costs about a sixth of building them. Either both halves
 * commit or neither does; the temporary file is deleted either way.
 *
 * The parallel path needs the worker's tables empty (the copy appends to an empty table only);
 * otherwise, and for small seeds, the load runs on this thread alone.
 */
export async function seedSqliteDatabase(database: SqliteBulkDatabase, options: SqliteSeedOptions = {}, progress: LoadProgress = {}): Promise<void> {
  const { parallel, ...seed } = options
  const wanted = parallel ?? (availableParallelism() > 1 && seedRowCount(seed) >= PARALLEL_MIN_ROWS)
  if (!wanted || !WORKER_TABLES.every((name) => isEmpty(database, fixtureTable(name).table))) {
    await loadSqliteDatasetStream(database, sqliteCodec, streamDataset(seed), progress)
    return
  }
  const directory = mkdtempSync(join(tmpdir(), 'wfa-seed-'))
  const restore = useBulkSettings(database)
  let attached = false
  let worker: Worker | undefined
  try {
    const filename = join(directory, 'worker.db')
    database.exec(`ATTACH DATABASE '${filename.replace(/'/g, "''")}' AS ${WORKER_SCHEMA}`)
    attached = true
    createWorkerSchema(database, WORKER_TABLES)
    // Deferred, not IMMEDIATE: IMMEDIATE would take the attached file's write lock too, which
    // the worker needs. The first INSERT takes ours, a moment later.
    database.exec('BEGIN')
    worker = startSeedWorker({ filename, scale: seed.scale, tables: WORKER_TABLES, cacheKib: BULK_CACHE_KIB })
    const workerDone = workerResult(worker, progress)
    // Awaited below; until then a failure must not count as unhandled.
    workerDone.catch(() => {})
    const mainTables = DATASET_TABLES.filter((name) => !WORKER_TABLES.includes(name))
    const bumps = await loadTables(database, sqliteCodec, streamDataset({ ...seed, tables: mainTables }), progress)
    progress.stage?.('waiting for the worker')
    const workerBumps = await workerDone
    for (const name of WORKER_TABLES) {
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
    applyListVersions(database, bumps)
    progress.stage?.('committing')
    database.exec('COMMIT')
  } catch (error) {
    if (database.inTransaction) database.exec('ROLLBACK')
    throw error
  } finally {
    await worker?.terminate()
    if (attached) database.exec(`DETACH DATABASE ${WORKER_SCHEMA}`)
    restore()
    rmSync(directory, { recursive: true, force: true })
  }
}

/**
 * The seed worker's side (`sqlite-seed-worker.ts`): makes its tables' rows and loads them into
 * its own file, which nobody else reads until it is closed, so without journal, sync or lock
 * traffic. Returns the list-version bumps the main thread owes for them.
 */
export async function fillSeedWorkerDatabase(
  database: SqliteBulkDatabase,
  data: Pick<SeedWorkerData, 'scale' | 'tables' | 'cacheKib'>,
  progress: LoadProgress,
): Promise<ListVersionBump[]> {
  database.pragma('journal_mode = OFF')
  database.pragma('synchronous = OFF')
  database.pragma('locking_mode = EXCLUSIVE')
  database.pragma(`cache_size = ${-data.cacheKib}`)
  database.pragma('temp_store = MEMORY')
  database.exec('BEGIN')
  const tally = new ListVersionTally()
  const chunks = streamDataset({ ...(data.scale === undefined ? {} : { scale: data.scale }), tables: data.tables })
  await loadTables(database, sqliteCodec, chunks, progress, tally)
  database.exec('COMMIT')
  // The worker's file has no triggers: every bump is owed, whatever was set aside here.
  return tally.bumps()
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

// ---------------------------------------------------------------------------------------------
// The worker thread

/** Starts the seed worker on its file. */
function startSeedWorker(workerData: SeedWorkerData): Worker {
  const entry = seedWorkerEntry()
  return new Worker(entry.entry, { workerData, eval: entry.eval })
}

/** The worker's bumps once it has loaded and closed its file; its rows and indexes reported as they come. */
function workerResult(worker: Worker, progress: LoadProgress): Promise<ListVersionBump[]> {
  return new Promise((resolve, reject) => {
    let done: ListVersionBump[] | undefined
    worker.on('message', (message: SeedWorkerMessage) => {
      if (message.type === 'rows') progress.rowsLoaded?.(message.count)
      else if (message.type === 'index') progress.indexBuilt?.(message.name)
      else done = message.bumps
    })
    worker.on('error', reject)
    worker.on('exit', (code) => {
      if (done !== undefined) resolve(done)
      else reject(new Error(`bulk load: the seed worker stopped (exit code ${code}) before it finished`))
    })
  })
}

/**
 * Where the worker entry is, wherever this code runs (as `SqliteReadPool` finds its worker):
 * - bundled by tsup: `dist/adapters/sqlite/sqlite-seed-worker.js` (an entry of its own), seen
 *   from the CLI or a chunk at `dist/`;
 * - from source (tsx, vitest): `./sqlite-seed-worker.ts` beside this file, which registers
 *   tsx's CommonJS hook itself (Node 20 runs neither a `.ts` worker nor `--import` hooks in workers).
 */
function seedWorkerEntry(): { entry: URL | string; eval: boolean } {
  const here = import.meta.url
  const extension = /\.(ts|cjs|mjs|js)$/.exec(new URL(here).pathname)?.[1] ?? 'js'
  const name = `sqlite-seed-worker.${extension}`
  const candidates = [new URL(`./${name}`, here), new URL(`./adapters/sqlite/${name}`, here)]
  const url = candidates.find((candidate) => existsSync(fileURLToPath(candidate)))
  if (url === undefined) throw new Error(`bulk load: seed worker entry not found; looked for ${candidates.map((c) => fileURLToPath(c)).join(', ')}`)
  if (extension !== 'ts') return { entry: url, eval: false }
  const tsx = createRequire(here).resolve('tsx/cjs/api')
  return { entry: `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(fileURLToPath(url))})`, eval: true }
}

/** A worker's progress, sent to the main thread at most every `YIELD_EVERY_MS` rather than per chunk. */
export function postedProgress(post: (message: SeedWorkerMessage) => void): LoadProgress & { flush(): void } {
  let rows = 0
  let sentAt = Date.now()
  const flush = () => {
    if (rows > 0) post({ type: 'rows', count: rows })
    rows = 0
    sentAt = Date.now()
  }
  return {
    rowsLoaded(count) {
      rows += count
      if (Date.now() - sentAt >= YIELD_EVERY_MS) flush()
    },
    indexBuilt(name) {
      flush()
      post({ type: 'index', name })
    },
    flush,
  }
}
