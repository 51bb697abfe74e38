import { spawn, type ChildProcess } from 'node:child_process'
import { Redis } from 'ioredis'
import { describe, it } from 'vitest'

/**
 * Suites that need Redis run against the server named by WORKFORCE_TEST_REDIS_URL (the shared
 * one, e.g. redis://127.0.0.1:6379). Without it they are skipped with a notice; under CI=true a
 * missing variable fails them instead. Fault tests never stop that server: they start their own
 * (`startOwnRedis`) and stop only that one, by PID.
 */
export const redisUrl = process.env.WORKFORCE_TEST_REDIS_URL || undefined
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false' && process.env.CI !== '0'
const HOW_TO_ENABLE = 'set WORKFORCE_TEST_REDIS_URL=redis://127.0.0.1:6379 to run it'

/** `describe` for a suite that needs Redis: skipped with a notice, or failing under CI. */
export function describeRedis(name: string, body: () => void): void {
  if (redisUrl === undefined) {
    if (inCi) {
      describe(name, () => {
        it('needs a Redis server under CI', () => {
          throw new Error(`WORKFORCE_TEST_REDIS_URL is not set and CI=true: ${HOW_TO_ENABLE}`)
        })
      })
      return
    }
    console.warn(`[redis] skipping "${name}": ${HOW_TO_ENABLE}`)
  }
  describe.skipIf(redisUrl === undefined)(name, body)
}

export { freePort } from './free-port.js'

/** A `redis-server` of the test's own on `port`: in memory only, loopback only. */
export interface OwnRedis {
  url: string
  /** Stops this server (SIGTERM to our own child, by PID) and waits for it to exit. */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
}

export async function startOwnRedis(port: number): Promise<OwnRedis> {
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    probe.on('error', () => {}) // refused while the server starts: retried below
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await probe.connect()
          await probe.ping()
          return
        } catch (error) {
          if (attempt > 50) throw error
          probe.disconnect()
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
    } finally {
      probe.disconnect()
    }
  }
  const stop = async () => {
    const running = child
    child = undefined
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve())
      running.kill('SIGTERM')
    })
  }
  await start()
  return { url: `redis://127.0.0.1:${port}`, stop, start }
}
