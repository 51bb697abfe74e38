/** Messages between `SqliteReadPool` (main thread) and `sqlite-read-worker.ts`. Types only. */

/** What a read worker is started with (`workerData`). */
export interface ReadWorkerData {
  /** The database file; opened read-only, and it must exist. */
  filename: string
  /** SQLite's busy timeout on the worker's connection, milliseconds. */
  busyTimeoutMs: number
  /** The page cache of the worker's connection, KiB. */
  cacheKib: number
}

/** Main → worker: run one prepared statement. */
export interface ReadRequest {
  id: number
  sql: string
  values: unknown[]
}

/** Worker → main: the rows and how long the statement ran, not counting waits for a CPU where the OS tells them (ms), or why it failed. */
export type ReadReply =
  | { id: number; rows: Record<string, unknown>[]; ms: number; error?: undefined }
  | { id: number; error: { message: string; code?: string }; rows?: undefined }
