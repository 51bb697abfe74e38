/** Messages between `seedSqliteDatabase` (main thread) and `sqlite-seed-worker.ts`. Types only. */
import type { Dataset } from '../../src/ports/dataset.js'
import type { ListVersionBump } from '../sql/bulk-load.js'

export interface SeedWorkerData {
  /** The worker's own database file, its tables already created (empty, with their indexes). */
  filename: string
  scale: number | undefined
  /** The dataset tables this worker makes and loads. */
  tables: readonly (keyof Dataset)[]
  /** Its page cache during the load, in KiB. */
  cacheKib: number
}

export type SeedWorkerMessage =
  | { type: 'rows'; count: number }
  | { type: 'index'; name: string }
  /** Loaded, indexed and closed: the main thread may copy its tables. */
  | { type: 'done'; bumps: ListVersionBump[] }
