import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ChildMessage, ParentMessage, TargetKind } from './server-protocol.js'

const SERVER_ENTRY = fileURLToPath(new URL('./server-process.ts', import.meta.url))
const READY_TIMEOUT_MS = 120_000
const CLOSE_TIMEOUT_MS = 15_000

export interface TargetOptions {
  filename: string
  companyId: number
  perPage: number
}

/** A benchmark target running in its own Node process, seen from the parent. */
export interface TargetProcess {
  kind: TargetKind
  pid: number
  /** Full URL of the list request to load, query string included. */
  url: string
  headers: Record<string, string>
  /** CPU time (user + system) the server has used so far, in microseconds. */
  cpuMicros(): Promise<number>
  /** Starts sampling the server's CPU (V8 profiler, in the server process). */
  startProfile(): Promise<void>
  /** Stops sampling and has the server write the `.cpuprofile` to `path`. */
  stopProfile(path: string): Promise<void>
  close(): Promise<void>
}

/** Starts one server process and resolves once it listens on loopback. */
export async function startTarget(kind: TargetKind, options: TargetOptions): Promise<TargetProcess> {
  const execArgv = ['--import', import.meta.resolve('tsx')]
  const child = fork(SERVER_ENTRY, [kind, options.filename, String(options.companyId), String(options.perPage)], {
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const ready = await nextMessage(child, 'ready', READY_TIMEOUT_MS)
  return {
    kind,
    pid: child.pid as number,
    url: ready.url,
    headers: ready.headers,
    async cpuMicros() {
      const reply = nextMessage(child, 'cpu', 10_000)
      child.send({ type: 'cpu' } satisfies ParentMessage)
      return (await reply).micros
    },
    async startProfile() {
      const started = nextMessage(child, 'profile-started', 10_000)
      child.send({ type: 'profile-start' } satisfies ParentMessage)
      await started
    },
    async stopProfile(path) {
      const written = nextMessage(child, 'profile-written', 60_000)
      child.send({ type: 'profile-stop', path } satisfies ParentMessage)
      await written
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.send({ type: 'close' } satisfies ParentMessage)
      const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    },
  }
}

/** The next message of `type`; rejects if the child reports a failure, exits or stays silent. */
function nextMessage<T extends ChildMessage['type']>(
  child: ChildProcess,
  type: T,
  timeoutMs: number,
): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer)
      child.off('message', onMessage)
      child.off('exit', onExit)
    }
    const onMessage = (message: ChildMessage) => {
      if (message.type === 'failed') {
        cleanup()
        reject(new Error(`benchmark server failed:\n${message.message}`))
      } else if (message.type === type) {
        cleanup()
        resolve(message as Extract<ChildMessage, { type: T }>)
      }
    }
    const onExit = (code: number | null, signal: string | null) => {
      cleanup()
      reject(new Error(`benchmark server exited (code ${String(code)}, signal ${String(signal)}) while waiting for "${type}"`))
    }
    const timer = setTimeout(() => {
      cleanup()
      child.kill('SIGKILL')
      reject(new Error(`benchmark server sent no "${type}" within ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('message', onMessage)
    child.on('exit', onExit)
  })
}
