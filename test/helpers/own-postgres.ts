import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './free-port.js'

/**
 * A throwaway Postgres server of a test's own — never the shared one on 5432 — that the test
 * may freeze, stop and start. `initdb` into a temp directory as the `postgres` user, then
 * the postmaster runs as our child, on 127.0.0.1 and a free port only. Every signal goes to
 * a PID this helper started (the postmaster) or that the postmaster forked (its backends).
 */
export interface OwnPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  readonly port: number
  /** PID of the running postmaster, or null while stopped. */
  readonly pid: number | null
  /** SIGSTOP to the postmaster and every backend: TCP still connects, nothing answers. */
  freeze(): void
  /** SIGCONT to every process `freeze` stopped. */
  thaw(): void
  /** Fast shutdown (SIGINT): sessions are terminated, new connections refused; waits for exit. */
  stop(): Promise<void>
  /** Starts the postmaster again on the same directory and port; waits until it accepts. */
  start(): Promise<void>
  /** Thaws, stops (SIGKILL after a grace period) and deletes the directory. Safe to call twice. */
  destroy(): Promise<void>
}

const PG_BIN_ROOT = '/usr/lib/postgresql'
const READY_TIMEOUT_MS = 15_000
const STOP_GRACE_MS = 5_000

/** Where `initdb` and `postgres` live: the newest installed major version. */
function pgBin(): string {
  const versions = readdirSync(PG_BIN_ROOT)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a))
  const [newest] = versions
  if (newest === undefined) throw new Error(`No PostgreSQL server binaries under ${PG_BIN_ROOT}`)
  return join(PG_BIN_ROOT, newest, 'bin')
}

/** Postgres refuses to run as root: as root, run it as `postgres`; otherwise as ourselves. */
function serverUser(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {}
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
  return { uid, gid }
}


/** Direct children of `pid`, read from /proc (Postgres backends are the postmaster's children). */
function childrenOf(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // Field 4 (ppid) follows the ")" that closes the command name.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) children.push(Number(entry))
    } catch {
      // The process ended while we looked.
    }
  }
  return children
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // Already gone.
  }
}

/** Every PID we started and have not seen exit; killed if the test process exits early. */
const live = new Set<number>()
process.once('exit', () => {
  for (const pid of live) {
    for (const child of childrenOf(pid)) signal(child, 'SIGCONT')
    signal(pid, 'SIGCONT')
    signal(pid, 'SIGKILL')
  }
})

/**
 * Creates and starts a cluster of the test's own. Call `destroy()` in `afterAll`.
 *
 * @example
 * const db = await startOwnPostgres()
 * afterAll(() => db.destroy())
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = pgBin()
  const user = serverUser()
  const root = mkdtempSync(join(tmpdir(), 'wfa-own-pg-'))
  chmodSync(root, 0o700)
  if (user.uid !== undefined) chownSync(root, user.uid, user.gid)
  const dataDir = join(root, 'data')
  execFileSync(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C'], {
    ...user,
    stdio: 'ignore',
  })
  const port = await freePort()
  let child: ChildProcess | null = null
  let exited: Promise<void> = Promise.resolve()
  let frozen: number[] = []

  const running = () => (child !== null && child.exitCode === null && child.signalCode === null ? child : null)

  const start = async () => {
    if (running() !== null) return
    const started = spawn(
      join(bin, 'postgres'),
      [
        '-D', dataDir,
        '-p', String(port),
        '-c', 'listen_addresses=127.0.0.1',
        '-c', `unix_socket_directories=${root}`,
        '-c', 'fsync=off',
        '-c', 'synchronous_commit=off',
        '-c', 'full_page_writes=off',
        '-c', 'max_connections=60',
        '-c', 'shared_buffers=16MB',
      ],
      { ...user, stdio: 'ignore' },
    )
    child = started
    const pid = started.pid
    if (pid === undefined) throw new Error('postgres did not start')
    live.add(pid)
    exited = new Promise((resolve) => started.once('exit', () => resolve()))
    void exited.then(() => live.delete(pid))
    await waitUntilReady(`postgres://postgres@127.0.0.1:${port}/postgres`, started)
  }

  const stopWith = async (name: NodeJS.Signals) => {
    const current = running()
    if (current?.pid === undefined) return
    signal(current.pid, name)
    const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), STOP_GRACE_MS).unref())
    if ((await Promise.race([exited.then(() => 'done' as const), timer])) === 'late') {
      for (const pid of childrenOf(current.pid)) signal(pid, 'SIGKILL')
      signal(current.pid, 'SIGKILL')
      await exited
    }
  }

  const own: OwnPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    get pid() {
      return running()?.pid ?? null
    },
    freeze() {
      const pid = running()?.pid
      if (pid === undefined) throw new Error('the cluster is not running')
      // The postmaster first, so it forks no new backend while we stop the others.
      signal(pid, 'SIGSTOP')
      frozen = [pid, ...childrenOf(pid)]
      for (const backend of frozen.slice(1)) signal(backend, 'SIGSTOP')
    },
    thaw() {
      for (const pid of frozen.reverse()) signal(pid, 'SIGCONT')
      frozen = []
    },
    stop: () => stopWith('SIGINT'),
    start,
    async destroy() {
      own.thaw()
      await stopWith('SIGINT')
      if (existsSync(root)) rmSync(root, { recursive: true, force: true })
    },
  }
  try {
    await start()
  } catch (error) {
    await own.destroy()
    throw error
  }
  return own
}

async function waitUntilReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`postgres exited while starting (${child.exitCode ?? child.signalCode})`)
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 })
    try {
      await client.connect()
      await client.query('select 1')
      return
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`postgres on ${url} not ready within ${READY_TIMEOUT_MS} ms: ${String(error)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    } finally {
      await client.end().catch(() => {})
    }
  }
}
