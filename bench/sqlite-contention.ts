import { fork, type ChildProcess } from 'node:child_process'
import { copyFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { removeSqliteFiles } from './sqlite-files.js'
import type { ContentionServerMessage, ReadMode } from './contention-server.js'

const SERVER_ENTRY = fileURLToPath(new URL('./contention-server.ts', import.meta.url))
const READY_TIMEOUT_MS = 120_000
const CLOSE_TIMEOUT_MS = 15_000
/** The tenant that loops the query (the seed gives it `scale` rows of everything). */
const BIG_COMPANY = 1
/** The tenant whose cheap GET is timed (the seed gives it 45 rows of everything). */
const SMALL_COMPANY = 2
/** Company 1's requests in flight at once, each on its own connection. */
export const LOOPERS = 4
/** Every to-do has its due day or instant in this range: the widest valid window. */
const WIDE_DUE = 'due_from=0001-01-01&due_to=9999-12-31'
/** Upper bound on timed requests per phase, whatever the duration. */
const MAX_REQUESTS = 200_000
/** Measured seconds without the loop: the cheap GET's baseline, in the same server. */
const IDLE_S = 3
/** Sequential runs of the looped query after the load, to tell what one costs alone. */
const SOLO_RUNS = 5
/** Distinct days the varying queries cycle through (1900 onwards: every row matches them all). */
const DAYS = 40_000

/** A different valid day for each `i`: the filter's value changes, its shape does not. */
const day = (i: number) => new Date(Date.UTC(1900, 0, 1) + (i % DAYS) * 86_400_000).toISOString().slice(0, 10)

/**
 * What company 1 loops. The varying ones change a filter's value on every request, so no
 * total or page boundary is ever remembered (`src/api/list-pages.ts`): each request costs
 * what a first one does, as a client paging through ever new filters would.
 */
export const CONTENTION_CASES = {
  /** The query issue 21 names: the widest due range, page 1, the same URL every time (cheap once its total is known). */
  issue: { about: `GET /v1/todos?${WIDE_DUE} (the same URL each time)`, path: (_i: number) => `/v1/todos?${WIDE_DUE}` },
  /** About 10–15 ms in process at 100,000 rows: a COUNT over every shift and page 1. */
  moderate: {
    about: 'GET /v1/shifts?date_from=<a new day each time>&date_to=9999-12-31&per_page=100',
    path: (i: number) => `/v1/shifts?date_from=${day(i)}&date_to=9999-12-31&per_page=100`,
  },
  /** The costliest valid request found at 100,000 rows: 200–300 ms in process (COUNT plus a 50,000-row skip). */
  expensive: {
    about: 'GET /v1/shifts?updated_since=<new>&date_from=<new>&date_to=9999-12-31&per_page=100&page=500',
    path: (i: number) => `/v1/shifts?updated_since=${day(i)}T00:00:00Z&date_from=${day(i)}&date_to=9999-12-31&per_page=100&page=500`,
  },
} as const

export type ContentionCase = keyof typeof CONTENTION_CASES

export interface ContentionOptions {
  /** The seeded SQLite file (modes `in-process` and `off-loop`). */
  filename: string
  /** The seeded Postgres database (mode `postgres`). */
  postgresUrl?: string
  /** Seconds the loop and the timed cheap GET run, per mode and case. */
  durationS: number
  /** Default: `off-loop` (the default for a SQLite file), and `postgres` when `postgresUrl` is given. */
  modes?: ReadMode[]
  /** Default: every case. */
  cases?: ContentionCase[]
  log: (line: string) => void
}

export interface LatencySummary {
  requests: number
  /** Milliseconds, nearest-rank percentiles of every response's time. */
  p50: number
  p99: number
  max: number
  /** Answers other than 200 (a 503 from a timed-out read, a 429 from a full queue). */
  failures: number
  /** The first such answer's status and the start of its body, to tell why. */
  firstFailure?: string
}

export interface ContentionPhase {
  /** `idle`: the cheap GET alone; `contended`: while company 1 loops its query `LOOPERS` at a time. */
  phase: 'idle' | 'contended'
  /** Company 2, `GET /v1/company`. */
  company: LatencySummary
  /** Company 2, `GET /v1/users` (45 rows): a cheap list, which passes the same read path. */
  users: LatencySummary
  /** Company 1's loop, all `LOOPERS` connections together (contended phase only). */
  loop?: LatencySummary
  loadAverage: number
}

export interface ContentionResult {
  mode: ReadMode
  case: ContentionCase
  readWorkers: number
  /** The looped query's first path. */
  path: string
  phases: ContentionPhase[]
  /** The looped query alone after the load, sequential, through whatever path the server chose by then (ms). */
  soloP50: number
}

/**
 * One tenant loops a valid query `LOOPERS` at a time while another's cheap GETs are timed, for
 * each read mode and case in turn, each in a fresh server process (so a shape's first, costly
 * runs are part of the measurement): first `IDLE_S` seconds of the cheap GETs alone, then
 * `durationS` with the loop. Nothing is warmed up but the cheap GETs themselves.
 */
export async function runContentionBench(options: ContentionOptions): Promise<ContentionResult[]> {
  const modes = options.modes ?? (['off-loop', ...(options.postgresUrl === undefined ? [] : ['postgres'])] as ReadMode[])
  const cases = options.cases ?? (Object.keys(CONTENTION_CASES) as ContentionCase[])
  const results: ContentionResult[] = []
  for (const mode of modes) {
    const scratch = mode === 'postgres' ? await postgresScratch(options.postgresUrl) : sqliteScratch(options.filename)
    try {
      for (const name of cases) {
        const server = await startServer(mode, scratch.target)
        try {
          results.push(await measureCase(server, mode, name, options))
        } finally {
          await server.close()
        }
      }
    } finally {
      await scratch.drop()
    }
  }
  return results
}

/**
 * The servers read a copy of the fixture, which they migrate: the code under test (this tree,
 * or an older one for "before" figures) may have migrations the fixture lacks, and the fixture
 * stays as seeded for the next run, whichever tree it is.
 */
interface Scratch {
  target: string
  drop(): Promise<void>
}

function sqliteScratch(filename: string): Scratch {
  const target = `${filename}.contention-${process.pid}`
  removeSqliteFiles(target)
  copyFileSync(filename, target)
  return { target, drop: async () => removeSqliteFiles(target) }
}

async function postgresScratch(fixtureUrl: string | undefined): Promise<Scratch> {
  if (fixtureUrl === undefined) throw new Error('contention: mode "postgres" needs postgresUrl')
  const fixture = new URL(fixtureUrl)
  const template = fixture.pathname.slice(1)
  const name = `${template}_run_${process.pid}`
  const adminUrl = new URL(fixtureUrl)
  adminUrl.pathname = '/postgres'
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl.toString() })
    await client.connect()
    await client.query(statement).finally(() => client.end())
  }
  await admin(`drop database if exists ${pg.escapeIdentifier(name)}`)
  await admin(`create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(template)}`)
  const target = new URL(fixtureUrl)
  target.pathname = `/${name}`
  return { target: target.toString(), drop: () => admin(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`) }
}

async function measureCase(server: ContentionServer, mode: ReadMode, name: ContentionCase, options: ContentionOptions): Promise<ContentionResult> {
  const big = { 'x-api-key': server.keys[BIG_COMPANY] as string }
  const small = { 'x-api-key': server.keys[SMALL_COMPANY] as string }
  const cheap = [`${server.baseUrl}/v1/company`, `${server.baseUrl}/v1/users`]
  const { path } = CONTENTION_CASES[name]
  // Warm-up of the cheap GETs only (statements prepared, key cached, connections open).
  for (let i = 0; i < 50; i++) for (const url of cheap) await getJson(url, small)

  let next = 0
  const phases: ContentionPhase[] = []
  for (const phase of ['idle', 'contended'] as const) {
    const loadAverage = loadavg()[0] as number
    const deadline = performance.now() + (phase === 'idle' ? IDLE_S : options.durationS) * 1000
    const loop =
      phase === 'contended'
        ? Promise.all(Array.from({ length: LOOPERS }, () => timeRequests(() => `${server.baseUrl}${path(next++)}`, big, deadline))).then(merge)
        : Promise.resolve(undefined)
    const [timed, looped] = await Promise.all([timeAlternating(cheap, small, deadline), loop])
    const [company, users] = timed as [LatencySummary, LatencySummary]
    phases.push({ phase, company, users, ...(looped === undefined ? {} : { loop: looped }), loadAverage })
    for (const summary of [company, users, looped]) {
      if (summary?.firstFailure !== undefined) options.log(`contention: ${mode} ${name} ${phase}: ${summary.failures} non-200 answers, the first: ${summary.firstFailure}`)
    }
    options.log(
      `contention: ${mode.padEnd(10)} ${name.padEnd(9)} ${phase.padEnd(9)} company ${SMALL_COMPANY} /v1/company p50 ${company.p50.toFixed(2)} ms p99 ${company.p99.toFixed(2)} ms; ` +
        `/v1/users p50 ${users.p50.toFixed(2)} p99 ${users.p99.toFixed(2)}` +
        (looped === undefined ? '' : `; company ${BIG_COMPANY} ${LOOPERS}× loop ×${looped.requests} p50 ${looped.p50.toFixed(0)} ms`),
    )
  }
  const solo = await timeRequests(() => `${server.baseUrl}${path(next++)}`, big, Number.POSITIVE_INFINITY, SOLO_RUNS)
  return { mode, case: name, readWorkers: server.readWorkers, path: path(0), phases, soloP50: summarise(solo).p50 }
}

/** Times GETs of each of `urls` in turn, one at a time, until `deadline`: one summary per URL. */
async function timeAlternating(urls: string[], headers: Record<string, string>, deadline: number): Promise<LatencySummary[]> {
  let n = 0
  const samples = urls.map(() => newSample())
  while (performance.now() < deadline && n < MAX_REQUESTS) {
    const index = n++ % urls.length
    await timeOne(urls[index] as string, headers, samples[index] as Sample)
  }
  return samples.map(summarise)
}

/** Times GETs of `url()` one at a time until `deadline` or `limit` requests. */
async function timeRequests(url: () => string, headers: Record<string, string>, deadline: number, limit = MAX_REQUESTS): Promise<Sample> {
  const sample = newSample()
  for (let n = 0; performance.now() < deadline && n < limit; n++) await timeOne(url(), headers, sample)
  return sample
}

interface Sample {
  times: number[]
  failures: number
  firstFailure: string | undefined
}

const newSample = (): Sample => ({ times: [], failures: 0, firstFailure: undefined })

async function timeOne(url: string, headers: Record<string, string>, sample: Sample): Promise<void> {
  const started = performance.now()
  const response = await fetch(url, { headers })
  const body = await response.text()
  if (response.status === 200) {
    sample.times.push(performance.now() - started)
  } else {
    sample.failures++
    sample.firstFailure ??= `${response.status} ${body.slice(0, 160)}`
  }
}

function merge(samples: Sample[]): LatencySummary {
  return summarise({
    times: samples.flatMap((s) => s.times),
    failures: samples.reduce((n, s) => n + s.failures, 0),
    firstFailure: samples.find((s) => s.firstFailure !== undefined)?.firstFailure,
  })
}

async function getJson(url: string, headers: Record<string, string>): Promise<unknown> {
  const response = await fetch(url, { headers })
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${await response.text()}`)
  return response.json()
}

function summarise(sample: Sample | { times: number[]; failures: number; firstFailure: string | undefined }): LatencySummary {
  const sorted = Float64Array.from(sample.times).sort()
  const at = (fraction: number) => (sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] as number))
  return {
    requests: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
    failures: sample.failures,
    ...(sample.firstFailure === undefined ? {} : { firstFailure: sample.firstFailure }),
  }
}

interface ContentionServer {
  baseUrl: string
  keys: Record<number, string>
  readWorkers: number
  close(): Promise<void>
}

async function startServer(mode: ReadMode, target: string): Promise<ContentionServer> {
  const child = fork(SERVER_ENTRY, [mode, target, `${BIG_COMPANY},${SMALL_COMPANY}`], {
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

/** The figures as a table for the report: company 2's `GET /v1/company` idle and loaded, absolute and as ratios. */
export function contentionTable(results: ContentionResult[], options: { scale: number; durationS: number }): string {
  const ms = (value: number) => (Number.isNaN(value) ? '–' : value.toFixed(value < 10 ? 2 : 0))
  const ratio = (loaded: number, idle: number) => (Number.isNaN(loaded) || Number.isNaN(idle) || idle === 0 ? '–' : `${(loaded / idle).toFixed(1)}×`)
  const rows: string[][] = []
  for (const result of results) {
    const idle = result.phases.find((p) => p.phase === 'idle') as ContentionPhase
    const loaded = result.phases.find((p) => p.phase === 'contended') as ContentionPhase
    const failures = result.phases.reduce((n, p) => n + p.company.failures + p.users.failures + (p.loop?.failures ?? 0), 0)
    rows.push([
      `${result.mode}${result.readWorkers > 0 ? ` (${result.readWorkers} workers)` : ''}`,
      result.case,
      `${ms(idle.company.p50)} / ${ms(idle.company.p99)}`,
      `${ms(loaded.company.p50)} / ${ms(loaded.company.p99)} / ${ms(loaded.company.max)}`,
      `${ratio(loaded.company.p50, idle.company.p50)} / ${ratio(loaded.company.p99, idle.company.p99)}`,
      `${ms(loaded.users.p50)} / ${ms(loaded.users.p99)}`,
      loaded.loop === undefined ? '' : `${loaded.loop.requests} × ${ms(loaded.loop.p50)}`,
      ms(result.soloP50),
      String(failures),
      loaded.loadAverage.toFixed(2),
    ])
  }
  const header = [
    'mode',
    'c1 loops',
    'c2 /company idle p50/p99',
    'c2 /company loaded p50/p99/max',
    'ratio p50/p99',
    'c2 /users loaded p50/p99',
    `c1 ${LOOPERS}× n × p50`,
    'c1 alone p50',
    'non-200',
    'load 1m',
  ]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) => cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ')
  const cases = [...new Set(results.map((r) => r.case))].map((name) => `  ${name}: ${CONTENTION_CASES[name].about}`)
  return [
    `Tenant contention, scale ${options.scale}: company ${BIG_COMPANY} loops a query ${LOOPERS} at a time while company ${SMALL_COMPANY}'s ` +
      `GET /v1/company and GET /v1/users are timed in turn on one connection (${IDLE_S} s alone, then ${options.durationS} s with the loop; ms)`,
    ...cases,
    [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n'),
  ].join('\n')
}
