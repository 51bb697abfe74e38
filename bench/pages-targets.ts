import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BASELINE_ENTRY = fileURLToPath(new URL('./pages-baseline-server.ts', import.meta.url))
const PROFILE_PRELOAD = fileURLToPath(new URL('./profile-on-signal.mjs', import.meta.url))
const READY_TIMEOUT_MS = 120_000
const STOP_TIMEOUT_MS = 15_000
/** `getconf CLK_TCK` on Linux: /proc reports CPU time in these ticks. */
const CLOCK_TICKS_PER_S = 100

export type PagesTargetKind = 'serve' | 'baseline'

/** CPU time a process has used so far, microseconds: all its threads, and its main thread alone. */
export interface CpuSample {
  total: number
  main: number
}

export interface PagesTarget {
  kind: PagesTargetKind
  pid: number
  /** `http://127.0.0.1:<port>` */
  origin: string
  cpu(): CpuSample
  /** Profiles the main thread until `stopProfile` (serve started with `profile: true` only). */
  startProfile(): Promise<void>
  /** Stops and returns the `.cpuprofile` path. */
  stopProfile(): Promise<string>
  close(): Promise<void>
}

/**
 * `workforce-api serve` from the built CLI (`cli`, a copy of dist/), default options, its log at
 * the default level to /dev/null. With `profile`, bench/profile-on-signal.mjs is preloaded: it
 * does nothing until SIGUSR2.
 */
export async function startServe(options: { cli: string; db: string; profile?: string; flags?: readonly string[] }): Promise<PagesTarget> {
  const port = await freePort()
  const execArgv = options.profile === undefined ? [] : ['--import', PROFILE_PRELOAD]
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Postgres has no key file beside it; a fresh key for the run (the dispatcher starts, as by default).
    WORKFORCE_WEBHOOK_KEY: randomBytes(32).toString('base64'),
    ...(options.profile === undefined ? {} : { WFA_BENCH_PROFILE: options.profile }),
  }
  delete env.LOG_LEVEL
  const child = spawn(process.execPath, [...execArgv, options.cli, 'serve', '--db', options.db, '--port', String(port), '--host', '127.0.0.1', ...(options.flags ?? [])], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  return target('serve', child, port, options.profile)
}

/** The hand-written baseline (bench/pages-baseline-server.ts) over the same database; `profile` as for serve. */
export async function startBaseline(db: string, profile?: string): Promise<PagesTarget> {
  const port = await freePort()
  const execArgv = ['--import', import.meta.resolve('tsx'), ...(profile === undefined ? [] : ['--import', PROFILE_PRELOAD])]
  const child = spawn(process.execPath, [...execArgv, BASELINE_ENTRY, db, String(port)], {
    cwd: ROOT,
    env: { ...process.env, ...(profile === undefined ? {} : { WFA_BENCH_PROFILE: profile }) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  return target('baseline', child, port, profile)
}

async function target(kind: PagesTargetKind, child: ChildProcess, port: number, profilePath: string | undefined): Promise<PagesTarget> {
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 20_000) stderr += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const origin = `http://127.0.0.1:${port}`
  await waitListening(origin, exited, () => `${kind}: ${stderr}`)
  const pid = child.pid as number
  const signalAndWait = async (file: string) => {
    child.kill('SIGUSR2')
    for (const until = Date.now() + 60_000; !existsSync(file); ) {
      if (Date.now() > until) throw new Error(`${kind}: no ${file} after SIGUSR2`)
      await sleep(20)
    }
    rmSync(file)
  }
  return {
    kind,
    pid,
    origin,
    cpu: () => ({ total: processCpuMicros(`/proc/${pid}/stat`), main: processCpuMicros(`/proc/${pid}/task/${pid}/stat`) }),
    async startProfile() {
      if (profilePath === undefined) throw new Error(`${kind} was not started to be profiled`)
      await signalAndWait(`${profilePath}.started`)
    },
    async stopProfile() {
      if (profilePath === undefined) throw new Error(`${kind} was not started to be profiled`)
      await signalAndWait(`${profilePath}.done`)
      return profilePath
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Polls until anything answers HTTP on `origin` (the baseline has no health route: a 404 will do). */
async function waitListening(origin: string, exited: Promise<number | null>, output: () => string): Promise<void> {
  let gone: number | null | undefined
  void exited.then((code) => (gone = code))
  for (const until = Date.now() + READY_TIMEOUT_MS; Date.now() < until; ) {
    if (gone !== undefined) throw new Error(`exited with ${String(gone)} before listening: ${output()}`)
    try {
      await fetch(`${origin}/health/live`)
      return
    } catch {
      await sleep(100)
    }
  }
  throw new Error(`not listening within ${READY_TIMEOUT_MS} ms: ${output()}`)
}

/** utime + stime of a /proc `stat` file (fields 14 and 15, counted after the command's parenthesis). */
export function processCpuMicros(statPath: string): number {
  const text = readFileSync(statPath, 'utf8')
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S) * 1e6
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}
