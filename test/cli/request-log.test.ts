import Fastify from 'fastify'
import { Writable } from 'node:stream'
import { afterEach, expect, it } from 'vitest'
import { OneLineRequestLog } from '../../src/server/request-log.js'

/** `serve` logs each request once, when it completes, with the request and the answer (issue 25). */
const apps: Array<ReturnType<typeof Fastify>> = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

function logged(): { lines: Array<Record<string, unknown>>; stream: Writable } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  return { lines, stream }
}

it('one line per request: method, URL, status and time together; a failure is logged as Fastify logs it', async () => {
  const { lines, stream } = logged()
  const app = Fastify({ logger: { level: 'info', stream }, logController: new OneLineRequestLog() })
  apps.push(app)
  app.get('/ok', async () => ({ ok: true }))
  app.get('/boom', async () => {
    throw new Error('boom')
  })
  await app.inject({ method: 'GET', url: '/ok?x=1' })
  const ok = lines.filter((line) => line.reqId !== undefined)
  expect(ok.map((line) => line.msg)).toEqual(['request completed'])
  expect(ok[0]).toMatchObject({ req: { method: 'GET', url: '/ok?x=1' }, res: { statusCode: 200 } })
  expect(typeof ok[0]?.responseTime).toBe('number')

  lines.length = 0
  await app.inject({ method: 'GET', url: '/boom' })
  const failed = lines.filter((line) => line.reqId !== undefined)
  expect(failed.some((line) => (line.res as { statusCode?: number } | undefined)?.statusCode === 500)).toBe(true)
  expect(failed.some((line) => line.msg === 'incoming request')).toBe(false)
})
