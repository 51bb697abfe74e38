/**
 * The attack suites' common ground: the API served over real HTTP as a production host serves it
 * (`workforceServerOptions` + `hardenWorkforceServer`, listening on 127.0.0.1:0), the keys they
 * attack with, the fixed seed or a random one, and the checks every response must pass.
 */
import { randomInt } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { hardenWorkforceServer, workforceApi, workforceServerOptions } from '../../src/index.js'
import { portsOf, type ReferenceAdapterPorts } from '../../src/ports/index.js'
import { generateDataset } from '../../src/seed/generate.js'
import { httpClient, type HttpClient, type RawRequest, type RawResponse } from '../helpers/http-client.js'
import { withResponseChecks } from '../helpers/response-checks.js'

export const PREFIX = '/api/public'

/** Rate limits (issue 9) far above anything the attack suites send. */
export const UNREACHABLE_RATE_LIMITS = { max: 1_000_000_000, failedAuth: { max: 1_000_000_000 } }

/** A backend the attack runs against: a fresh, empty adapter on every `open()`. */
export interface AttackBackend {
  name: string
  open(): Promise<ReferenceAdapterPorts>
}

export const MEMORY: AttackBackend = { name: 'memory', open: async () => createMemoryAdapter() }
export const SQLITE: AttackBackend = { name: 'sqlite', open: () => openSqliteAdapter({ filename: ':memory:' }) }

// ---------------------------------------------------------------------------------------------
// Seed

const inCi = () => {
  const ci = process.env.CI
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0'
}

/** The seed of CI runs: fixed, so a red build is reproducible from its log alone. */
export const CI_FUZZ_SEED = 20_261_123

/**
 * `WORKFORCE_FUZZ_SEED` if set; else the fixed CI seed under CI; else a fresh random one.
 * Printed, with how to replay it, by the caller.
 */
export function fuzzSeed(): { seed: number; origin: string } {
  const given = process.env.WORKFORCE_FUZZ_SEED
  if (given !== undefined && given.trim() !== '') {
    const seed = Number(given)
    if (!Number.isSafeInteger(seed)) throw new Error(`WORKFORCE_FUZZ_SEED must be an integer, got ${JSON.stringify(given)}`)
    return { seed: seed | 0, origin: 'WORKFORCE_FUZZ_SEED' }
  }
  if (inCi()) return { seed: CI_FUZZ_SEED, origin: 'fixed (CI)' }
  return { seed: randomInt(0, 2 ** 31 - 1), origin: 'random (local run)' }
}

// ---------------------------------------------------------------------------------------------
// Server

export interface AttackServer {
  app: FastifyInstance
  adapter: ReferenceAdapterPorts
  client: HttpClient
  /** `send` with `PREFIX` prepended to the path. */
  api(request: RawRequest): Promise<RawResponse>
  close(): Promise<void>
}

/**
 * The plugin, writes included, over `backend` loaded with the seed dataset, in a Fastify server
 * configured as `serve` configures it, listening on an ephemeral loopback port.
 */
export async function startServer(backendOrAdapter: AttackBackend | ReferenceAdapterPorts, options: { maxSockets?: number } = {}): Promise<AttackServer> {
  const adapter = 'open' in backendOrAdapter ? await backendOrAdapter.open() : backendOrAdapter
  await adapter.loadDataset(generateDataset())
  const app = withResponseChecks(Fastify({ ...workforceServerOptions() }))
  hardenWorkforceServer(app)
  let client: HttpClient | undefined
  const close = async () => {
    client?.close()
    await app.close()
    await adapter.close()
  }
  try {
    // Rate limiting stays in the corridor, with limits no fuzz run reaches: thousands of
    // requests (and hundreds of failed authentications) a minute from one address are the point.
    await app.register(workforceApi, { prefix: PREFIX, ...portsOf(adapter), rateLimit: UNREACHABLE_RATE_LIMITS })
    const origin = await app.listen({ host: '127.0.0.1', port: 0 })
    client = httpClient(origin, { maxSockets: options.maxSockets ?? 8, timeoutMs: 10_000 })
  } catch (error) {
    await close().catch(() => {})
    throw error
  }
  const c = client
  return { app, adapter, client: c, api: (request) => c.send({ ...request, path: `${PREFIX}${request.path}` }), close }
}

// ---------------------------------------------------------------------------------------------
// Invariants of every response

/** The error codes of docs/decisions.md, "Errors", by status (written out from the doc, not the code). */
export const DECIDED_CODES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_error',
  429: 'rate_limited',
}

/** Spec 5.4: the one body of every credential failure. */
export const UNAUTHORIZED_BODY = JSON.stringify({ error: { code: 'unauthorized', message: 'Invalid or missing API key', status: 401 } })

/** Every request must be answered within this (issue 8). */
export const MAX_RESPONSE_MS = 2_000

/** Text with every run of over 12 equal characters written as `c‹×n›`, so long values stay readable. */
export function squeeze(text: string): string {
  return text.replace(/(.)\1{12,}/gsu, (run: string, char: string) => `${char}‹×${[...run].length}›`)
}

/** A request as a failure message shows it: method, target, headers, and the start of the body (long runs squeezed). */
export function describeRequest(request: RawRequest): string {
  const body = request.body === undefined ? '' : ` body(${request.body.length} bytes): ${squeeze(String(request.body)).slice(0, 300)}`
  return `${request.method} ${squeeze(request.path).slice(0, 400)} headers=${squeeze(JSON.stringify(request.headers ?? {})).slice(0, 600)}${body}`
}

function describeResponse(response: RawResponse): string {
  return `${response.status} in ${response.elapsedMs.toFixed(0)} ms: ${squeeze(response.body).slice(0, 600)}`
}

/**
 * The response headers docs/decisions.md promises on every response ("Response headers and
 * browsers"): `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`. Returns what is
 * wrong, or undefined. Kept apart from `checkResponse` so that a header defect is reported as its
 * own failure and does not stop the fuzz from checking everything else.
 */
export function headerProblem(request: RawRequest, response: RawResponse): string | undefined {
  const missing = [
    response.headers['cache-control'] === 'no-store' ? undefined : `Cache-Control: ${String(response.headers['cache-control'])}`,
    response.headers['x-content-type-options'] === 'nosniff' ? undefined : `X-Content-Type-Options: ${String(response.headers['x-content-type-options'])}`,
  ].filter((problem) => problem !== undefined)
  if (missing.length === 0) return undefined
  return `${missing.join(', ')}
  request:  ${describeRequest(request)}
  response: ${describeResponse(response)}`
}

/**
 * What every response of the API must be, whatever was sent: no 5xx, answered within 2 s,
 * a 304 only to a conditional read (no body, its `ETag`), and any other non-2xx body exactly
 * `{"error":{code,message,status[,details]}}`
 * with `status` the HTTP status and the code docs/decisions.md names for it. Returns the parsed
 * body (undefined for HEAD and empty bodies).
 */
export function checkResponse(request: RawRequest, response: RawResponse): unknown {
  const fail = (why: string): never => {
    throw new Error(`${why}\n  request:  ${describeRequest(request)}\n  response: ${describeResponse(response)}`)
  }
  if (response.status >= 500) fail('a 5xx answer')
  if (response.status < 200) fail('an impossible status')
  if (response.elapsedMs > MAX_RESPONSE_MS) fail(`answered after ${response.elapsedMs.toFixed(0)} ms (limit ${MAX_RESPONSE_MS} ms)`)
  if (request.method === 'HEAD') {
    if (response.body !== '') fail('a HEAD response with a body')
    return undefined
  }
  if (response.status === 304) {
    // Issue 25: a read asked with If-None-Match naming its current tag; no body, and the tag.
    const conditional = Object.keys(request.headers ?? {}).some((name) => name.toLowerCase() === 'if-none-match')
    if (request.method !== 'GET' || !conditional) fail('a 304 to a request that was not a conditional read')
    if (response.body !== '') fail('a 304 with a body')
    if (typeof response.headers.etag !== 'string') fail('a 304 without its ETag')
    return undefined
  }
  if (!/^application\/json(;|$)/.test(String(response.headers['content-type']))) fail('a body that is not declared JSON')
  let parsed: unknown
  try {
    parsed = JSON.parse(response.body)
  } catch {
    fail('a body that is not JSON')
  }
  if (response.status < 300) {
    if (!isObject(parsed) || !('data' in parsed)) fail('a 2xx body without data')
    return parsed
  }
  checkEnvelope(parsed, response.status, fail)
  if (response.status === 401) {
    if (response.body !== UNAUTHORIZED_BODY) fail('a 401 body that is not the generic one')
    if (response.headers['www-authenticate'] !== 'Bearer') fail('a 401 without WWW-Authenticate: Bearer')
  }
  return parsed
}

function checkEnvelope(parsed: unknown, status: number, fail: (why: string) => never): void {
  if (!isObject(parsed) || Object.keys(parsed).join() !== 'error') fail('not the error envelope: the body must hold exactly "error"')
  const error = (parsed as { error: unknown }).error
  if (!isObject(error)) fail('not the error envelope: "error" is not an object')
  const e = error as Record<string, unknown>
  const keys = Object.keys(e).sort().join()
  if (keys !== 'code,message,status' && keys !== 'code,details,message,status') fail(`not the error envelope: members ${keys}`)
  if (typeof e.code !== 'string' || e.code === '') fail('error.code is not a string')
  if (typeof e.message !== 'string' || e.message === '') fail('error.message is not a string')
  if (e.status !== status) fail(`error.status ${String(e.status)} differs from the HTTP status ${status}`)
  const decided = DECIDED_CODES[status]
  if (decided !== undefined && e.code !== decided) fail(`error.code ${String(e.code)} for ${status}; docs/decisions.md says ${decided}`)
  if ('details' in e) {
    const details = e.details
    if (!Array.isArray(details) || details.length === 0) fail('error.details is not a non-empty array')
    for (const detail of details as unknown[]) {
      if (!isObject(detail) || Object.keys(detail).sort().join() !== 'field,message') fail('an error.details entry is not {field, message}')
      const d = detail as Record<string, unknown>
      if (typeof d.field !== 'string' || typeof d.message !== 'string') fail('an error.details entry is not {field, message} strings')
    }
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
