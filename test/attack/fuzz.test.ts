import { describe } from 'vitest'
import type { FuzzSettings } from './fuzz-run.js'
import { defineFuzzTests } from './fuzz-suite.js'
import { MEMORY, SQLITE, startServer, type AttackBackend } from './harness.js'

/**
 * Issue 8: property-based fuzzing of every route over real HTTP, on memory and SQLite
 * (Postgres: fuzz.postgres.test.ts). Replay a run with WORKFORCE_FUZZ_SEED=<seed>.
 */

/** Per backend; with Postgres's 3,000 (fuzz.postgres.test.ts), over 10,000 generated requests per CI run. */
const SETTINGS: Record<string, FuzzSettings> = {
  memory: { target: 4_000, batchSize: 50, readConcurrency: 3 },
  sqlite: { target: 3_500, batchSize: 50, readConcurrency: 3 },
}

describe.each([MEMORY, SQLITE])('fuzzing every route over HTTP ($name)', (backend: AttackBackend) => {
  defineFuzzTests(backend.name, SETTINGS[backend.name] as FuzzSettings, () => startServer(backend))
})
