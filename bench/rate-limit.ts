/**
 * What rate limiting costs: throughput of `GET /v1/users?per_page=25` for a small tenant with
 * rate limiting off, on with the local store, and on with the Redis store, each server in a
 * process of its own, alternated round by round in one run, loaded by autocannon on loopback.
 *
 * Usage: npx tsx bench/rate-limit.ts [--rounds 3] [--duration 8] [--redis redis://127.0.0.1:6379]
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { generateDataset } from '../src/seed/generate.js'
import { runLoad, type LoadResult } from './load-round.js'

const SMALL_COMPANY_ID = 2
const CONNECTIONS = 20
const WARMUP_S = 2
const MODES = ['off', 'local', 'redis'] as const
type Mode = (typeof MODES)[number]

const { values } = parseArgs({ options: { rounds: { type: 'string' }, duration: { type: 'string' }, redis: { type: 'string' } } })
const rounds = Number(values.rounds ?? 3)
const durationS = Number(values.duration ?? 8)
const redisUrl = values.redis ?? process.env.WORKFORCE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error('--rounds must be 1 to 20')
if (!Number.isInteger(durationS) || durationS < 1 || durationS > 120) throw new Error('--duration must be 1 to 120 seconds')

async function start(mode: Mode, filename: string): Promise<{ child: ChildProcess; url: string; key: string }> {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), new URL('./rate-limit-server.ts', import.meta.url).pathname, mode, filename, String(SMALL_COMPANY_ID), redisUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)))
  })
  const { url, key } = JSON.parse(line) as { url: string; key: string }
  return { child, url: `${url}/api/public/v1/users?per_page=25`, key }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

const directory = mkdtempSync(join(tmpdir(), 'wfa-bench-rate-limit-'))
try {
  const filename = join(directory, 'bench.db')
  const adapter = await openSqliteAdapter({ filename })
  await adapter.loadDataset(generateDataset())
  await adapter.close()
  console.log(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`GET /v1/users?per_page=25, company ${SMALL_COMPANY_ID}; ${rounds} rounds × (${WARMUP_S} s warm-up + ${durationS} s) per mode, ${CONNECTIONS} connections; Redis ${redisUrl}`)
  const results: Record<Mode, LoadResult[]> = { off: [], local: [], redis: [] }
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round, so no mode always runs first or last.
    for (const mode of [...MODES.slice(round % MODES.length), ...MODES.slice(0, round % MODES.length)]) {
      const server = await start(mode, filename)
      try {
        const headers = { 'x-api-key': server.key }
        await runLoad({ url: server.url, headers, connections: CONNECTIONS, durationS: WARMUP_S })
        const result = await runLoad({ url: server.url, headers, connections: CONNECTIONS, durationS })
        if (result.failures > 0) throw new Error(`${mode}: ${result.failures} failed requests`)
        results[mode].push(result)
        console.log(`round ${round + 1} ${mode.padEnd(5)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50.toFixed(2)} ms  p99 ${result.latency.p99.toFixed(2)} ms`)
      } finally {
        await stop(server.child)
      }
    }
  }
  const total = (mode: Mode) => results[mode].reduce((sum, r) => sum + r.requests, 0) / results[mode].reduce((sum, r) => sum + r.durationS, 0)
  console.log('')
  console.log('| mode | req/s | ratio to off | cost |')
  console.log('|---|---:|---:|---:|')
  for (const mode of MODES) {
    const ratio = total(mode) / total('off')
    console.log(`| ${mode} | ${total(mode).toFixed(0)} | ${(ratio * 100).toFixed(1)} % | ${((1 - ratio) * 100).toFixed(1)} % |`)
  }
  console.log('Targets: local store costs ≤ 5 %, Redis store ≤ 15 % of throughput.')
} finally {
  rmSync(directory, { recursive: true, force: true })
}
