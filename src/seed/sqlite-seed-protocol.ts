/** Messages between `seedSqliteDatabase` (main thread) and `sqlite-seed-worker.ts`, and the worker's progress as messages. */
import { YIELD_EVERY_MS, type ListVersionBump, type LoadProgress } from '../../adapters/sql/bulk-load.js'
import type { Dataset } from '../ports/dataset.js'

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
