import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CliOutput } from '../../src/cli/output.js'
import { seed } from '../../src/cli/seed.js'
import { serve } from '../../src/cli/serve.js'
import { checkReceived } from '../helpers/checked-fetch.js'
import { skipResponseChecks } from '../helpers/response-problems.js'

const quiet: CliOutput = { line: () => {}, json: () => {} }

/**
 * Why 431 and 408 are not held to the OpenAPI document: Node's HTTP parser answers them
 * (`clientErrorHandler`) before any request exists, the same for every URL, the host's own
 * routes included; no operation answered. In-process suites never see such answers at all.
 */
const NODE_PARSER_ANSWER = "answered by Node's HTTP parser before any route exists, not by an operation"

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Writes `raw` to a fresh socket and reads until the server closes it (or `timeoutMs`). */
function exchange(port: number, raw: string | Buffer, timeoutMs = 5_000): Promise<{ response: RawResponse | null; elapsedMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const socket = connect({ host: '127.0.0.1', port })
    const chunks: Buffer[] = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no end of response within ${timeoutMs} ms`))
    }, timeoutMs)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', () => {}) // a reset after the response is fine; 'close' follows
    socket.on('close', () => {
      clearTimeout(timer)
      const response = parse(Buffer.concat(chunks).toString('latin1'))
      if (response !== null) checkAgainstDocument(raw, response)
      resolve({ response, elapsedMs: Date.now() - started })
    })
    socket.write(raw)
  })
}

function parse(text: string): RawResponse | null {
  const split = text.indexOf('\r\n\r\n')
  if (split < 0) return null
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n')
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  return { status: Number(statusLine?.split(' ')[1]), headers, body: text.slice(split + 4) }
}

/** `serve()` builds its own app, which no route hook watches: its answers are checked here. */
function checkAgainstDocument(raw: string | Buffer, response: RawResponse): void {
  const [method, url] = (typeof raw === 'string' ? raw : raw.toString('latin1')).split(' ', 2)
  if (method === undefined || url === undefined) return
  checkReceived({ method, url, status: response.status, headers: response.headers, body: response.body })
}

function expectEnvelope(response: RawResponse | null, status: number, code: string): void {
  expect(response?.status).toBe(status)
  expect(response?.headers['content-type']).toMatch(/^application\/json/)
  expect(JSON.parse(response?.body ?? '')).toEqual({ error: { code, message: expect.any(String), status } })
}

describe('serve: hostile clients get bounded time and the envelope', () => {
  let directory: string
  let server: { url: string; close(): Promise<void> }
  let port: number
  const MAX_CONNECTIONS = 8

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'wfa-serve-hardening-'))
    const db = join(directory, 'demo.db')
    await seed(['--db', db], quiet)
    server = await serve(['--db', db, '--port', '0', '--headers-timeout', '1s', '--request-timeout', '3s', '--max-connections', String(MAX_CONNECTIONS)], quiet)
    port = Number(new URL(server.url).port)
  })
  afterAll(async () => {
    await server?.close()
    rmSync(directory, { recursive: true, force: true })
  })

  const host = (): string => `Host: 127.0.0.1:${port}\r\n`

  const cases: Array<[label: string, raw: () => string, status: number, code: string]> = [
    ['headers over 16 KiB', () => `GET /api/public/v1/users HTTP/1.1\r\n${host()}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ['Transfer-Encoding: identity', () => `POST /api/public/v1/todos HTTP/1.1\r\n${host()}Transfer-Encoding: identity\r\n\r\n`, 400, 'bad_request'],
    ['two different Content-Length headers', () => `POST /api/public/v1/todos HTTP/1.1\r\n${host()}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`, 400, 'bad_request'],
    ['a bad Content-Length', () => `POST /api/public/v1/todos HTTP/1.1\r\n${host()}Content-Length: -1\r\n\r\n`, 400, 'bad_request'],
    ['a lower-case method', () => `get /api/public/v1/users HTTP/1.1\r\n${host()}\r\n`, 400, 'bad_request'],
    ['a control byte in a header', () => `GET /api/public/v1/users HTTP/1.1\r\n${host()}X-Api-Key: a\u0001b\r\n\r\n`, 400, 'bad_request'],
    ['no Host header', () => 'GET /api/public/v1/users HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'bad_request'],
    ['a path outside the prefix, upper-cased', () => `GET /API/PUBLIC/V1/USERS HTTP/1.1\r\n${host()}Connection: close\r\n\r\n`, 404, 'not_found'],
    ['the asterisk form', () => `OPTIONS * HTTP/1.1\r\n${host()}Connection: close\r\n\r\n`, 404, 'not_found'],
    ['CONNECT', () => `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${host()}\r\n`, 405, 'method_not_allowed'],
  ]
  it.each(cases)('%s: %i in the envelope', async (_label, raw, status, code) => {
    if (status === 431) skipResponseChecks(NODE_PARSER_ANSWER)
    const { response } = await exchange(port, raw())
    expectEnvelope(response, status, code)
  })

  it('a HEAD request the parser refuses gets the status and headers but no body (RFC 9110 9.3.2)', async () => {
    const { response } = await exchange(port, `HEAD /api/public/v1/users HTTP/1.1\r\n${host()}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(response?.status).toBe(431)
    expect(Number(response?.headers['content-length'])).toBeGreaterThan(0)
    expect(response?.body).toBe('')
  })

  it('a HEAD request whose error is met in a later chunk, after a request on the same connection, still gets no body', async () => {
    const socket = connect({ host: '127.0.0.1', port })
    const received: Buffer[] = []
    socket.on('data', (chunk) => received.push(chunk))
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write(`GET /health/live HTTP/1.1\r\n${host()}\r\n`)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const first = Buffer.concat(received.splice(0)).toString('latin1')
    expect(first).toMatch(/^HTTP\/1\.1 200 /)
    socket.write(`HEAD /api/public/v1/users HTTP/1.1\r\n${host()}X-Big: `)
    await new Promise((resolve) => setTimeout(resolve, 50))
    socket.write(`${'a'.repeat(20_000)}\r\n\r\n`)
    await new Promise<void>((resolve) => socket.once('close', () => resolve()))
    const response = parse(Buffer.concat(received).toString('latin1'))
    expect(response?.status).toBe(431)
    expect(response?.body).toBe('')
  })

  it('a malformed URL is refused in the envelope with no-store and nosniff, like every API response', async () => {
    const { response } = await exchange(port, `GET /api/public/v1/roles/%zz HTTP/1.1\r\n${host()}Connection: close\r\n\r\n`)
    expectEnvelope(response, 400, 'bad_request')
    expect(response?.headers['cache-control']).toBe('no-store')
    expect(response?.headers['x-content-type-options']).toBe('nosniff')
  })

  it('a client that never finishes its headers gets 408 in the envelope once the headers timeout passes', async () => {
    skipResponseChecks(NODE_PARSER_ANSWER)
    const { response, elapsedMs } = await exchange(port, `GET /api/public/v1/users HTTP/1.1\r\n${host()}X-Slow: `, 10_000)
    expectEnvelope(response, 408, 'request_timeout')
    // --headers-timeout 1s; Node checks once a second.
    expect(elapsedMs).toBeGreaterThanOrEqual(900)
    expect(elapsedMs).toBeLessThan(4_000)
  })

  it(`refuses connections beyond --max-connections (${MAX_CONNECTIONS}) and serves again once they close`, async () => {
    const open: Socket[] = []
    try {
      for (let i = 0; i < MAX_CONNECTIONS; i++) {
        const socket = connect({ host: '127.0.0.1', port })
        await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
        open.push(socket)
      }
      // Node accepts, then destroys the connection past the cap: nothing is ever answered.
      const { response } = await exchange(port, `GET /api/public/v1/users HTTP/1.1\r\n${host()}\r\n`)
      expect(response).toBeNull()
    } finally {
      for (const socket of open) socket.destroy()
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
    const { response } = await exchange(port, `GET /api/public/v1/users HTTP/1.1\r\n${host()}Connection: close\r\n\r\n`)
    expectEnvelope(response, 401, 'unauthorized')
  })
})
