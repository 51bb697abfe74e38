import { fork, type ChildProcess } from 'node:child_process'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import type { ContentionServerMessage, ReadMode } from './contention-server.js'

const SERVER_ENTRY = fileURLToPath(new URL('./contention-server.ts', import.meta.url))
const READY_TIMEOUT_MS = 120_000
const CLOSE_TIMEOUT_MS = 15_000
/** The tenant that loops the expensive query (the seed gives it `scale` rows of everything). */
const BIG_COMPANY = 1
/** The tenant whose cheap reads are timed (the seed gives it 45 rows of everything). */
const SMALL_COMPANY = 2
/** Every to-do has its due day or instant in this range: the widest valid window, the costliest filter. */
const WIDE_DUE = 'due_from=0001-01-01&due_to=9999-12-31'
const PER_PAGE = 100
/** Upper bound on timed requests per phase, whatever the duration. */
const MAX_REQUESTS = 200_000
/** Measured seconds without the expensive loop: the cheap reads' baseline in each mode. */
const IDLE_S = 3

export interface ContentionOptions {
  filename: string
  /** Seconds the expensive loop and the timed cheap reads run, per mode. */
  durationS: number
  log: (line: string) => void
}

export interface LatencySummary {
  requests: number
  /** Milliseconds, nearest-rank percentiles of every response's time. */
  p50: number
  p99: number
  max: number
  /** Answers other than 200 (a 503 from a timed-out off-loop read, say). */
  failures: number
  /** The first such answer's status and the start of its body, to tell why. */
  firstFailure?: string
}

export interface ContentionPhase {
  /** `idle`: cheap reads alone; `contended`: while company 1 loops the expensive query. */
  phase: 'idle' | 'contended'
  /** Company 2, `GET /v1/users`. */
  cheapUsers: LatencySummary
  /** Company 2, the very query company 1 loops (same statement shape, 45 rows). */
  cheapSameShape: LatencySummary
  /** Company 1's expensive loop (contended phase only). */
  expensive?: LatencySummary
  loadAverage: number
}

export interface ContentionResult {
  mode: ReadMode
  readWorkers: number
  expensivePath: string
  phases: ContentionPhase[]
}

/**
 * One tenant loops its most expensive valid read while another's cheap reads are timed, for
 * each read mode in turn, each in a fresh server process over the same file: `in-process`
 * (every query on the event loop, as before read workers) and `off-loop` (the default for a
 * file: slow shapes go to worker threads). One client connection loops the expensive query
 * (the last page of the widest due-date range), another times the cheap reads in sequence.
 */
export async function runContentionBench(options: ContentionOptions): Promise<ContentionResult[]> {
  const results: ContentionResult[] = []
  for (const mode of ['in-process', 'off-loop'] as const) {
    const server = await startServer(mode, options.filename)
    try {
      const big = { 'x-api-key': server.keys[BIG_COMPANY] as string }
      const small = { 'x-api-key': server.keys[SMALL_COMPANY] as string }
      const first = (await getJson(`${server.baseUrl}/v1/todos?${WIDE_DUE}&per_page=${PER_PAGE}`, big)) as { pagination: { total_pages: number } }
      const expensivePath = `/v1/todos?${WIDE_DUE}&per_page=${PER_PAGE}&page=${first.pagination.total_pages}`
      const cheap = [`${server.baseUrl}/v1/users`, `${server.baseUrl}/v1/todos?${WIDE_DUE}`]
      // Warm-up, unmeasured: statements prepared, and in off-loop mode the expensive shape
      // seen slow once (its one run on the event loop) and sent to the workers.
      for (let i = 0; i < 3; i++) await getJson(`${server.baseUrl}${expensivePath}`, big)
      for (let i = 0; i < 50; i++) for (const url of cheap) await getJson(url, small)

      const phases: ContentionPhase[] = []
      for (const phase of ['idle', 'contended'] as const) {
        const loadAverage = loadavg()[0] as number
        const deadline = performance.now() + (phase === 'idle' ? IDLE_S : options.durationS) * 1000
        const [timed, expensive] = await Promise.all([
          timeAlternating(cheap, small, deadline),
          phase === 'contended' ? timeLoop(`${server.baseUrl}${expensivePath}`, big, deadline) : Promise.resolve(undefined),
        ])
        const [cheapUsers, cheapSameShape] = timed as [LatencySummary, LatencySummary]
        phases.push({ phase, cheapUsers, cheapSameShape, ...(expensive === undefined ? {} : { expensive }), loadAverage })
        for (const summary of [cheapUsers, cheapSameShape, expensive]) {
          if (summary?.firstFailure !== undefined) options.log(`contention: ${mode} ${phase}: ${summary.failures} non-200 answers, the first: ${summary.firstFailure}`)
        }
        options.log(
          `contention: ${mode.padEnd(10)} ${phase.padEnd(9)} company ${SMALL_COMPANY} users p50 ${cheapUsers.p50.toFixed(2)} ms p99 ${cheapUsers.p99.toFixed(2)} ms; ` +
            `same shape p50 ${cheapSameShape.p50.toFixed(2)} ms p99 ${cheapSameShape.p99.toFixed(2)} ms` +
            (expensive === undefined ? '' : `; company ${BIG_COMPANY} expensive ×${expensive.requests} p50 ${expensive.p50.toFixed(0)} ms`),
        )
      }
      results.push({ mode, readWorkers: server.readWorkers, expensivePath, phases })
    } finally {
      await server.close()
    }
  }
  return results
}

/** Times GETs of each of `urls` in turn, one at a time, until `deadline`: one summary per URL. */
async function timeAlternating(urls: string[], headers: Record<string, string>, deadline: number): Promise<LatencySummary[]> {
  const samples = urls.map(() => ({ times: [] as number[], failures: 0, firstFailure: undefined as string | undefined }))
  for (let n = 0; performance.now() < deadline && n < MAX_REQUESTS; n++) {
    const index = n % urls.length
    const sample = samples[index] as (typeof samples)[number]
    const started = performance.now()
    const response = await fetch(urls[index] as string, { headers })
    const body = await response.text()
    if (response.status === 200) {
      sample.times.push(performance.now() - started)
    } else {
      sample.failures++
      sample.firstFailure ??= `${response.status} ${body.slice(0, 160)}`
    }
  }
  return samples.map((sample) => ({ ...summarise(sample.times, sample.failures), ...(sample.firstFailure === undefined ? {} : { firstFailure: sample.firstFailure }) }))
}

/** GETs `url` back to back until `deadline` (the request in flight at the deadline is awaited). */
async function timeLoop(url: string, headers: Record<string, string>, deadline: number): Promise<LatencySummary> {
  return (await timeAlternating([url], headers, deadline))[0] as LatencySummary
}

async function getJson(url: string, headers: Record<string, string>): Promise<unknown> {
  const response = await fetch(url, { headers })
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${await response.text()}`)
  return response.json()
}

function summarise(times: number[], failures: number): LatencySummary {
  const sorted = Float64Array.from(times).sort()
  const at = (fraction: number) => (sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] as number))
  return { requests: sorted.length, p50: at(0.5), p99: at(0.99), max: at(1), failures }
}

interface ContentionServer {
  baseUrl: string
  keys: Record<number, string>
  readWorkers: number
  close(): Promise<void>
}

async function startServer(mode: ReadMode, filename: string): Promise<ContentionServer> {
  const child = fork(SERVER_ENTRY, [mode, filename, `${BIG_COMPANY},${SMALL_COMPANY}`], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const ready = await new Promise<Extract<ContentionServerMessage, { type: 'ready' }>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`contention server (${mode}) not ready within ${READY_TIMEOUT_MS} ms`))
    }, READY_TIMEOUT_MS)
    child.on('message', (message: ContentionServerMessage) => {
      clearTimeout(timer)
      if (message.type === 'ready') resolve(message)
      else reject(new Error(`contention server (${mode}) failed:\n${message.message}`))
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`contention server (${mode}) exited with ${String(code)}`))
    })
  })
  return { ...ready, close: () => closeChild(child) }
}

async function closeChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.send({ type: 'close' })
  const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS)
  await exited
  clearTimeout(timer)
}

/** The figures as a table for the report. */
export function contentionTable(results: ContentionResult[], options: { scale: number; durationS: number }): string {
  const ms = (value: number) => (Number.isNaN(value) ? '–' : value.toFixed(value < 10 ? 2 : 0))
  const rows: string[][] = []
  for (const result of results) {
    for (const phase of result.phases) {
      rows.push([
        `${result.mode} (${result.readWorkers} workers)`,
        phase.phase,
        `${ms(phase.cheapUsers.p50)} / ${ms(phase.cheapUsers.p99)} / ${ms(phase.cheapUsers.max)}`,
        `${ms(phase.cheapSameShape.p50)} / ${ms(phase.cheapSameShape.p99)} / ${ms(phase.cheapSameShape.max)}`,
        String(phase.cheapUsers.requests + phase.cheapSameShape.requests),
        phase.expensive === undefined ? '' : `${phase.expensive.requests} × ${ms(phase.expensive.p50)}`,
        String(phase.cheapUsers.failures + phase.cheapSameShape.failures + (phase.expensive?.failures ?? 0)),
        phase.loadAverage.toFixed(2),
      ])
    }
  }
  const header = ['read mode', 'phase', 'c2 users p50/p99/max ms', 'c2 same shape p50/p99/max ms', 'cheap reqs', 'c1 expensive n × p50 ms', 'non-200', 'load 1m']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) => cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ')
  const expensivePath = results[0]?.expensivePath ?? ''
  return [
    `SQLite contention, scale ${options.scale}: company ${BIG_COMPANY} loops GET ${expensivePath} on one connection while company ${SMALL_COMPANY}'s ` +
      `GET /v1/users and GET /v1/todos?${WIDE_DUE} are timed on another (${IDLE_S} s idle, then ${options.durationS} s contended, per mode)`,
    [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n'),
  ].join('\n')
}
