import { Writable } from 'node:stream'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { build, type TestApp } from '../helpers/build.js'
import { describeRedis, freePort, startOwnRedis, type OwnRedis } from '../helpers/redis.js'

/** Log lines of the app, as JSON objects. */
function logSink(): { stream: Writable; lines: Array<{ msg?: string; level: number }> } {
  const lines: Array<{ msg?: string; level: number }> = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line))
      done()
    },
  })
  return { stream, lines }
}

const count = (lines: Array<{ msg?: string }>, text: string) => lines.filter((line) => line.msg?.includes(text)).length

/** Polls `condition` every 50 ms; throws `failure` after `limitMs`. */
async function until(condition: () => boolean, limitMs: number, failure: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 50) {
    if (waited > limitMs) throw new Error(failure)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// Issue 9: Redis unreachable → keep serving (fail open), a few ms per request, one log line each
// way, shared counting resumes by itself. On a redis-server of this test's own, never the shared one.
describeRedis('rate limiting through Redis, while Redis goes away and comes back', () => {
  let redis: OwnRedis
  let t: TestApp
  const log = logSink()

  beforeAll(async () => {
    redis = await startOwnRedis(await freePort())
    t = await build({ options: { rateLimit: { max: 1_000, redis: redis.url } }, fastify: { logger: { level: 'info', stream: log.stream } } })
  })
  afterAll(async () => {
    await t?.close()
    await redis?.stop()
  })

  it('counts in Redis, serves uncounted during the outage, logs it once each way, and resumes counting', async () => {
    const key = await t.keyFor(1, ['users:read'])
    const remaining = async () => {
      const response = await t.get('/v1/users?per_page=1', key)
      expect(response.statusCode).toBe(200)
      return Number(response.headers['x-ratelimit-remaining'])
    }
    expect([await remaining(), await remaining(), await remaining()]).toEqual([999, 998, 997])

    await redis.stop()
    const durations: number[] = []
    for (let i = 0; i < 20; i++) {
      const started = performance.now()
      // Fail open: served, counted by nobody (the library reports the whole budget left).
      expect(await remaining()).toBe(1_000)
      durations.push(performance.now() - started)
    }
    durations.sort((a, b) => a - b)
    console.log(`[redis outage] per-request time while Redis is down: median ${durations[10]?.toFixed(1)} ms, max ${durations[19]?.toFixed(1)} ms`)
    // Bounded, not a speed target: a request never waits for a Redis that is not there.
    expect(durations[19]).toBeLessThan(1_000)
    // The client notices the closed socket on its own schedule: wait for the line, then
    // check it was logged once, not once per failed command.
    await until(() => count(log.lines, 'rate-limit Redis unreachable') > 0, 5_000, 'the outage was never logged')
    expect(count(log.lines, 'rate-limit Redis unreachable')).toBe(1)

    await redis.start()
    await until(() => count(log.lines, 'rate-limit Redis reachable again') > 0, 10_000, 'the client never reconnected')
    // The restarted server is empty: counting starts again from the full budget.
    expect([await remaining(), await remaining()]).toEqual([999, 998])
    expect(count(log.lines, 'rate-limit Redis unreachable')).toBe(1)
    expect(count(log.lines, 'rate-limit Redis reachable again')).toBe(1)
  }, 30_000)
})
