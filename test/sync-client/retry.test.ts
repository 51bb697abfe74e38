import { createServer, type AddressInfo, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { backoffMs, retryAfterMs, retryingFetch, type RetryOptions } from '../../examples/sync-client/retry.js'

/** What the stub server does on one attempt: answer with a status (and headers), or lose the response. */
type Step = number | { status: number; headers: Record<string, string> } | 'lost'

interface Sent {
  method: string
  idempotencyKey: string | null
  body: string
}

/** A fetch that plays `steps` in order, one per attempt, recording what each attempt sent. */
function stub(steps: readonly Step[]) {
  const sent: Sent[] = []
  const sleeps: number[] = []
  const send = async (request: Request): Promise<Response> => {
    sent.push({ method: request.method, idempotencyKey: request.headers.get('idempotency-key'), body: await request.text() })
    const step = steps[sent.length - 1]
    if (step === undefined) throw new Error('the stub ran out of steps')
    if (step === 'lost') throw new TypeError('fetch failed')
    const { status, headers } = typeof step === 'number' ? { status: step, headers: {} } : step
    // A 304 has no body (the Response constructor refuses one).
    if (status === 304) return new Response(null, { status, headers })
    return new Response(JSON.stringify({ status }), { status, headers: { 'content-type': 'application/json', ...headers } })
  }
  const options: RetryOptions = { sleep: async (ms) => void sleeps.push(ms), baseDelayMs: 100, maxAttempts: 4 }
  return { send, sent, sleeps, options }
}

const get = () => new Request('http://127.0.0.1:9/api/public/v1/todos?page=1')
const post = (idempotencyKey?: string) =>
  new Request('http://127.0.0.1:9/api/public/v1/todos', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) },
    body: '{"title":"x"}',
  })

/** Runs `request` through the retry rules over `steps`; the outcome and what was sent. */
async function play(request: Request, steps: readonly Step[], overrides: RetryOptions = {}) {
  const s = stub(steps)
  const fetchWithRetry = retryingFetch(s.send, { ...s.options, ...overrides })
  const outcome = await fetchWithRetry(request).then(
    (response) => response.status,
    (error: Error) => error.message,
  )
  return { outcome, attempts: s.sent.length, sent: s.sent, sleeps: s.sleeps }
}

const retryAfter = (status: number, seconds: string) => ({ status, headers: { 'retry-after': seconds } })

describe('retry rules', () => {
  it.each([
    ['a read, 429 with Retry-After', get, [retryAfter(429, '7'), 200], 200, [7_000]],
    ['a read, 503 with Retry-After', get, [retryAfter(503, '2'), 200], 200, [2_000]],
    ['a read, no response', get, ['lost', 200], 200, [null]],
    ['a read, 304 Not Modified (a success)', get, [304], 304, []],
    ['a read, 304 even with Retry-After', get, [retryAfter(304, '1')], 304, []],
    ['a read, 500', get, [500], 500, []],
    ['a read, 404', get, [404], 404, []],
    ['a keyed write, no response', () => post('k-1'), ['lost', 201], 201, [null]],
    ['a keyed write, 502', () => post('k-1'), [502, 201], 201, [null]],
    ['a keyed write, 503 with Retry-After', () => post('k-1'), [retryAfter(503, '3'), 201], 201, [3_000]],
    ['a keyed write, 409 in flight', () => post('k-1'), [retryAfter(409, '1'), retryAfter(409, '1'), 201], 201, [1_000, 1_000]],
    ['a keyed write, 429', () => post('k-1'), [retryAfter(429, '5'), 201], 201, [5_000]],
    ['a keyed write, 409 of the rules (no Retry-After)', () => post('k-1'), [409], 409, []],
    ['a keyed write, a replayed 503', () => post('k-1'), [{ status: 503, headers: { 'idempotent-replay': 'true', 'retry-after': '1' } }], 503, []],
    ['a keyed write, 400', () => post('k-1'), [400], 400, []],
    ['a keyed write, 401', () => post('k-1'), [401], 401, []],
    ['a keyed write, 403', () => post('k-1'), [403], 403, []],
    ['a keyed write, 404', () => post('k-1'), [404], 404, []],
    ['a keyed write, 422', () => post('k-1'), [422], 422, []],
    ['a write without a key, 429', () => post(), [retryAfter(429, '1'), 201], 201, [1_000]],
    ['a write without a key, 503', () => post(), [retryAfter(503, '1')], 503, []],
    ['a write without a key, no response', () => post(), ['lost'], 'fetch failed', []],
  ] as const)('%s', async (_name, request, steps, expected, waits) => {
    const { outcome, attempts, sleeps } = await play(request(), steps)
    expect(outcome).toBe(expected)
    expect(attempts).toBe(waits.length + 1)
    // The server's Retry-After exactly; a backoff (null here) where it named none.
    waits.forEach((wait, index) => {
      if (wait === null) expect(sleeps[index]).toBeGreaterThan(0)
      else expect(sleeps[index]).toBe(wait)
    })
  })

  it('sends the same Idempotency-Key and body on every attempt', async () => {
    const { sent } = await play(post('same-key'), ['lost', 502, retryAfter(409, '1'), 201])
    expect(sent).toEqual(Array.from({ length: 4 }, () => ({ method: 'POST', idempotencyKey: 'same-key', body: '{"title":"x"}' })))
  })

  it('gives up after maxAttempts and hands back the last answer, or the last error', async () => {
    expect(await play(get(), Array.from({ length: 10 }, () => retryAfter(429, '1')))).toMatchObject({ outcome: 429, attempts: 4 })
    expect(await play(post('k'), Array.from({ length: 10 }, () => 'lost' as const))).toMatchObject({ outcome: 'fetch failed', attempts: 4 })
  })

  it('does not wait longer than maxDelayMs: a longer Retry-After is the answer', async () => {
    expect(await play(get(), [retryAfter(429, '120'), 200], { maxDelayMs: 60_000 })).toMatchObject({ outcome: 429, attempts: 1, sleeps: [] })
  })

  it('does not retry a request its caller aborted', async () => {
    const controller = new AbortController()
    const s = stub(['lost', 200])
    const fetchWithRetry = retryingFetch(async (request) => {
      controller.abort()
      return s.send(request)
    }, s.options)
    await expect(fetchWithRetry(new Request(get(), { signal: controller.signal }))).rejects.toThrow()
    expect(s.sent).toHaveLength(1)
  })

  it('times out an attempt whose response never comes, and retries it', async () => {
    // A server that answers every connection but the first, which it leaves hanging.
    const sockets: Socket[] = []
    let requests = 0
    const server = createServer((socket) => {
      sockets.push(socket)
      socket.on('error', () => {})
      socket.once('data', () => ++requests === 1 || socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}'))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as AddressInfo
      const fetchWithRetry = retryingFetch((request) => fetch(request), { attemptTimeoutMs: 200, sleep: async () => {} })
      const started = performance.now()
      expect((await fetchWithRetry(new Request(`http://127.0.0.1:${port}/v1/company`))).status).toBe(200)
      expect(requests).toBe(2)
      expect(performance.now() - started).toBeGreaterThanOrEqual(190)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }, 5_000)
})

describe('retryAfterMs', () => {
  it('reads whole seconds and HTTP dates, and nothing else', () => {
    const now = Date.UTC(2026, 5, 1, 9, 0, 0)
    expect(retryAfterMs('1', now)).toBe(1_000)
    expect(retryAfterMs(' 30 ', now)).toBe(30_000)
    expect(retryAfterMs(new Date(now + 4_000).toUTCString(), now)).toBe(4_000)
    expect(retryAfterMs(new Date(now - 4_000).toUTCString(), now)).toBe(0)
    expect(retryAfterMs(null, now)).toBeNull()
    expect(retryAfterMs('soon', now)).toBeNull()
    expect(retryAfterMs('-1', now)).toBeNull()
  })
})

describe('backoffMs', () => {
  it('doubles from the base, stays within [half, all] of it, and never passes the cap', () => {
    for (let attempt = 1; attempt <= 12; attempt++) {
      const ceiling = Math.min(10_000, 100 * 2 ** (attempt - 1))
      const wait = backoffMs(attempt, 100, 10_000)
      expect(wait).toBeGreaterThanOrEqual(ceiling / 2)
      expect(wait).toBeLessThanOrEqual(ceiling)
    }
  })
})
