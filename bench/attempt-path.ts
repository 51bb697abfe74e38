/**
 * What one webhook attempt costs the process beyond a plain POST (issue 25): CPU microseconds
 * per request (`process.cpuUsage`, client and receiver together, as in `bench/webhooks.ts`)
 * for the same body to the same loopback receiver, 32 at a time, in rounds that take each
 * variant in turn (this machine's speed moves within minutes):
 *
 * - `plain`: an undici POST, body dumped (the baseline of `bench/webhooks.ts`);
 * - `transport`: the default `WebhookTransport` (`httpWebhookTransport`), with a signal;
 * - `deadline`: the transport under an attempt's deadline (`AttemptDeadlines`);
 * - `deadline, listeners`: the same under the deadline as it was built before (2026-11-28): a
 *   listener on the shutdown signal and one on the attempt's own signal per attempt, and
 *   `Promise.race` (`listenerDeadline` below), for the comparison in the same run;
 * - `attempt`: what the dispatcher does around an attempt's send: the signed headers
 *   (`signWebhookWithKeys`) and the deadline.
 *
 * No database: the claim and the record are `bench/webhooks.ts`'s.
 *
 * Usage: npx tsx bench/attempt-path.ts [--requests 10000] [--rounds 4]
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setMaxListeners } from 'node:events'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { AttemptDeadlines, type AttemptDeadline } from '../src/webhooks/attempt-deadline.js'
import { httpWebhookTransport } from '../src/webhooks/http-transport.js'
import { signWebhookWithKeys } from '../src/webhooks/signature.js'

const { values } = parseArgs({ options: { requests: { type: 'string' }, rounds: { type: 'string' } } })
const REQUESTS = Number(values.requests ?? 10_000)
const ROUNDS = Number(values.rounds ?? 4)
if (!(REQUESTS >= 100 && REQUESTS <= 200_000) || !(ROUNDS >= 1 && ROUNDS <= 20)) throw new Error('--requests 100..200000, --rounds 1..20')
const IN_FLIGHT = 32

const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.writeHead(204).end())
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
const body = JSON.stringify({ id: 'evt_bench', type: 'company.updated', created_at: new Date().toISOString(), company_id: 1, data: { id: 1, name: 'Bench' } })
const agent = new Agent({ connections: IN_FLIGHT, keepAliveTimeout: 30_000 })
const transport = httpWebhookTransport({ allowPrivate: true })
const deadlines = new AttemptDeadlines(new AbortController().signal)

const keys = [Buffer.alloc(32, 7)]
const TIMEOUT_MS = 15_000
const HEADERS = { 'content-type': 'application/json', 'webhook-id': 'evt_bench' }

/** The deadline as it was before `AttemptDeadlines` (same behaviour, two `EventTarget` listeners an attempt). */
function listenerDeadline(timeoutMs: number, shutdown: AbortSignal): AttemptDeadline {
  const controller = new AbortController()
  const onShutdown = () => controller.abort(shutdown.reason)
  const timer = setTimeout(() => controller.abort(new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)
  shutdown.addEventListener('abort', onShutdown, { once: true })
  return {
    signal: controller.signal,
    bound<T>(work: Promise<T>): Promise<T> {
      const expired = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }))
      work.catch(() => {})
      return Promise.race([work, expired])
    },
    clear() {
      clearTimeout(timer)
      shutdown.removeEventListener('abort', onShutdown)
    },
  }
}
const shutdown = new AbortController().signal
setMaxListeners(IN_FLIGHT + 10, shutdown) // as the dispatcher set it: one listener an attempt in flight

/** The transport's send under `deadline`, cleared once it is over, as the dispatcher's `#send` does it. */
async function sendWithin(deadline: AttemptDeadline, headers: Record<string, string>): Promise<unknown> {
  try {
    return await deadline.bound(transport.send({ url, headers, body, signal: deadline.signal }))
  } finally {
    deadline.clear()
  }
}

const variants: Record<string, () => Promise<unknown>> = {
  plain: async () => {
    const response = await request(url, { method: 'POST', body, dispatcher: agent, headers: HEADERS })
    await response.body.dump()
  },
  transport: () => transport.send({ url, headers: HEADERS, body, signal: new AbortController().signal }),
  deadline: () => sendWithin(deadlines.start(TIMEOUT_MS), HEADERS),
  'deadline, listeners': () => sendWithin(listenerDeadline(TIMEOUT_MS, shutdown), HEADERS),
  attempt: () => {
    const headers = { 'content-type': 'application/json', 'user-agent': 'bench', ...signWebhookWithKeys(keys, 'evt_bench', Math.floor(Date.now() / 1000), body) }
    return sendWithin(deadlines.start(TIMEOUT_MS), headers)
  },
}

/** CPU µs per request (client and receiver) and requests per second, `count` requests `IN_FLIGHT` at a time. */
async function measure(send: () => Promise<unknown>, count: number): Promise<{ cpuMicros: number; perS: number }> {
  let left = count
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) await send()
    }),
  )
  const used = process.cpuUsage(cpu)
  return { cpuMicros: (used.user + used.system) / count, perS: count / ((performance.now() - started) / 1000) }
}

for (const send of Object.values(variants)) await measure(send, 2_000) // warm-up: undici's parser, the JIT
const results: Record<string, Array<{ cpuMicros: number; perS: number }>> = {}
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [name, send] of Object.entries(variants)) (results[name] ??= []).push(await measure(send, REQUESTS))
}
/** CPU µs of one deadline alone (start, bound to an answered promise, clear), no request: `count` of them. */
async function deadlineAlone(start: () => AttemptDeadline, count: number): Promise<number> {
  const cpu = process.cpuUsage()
  for (let i = 0; i < count; i += 1) {
    const deadline = start()
    try {
      await deadline.bound(Promise.resolve(i))
    } finally {
      deadline.clear()
    }
  }
  const used = process.cpuUsage(cpu)
  return (used.user + used.system) / count
}
const alone: Record<string, () => AttemptDeadline> = {
  deadline: () => deadlines.start(TIMEOUT_MS),
  'deadline, listeners': () => listenerDeadline(TIMEOUT_MS, shutdown),
}
for (const start of Object.values(alone)) await deadlineAlone(start, 20_000)
const aloneResults: Record<string, number[]> = {}
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [name, start] of Object.entries(alone)) (aloneResults[name] ??= []).push(await deadlineAlone(start, 100_000))
}
server.close()
await agent.close()
await transport.close?.()

const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!
const signed = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(0)}`
const plainCpu = median(results.plain!.map((r) => r.cpuMicros))
console.log(`Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${REQUESTS} requests a variant a round, ${ROUNDS} rounds, ${IN_FLIGHT} in flight`)
console.log('')
console.log('| variant | CPU µs a request, each round | median | beyond plain | requests/s, median |')
console.log('|---|---|---:|---:|---:|')
for (const [name, rounds] of Object.entries(results)) {
  const cpu = median(rounds.map((r) => r.cpuMicros))
  const rate = median(rounds.map((r) => r.perS))
  console.log(`| ${name} | ${rounds.map((r) => r.cpuMicros.toFixed(0)).join(', ')} | ${cpu.toFixed(0)} | ${name === 'plain' ? '–' : signed(cpu - plainCpu)} | ${Math.round(rate).toLocaleString('en-US')} |`)
}
console.log('')
console.log('| deadline alone (start, bound, clear; no request) | CPU µs each, each round | median |')
console.log('|---|---|---:|')
for (const [name, rounds] of Object.entries(aloneResults)) {
  console.log(`| ${name} | ${rounds.map((r) => r.toFixed(2)).join(', ')} | ${median(rounds).toFixed(2)} |`)
}
