import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join, relative, resolve } from 'node:path'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, afterEach, beforeEach, expect } from 'vitest'
import { captureResponse } from './response-checks.js'

/** One response a test received, one JSON line in the recording. */
export interface RecordedResponse {
  /** The test file, relative to the working directory. */
  file: string
  /** vitest's full test name, or `(outside tests) …` for a `beforeAll`/`afterAll` request. */
  test: string
  /** The response's position among those the same `test` received, from 0, in the order they ended. */
  seq: number
  transport: 'inject' | 'http'
  method: string
  url: string
  status: number
  /** Every header, names in lower case, values as strings (or arrays of strings), sorted by name. */
  headers: Record<string, string | string[]>
  /** `json`: `body` is the parsed value; `text`: a UTF-8 string; `base64`: bytes; `empty`: no body. */
  bodyKind: 'json' | 'text' | 'base64' | 'empty'
  body: unknown
}

const RECORDED_APP = Symbol.for('workforce-api.test.response-recording')

/**
 * Issue 23's proof: with `WORKFORCE_RECORD_RESPONSES=<dir>`, every response any Fastify app in
 * the test process sends, to `app.inject` or to real HTTP, is appended to
 * `<dir>/<test file path with / as __>.jsonl`, one file per test file, so parallel workers never
 * write to the same file. `scripts/compare-recordings.ts` compares two such runs before a change
 * with one after it. `openapi-setup.ts` calls this; off (and not even loaded) without the variable.
 *
 * Apps are found through Fastify's `fastify.initialization` diagnostics channel rather than
 * `withResponseChecks`, because the admin apps (`test/admin/admin-app.ts`), `serve()`'s app and
 * tests that build their own `Fastify()` never pass through that helper.
 */
export function startResponseRecording(directory: string): void {
  const dir = resolve(directory)
  mkdirSync(dir, { recursive: true })
  const recorder = new Recorder(dir)
  const onInit = (message: unknown) => recordApp((message as { fastify: FastifyInstance }).fastify, recorder)
  subscribe('fastify.initialization', onInit)

  // Registered before any test file's hooks: runs first before a test, last after it, so what
  // the test's own beforeEach/afterEach receive counts as the test's.
  beforeEach(() => recorder.enterTest(expect.getState().currentTestName ?? '(unnamed test)'))
  afterEach(() => recorder.leaveTest())
  afterAll(() => void unsubscribe('fastify.initialization', onInit))
}

class Recorder {
  private current: string | undefined
  private lastTest: string | undefined
  private readonly seqs = new Map<string, number>()
  private readonly started = new Set<string>()

  constructor(private readonly dir: string) {}

  enterTest(name: string): void {
    this.current = name
  }

  leaveTest(): void {
    this.lastTest = this.current
    this.current = undefined
  }

  write(response: Omit<RecordedResponse, 'file' | 'test' | 'seq'>): void {
    const testPath = expect.getState().testPath
    const file = testPath === undefined ? '(unknown file)' : relative(process.cwd(), testPath)
    const test = this.current ?? (this.lastTest === undefined ? '(outside tests) before the first test' : `(outside tests) after ${this.lastTest}`)
    const seq = this.seqs.get(test) ?? 0
    this.seqs.set(test, seq + 1)
    const target = join(this.dir, `${file.replace(/[/\\]/g, '__')}.jsonl`)
    // A rerun into the same directory starts the file afresh rather than appending to the old run.
    if (!this.started.has(target)) {
      writeFileSync(target, '')
      this.started.add(target)
    }
    const line: RecordedResponse = { file, test, seq, ...response }
    appendFileSync(target, `${JSON.stringify(line)}\n`)
  }
}

function recordApp(app: FastifyInstance, recorder: Recorder): void {
  const marked = app as unknown as Record<symbol, boolean>
  if (marked[RECORDED_APP] === true) return
  marked[RECORDED_APP] = true

  const inject = app.inject.bind(app) as (options: InjectOptions | string) => Promise<LightMyRequestResponse>
  ;(app as unknown as { inject: unknown }).inject = (options: InjectOptions | string, callback?: unknown) => {
    // The chain form (`app.inject().get(…)`) and the callback form are not used by our tests.
    if (callback !== undefined || options === undefined) return (inject as (...args: unknown[]) => unknown)(options, callback)
    return inject(options).then((response) => {
      const method = response.raw.req.method ?? 'GET'
      recorder.write({ transport: 'inject', method, url: response.raw.req.url ?? '/', status: response.statusCode, ...describeBody(method, response.headers, response.rawPayload) })
      return response
    })
  }

  app.server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    captureResponse(response, (headers, body) => {
      const method = request.method ?? 'GET'
      const sent = headersSent(response) ?? headers
      recorder.write({ transport: 'http', method, url: request.url ?? '/', status: response.statusCode, ...describeBody(method, sent, body) })
    })
  })
}

/**
 * The header block Node wrote, so that the headers Node adds itself (`date`, `connection`,
 * `keep-alive`, `transfer-encoding`), which neither `getHeaders()` nor `writeHead` shows, are
 * recorded too. `_header` is Node's own field; without it the captured headers are used.
 */
function headersSent(response: ServerResponse): Record<string, unknown> | undefined {
  const block = (response as unknown as { _header?: unknown })._header
  if (typeof block !== 'string') return undefined
  const headers: Record<string, string | string[]> = {}
  for (const line of block.split('\r\n').slice(1)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    const had = headers[name]
    headers[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value]
  }
  return headers
}

function describeBody(method: string, rawHeaders: Record<string, unknown>, body: Buffer): Pick<RecordedResponse, 'headers' | 'bodyKind' | 'body'> {
  const headers: Record<string, string | string[]> = {}
  for (const name of Object.keys(rawHeaders).sort()) {
    const value = rawHeaders[name]
    if (value === undefined) continue
    headers[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value)
  }
  if (method === 'HEAD' || body.length === 0) return { headers, bodyKind: 'empty', body: null }
  const text = body.toString('utf8')
  if (/json/i.test(String(headers['content-type'] ?? ''))) {
    try {
      return { headers, bodyKind: 'json', body: JSON.parse(text) }
    } catch {
      // A body that says JSON but is not: kept as text, so the difference still shows.
    }
  }
  if (Buffer.from(text, 'utf8').equals(body)) return { headers, bodyKind: 'text', body: text }
  return { headers, bodyKind: 'base64', body: body.toString('base64') }
}
