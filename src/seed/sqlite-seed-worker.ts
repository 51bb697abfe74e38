/**
 * Worker-thread entry of `seedSqliteDatabase`: makes some of the seed's tables and loads them,
 * indexed, into a file of its own, which the main thread then copies in. It reports rows and
 * indexes as it goes, and its list-version bumps once the file is closed (closing releases the
 * file's lock, so the main thread may read it).
 */
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'
import { fillSqliteFile } from '../../adapters/sqlite/sqlite-bulk-load.js'
import { sqliteCodec } from '../../adapters/sqlite/sqlite-codec.js'
import { streamDataset } from './generate.js'
import { postedProgress, type SeedWorkerData, type SeedWorkerMessage } from './sqlite-seed-protocol.js'

const post = (message: SeedWorkerMessage) => (parentPort as NonNullable<typeof parentPort>).postMessage(message)

async function run(data: SeedWorkerData): Promise<void> {
  const database = new Database(data.filename, { fileMustExist: true })
  const progress = postedProgress(post)
  let bumps
  try {
    const chunks = streamDataset({ ...(data.scale === undefined ? {} : { scale: data.scale }), tables: data.tables })
    bumps = await fillSqliteFile(database, sqliteCodec, chunks, data.cacheKib, progress)
  } finally {
    database.close()
  }
  progress.flush()
  post({ type: 'done', bumps })
}

// Thrown outside the promise, so the main thread gets it as the worker's 'error' (this file
// also runs as CommonJS from source, where there is no top-level await).
run(workerData as SeedWorkerData).catch((error: unknown) => {
  setImmediate(() => {
    throw error
  })
})
