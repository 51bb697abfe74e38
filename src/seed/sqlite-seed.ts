import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { ListVersionBump, LoadProgress } from '../../adapters/sql/bulk-load.js'
import { expenses, projects, todos } from '../../adapters/sql/tables/index.js'
import { sqliteCodec } from '../../adapters/sqlite/sqlite-codec.js'
import { workerEntry } from '../../adapters/sqlite/worker-entry.js'
import {
  loadSqliteDatasetInParallel,
  loadSqliteDatasetStream,
  sqliteTablesEmpty,
  type SqliteBulkDatabase,
  type SqliteParallelLoader,
} from '../../adapters/sqlite/sqlite-bulk-load.js'
import { DATASET_TABLES, type Dataset } from '../ports/dataset.js'
import { seedRowCount, streamDataset, type SeedOptions } from './generate.js'
import type { SeedWorkerData, SeedWorkerMessage } from './sqlite-seed-protocol.js'

/** Below this many rows a seed loads on one thread: starting a worker and copying its tables would cost more than it saves. */
const PARALLEL_MIN_ROWS = 200_000
/**
 * The tables a seed worker makes, loads and indexes in a file of its own while the main thread
 * does the rest; the main thread then copies them in. Chosen by measurement at scale 1,000,000
 * so both threads finish together: the main thread's share plus the copy (about a sixth of what
 * building a table costs) equals the worker's share. To-dos are the widest table; projects,
 * expenses and absences carry five or six indexes each.
 */
const WORKER_TABLES: readonly (keyof Dataset)[] = [projects, expenses, todos].map((resource) => resource.listed.table.dataset)

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
 * Large seeds run on two threads (`loadSqliteDatasetInParallel`): a worker thread
 * (`sqlite-seed-worker.ts`) makes, loads and indexes `WORKER_TABLES` in a temporary file while
 * this thread makes and loads the other tables straight into `database`; then the worker's
 * tables are copied in. Either both halves commit or neither does.
 *
 * The parallel path needs the worker's tables empty (the copy appends to an empty table only);
 * otherwise, and for small seeds, the load runs on this thread alone (`loadSqliteDatasetStream`).
 */
export async function seedSqliteDatabase(database: SqliteBulkDatabase, options: SqliteSeedOptions = {}, progress: LoadProgress = {}): Promise<void> {
  const { parallel, ...seed } = options
  const wanted = parallel ?? (availableParallelism() > 1 && seedRowCount(seed) >= PARALLEL_MIN_ROWS)
  if (!wanted || !sqliteTablesEmpty(database, WORKER_TABLES)) {
    await loadSqliteDatasetStream(database, sqliteCodec, streamDataset(seed), progress)
    return
  }
  const mainTables = DATASET_TABLES.filter((name) => !WORKER_TABLES.includes(name))
  await loadSqliteDatasetInParallel(database, sqliteCodec, streamDataset({ ...seed, tables: mainTables }), seedWorkerLoader(seed.scale, progress), progress)
}

/** The seed worker as `loadSqliteDatasetInParallel`'s loader: a thread that makes and loads `WORKER_TABLES`. */
function seedWorkerLoader(scale: number | undefined, progress: LoadProgress): SqliteParallelLoader {
  return {
    tables: WORKER_TABLES,
    start(filename, cacheKib) {
      const worker = startSeedWorker({ filename, scale, tables: WORKER_TABLES, cacheKib })
      return { done: workerResult(worker, progress), stop: () => worker.terminate() }
    },
  }
}

/** Starts the seed worker on its file. */
function startSeedWorker(workerData: SeedWorkerData): Worker {
  const entry = workerEntry(import.meta.url, 'sqlite-seed-worker', 'seed', 'bulk load')
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
