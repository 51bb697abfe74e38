import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { Bench } from 'tinybench'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { KeyVerifier } from '../src/auth/key-verifier.js'
import { KeyManager } from '../src/keys/key-manager.js'
import { systemClock } from '../src/ports/clock.js'
import { removeSqliteFiles } from './sqlite-files.js'

export interface KeyBenchOptions {
  /** Where the temporary SQLite key store is created (and removed afterwards). */
  dir: string
  /** Milliseconds of measurement per case. */
  timeMs: number
  log: (line: string) => void
}

export interface KeyBenchRow {
  name: string
  opsPerSecond: number
  /** Microseconds. */
  meanMicros: number
  p99Micros: number
  /** Relative margin of error of the mean, percent. */
  rme: number
  samples: number
}

/** Keys cycled through by the "fresh key ids" case: more than its cache holds, so every call misses. */
const FRESH_KEYS = 512
const FRESH_CACHE_MAX = 128

/**
 * Micro-benchmarks of `KeyVerifier.verify` against a real SQLite key store (a temporary file,
 * WAL, as the adapter opens it). Every case is checked for the right answer before it is timed.
 */
export async function runKeyVerificationBench(options: KeyBenchOptions): Promise<KeyBenchRow[]> {
  const filename = join(options.dir, `key-store-${process.pid}.db`)
  removeSqliteFiles(filename)
  const adapter = await openSqliteAdapter({ filename })
  try {
    const keys = new KeyManager(adapter.keyStore, systemClock)
    const create = async () => (await keys.create({ companyId: 1, scopes: ['users:read'] })).key
    const key = await create()
    const fresh: string[] = []
    for (let i = 0; i < FRESH_KEYS; i++) fresh.push(await create())
    const wrongSecret = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0')
    const unknownId = `owk_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('hex')}`

    const cached = new KeyVerifier({ keyStore: adapter.keyStore, clock: systemClock })
    const uncached = new KeyVerifier({ keyStore: adapter.keyStore, clock: systemClock, cacheTtlMs: 0 })
    const small = new KeyVerifier({ keyStore: adapter.keyStore, clock: systemClock, cacheMax: FRESH_CACHE_MAX })
    let next = 0
    const nextFresh = () => fresh[next++ % FRESH_KEYS] as string

    const cases: Array<{ name: string; verify: () => Promise<unknown>; valid: boolean }> = [
      { name: 'cache hit (same key)', verify: () => cached.verify(key), valid: true },
      { name: 'cache miss (ttlMs 0, SQLite lookup)', verify: () => uncached.verify(key), valid: true },
      { name: `cache miss (${FRESH_KEYS} fresh ids, max ${FRESH_CACHE_MAX})`, verify: () => small.verify(nextFresh()), valid: true },
      { name: 'wrong secret (id cached)', verify: () => cached.verify(wrongSecret), valid: false },
      { name: 'unknown key id (negative cache)', verify: () => cached.verify(unknownId), valid: false },
    ]

    for (const { name, verify, valid } of cases) {
      const auth = await verify()
      if ((auth !== null) !== valid) throw new Error(`key verification case "${name}": expected ${valid ? 'a key' : 'null'}, got ${String(auth)}`)
    }

    const bench = new Bench({ time: options.timeMs, warmupTime: Math.min(500, options.timeMs), throws: true })
    for (const { name, verify } of cases) bench.add(name, verify)
    options.log(`keys: ${cases.length} cases, ${options.timeMs} ms each`)
    await bench.run()

    return bench.tasks.map((task) => {
      const result = task.result
      if (result.state !== 'completed') throw new Error(`key verification case "${task.name}" ended ${result.state}`)
      return {
        name: task.name,
        // Calls per second of measured time (1 / mean latency). tinybench's throughput.mean is
        // the mean of per-call rates, which the many fast calls pull well above that.
        opsPerSecond: 1000 / result.period,
        meanMicros: result.latency.mean * 1000,
        p99Micros: result.latency.p99 * 1000,
        rme: result.latency.rme,
        samples: result.latency.samplesCount,
      }
    })
  } finally {
    await adapter.close()
    removeSqliteFiles(filename)
  }
}
