import { STATUS_CODES as HTTP_REASONS, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { ConnectionError, FastifyHttpOptions, FastifyInstance } from 'fastify'
import { errorEnvelope, STATUS_CODES } from '../errors.js'
import { workforceFrameworkErrors } from '../corridor/render.js'
import { RESPONSE_HEADERS } from '../corridor/response-headers.js'

/**
 * Limits of a process that serves the API. Every default is a named constant so operators can
 * read what they get; `serve` takes each as a flag and hosts pass their own.
 */
export interface ServerLimits {
  /** Whole request (headers and body) must arrive within this; else 408. Node's default: 300 s. */
  requestTimeoutMs: number
  /** Headers must arrive within this (slowloris); else 408. Node's default: 60 s, off when Fastify's requestTimeout is 0. */
  headersTimeoutMs: number
  /** An idle keep-alive connection is closed after this. Fastify's default: 72 s. */
  keepAliveTimeoutMs: number
  /** A socket with no activity at all is destroyed after this. Fastify's default: never. */
  socketTimeoutMs: number
  /** Connections open at once; Node drops any beyond. Node's default: unlimited. */
  maxConnections: number
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000
export const DEFAULT_SOCKET_TIMEOUT_MS = 60_000
export const DEFAULT_MAX_CONNECTIONS = 1_000
/** How often Node checks the request and headers timeouts (its default, 30 s, lets a 10 s limit run to 40 s). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = {
  requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
  headersTimeoutMs: DEFAULT_HEADERS_TIMEOUT_MS,
  keepAliveTimeoutMs: DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  socketTimeoutMs: DEFAULT_SOCKET_TIMEOUT_MS,
  maxConnections: DEFAULT_MAX_CONNECTIONS,
}

/**
 * Fastify server options for a process that serves the API: bounded timeouts, and every error
 * Fastify or Node's HTTP parser raises before a route runs answered in the API's envelope.
 * Node answers a missing `Host` with its own bare 400; here Fastify sees the request instead,
 * and `hardenWorkforceServer` refuses it in the envelope.
 *
 * @example
 * const app = Fastify({ logger: true, ...workforceServerOptions() })
 * hardenWorkforceServer(app)
 */
export function workforceServerOptions(limits: Partial<ServerLimits> = {}): FastifyHttpOptions<Server> {
  const chosen = { ...DEFAULT_SERVER_LIMITS, ...limits }
  return {
    requestTimeout: chosen.requestTimeoutMs,
    keepAliveTimeout: chosen.keepAliveTimeoutMs,
    connectionTimeout: chosen.socketTimeoutMs,
    http: {
      headersTimeout: Math.min(chosen.headersTimeoutMs, chosen.requestTimeoutMs),
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      requireHostHeader: false,
    },
    frameworkErrors: workforceFrameworkErrors,
    clientErrorHandler: workforceClientErrorHandler,
  }
}

/**
 * After `Fastify(workforceServerOptions())`: caps connections, refuses an HTTP/1.1 request
 * without `Host` (400) and a `CONNECT` (405) in the envelope — Node would answer the first with
 * a bare 400 and drop the second without a word.
 */
export function hardenWorkforceServer(app: FastifyInstance, limits: Partial<ServerLimits> = {}): void {
  app.server.maxConnections = limits.maxConnections ?? DEFAULT_MAX_CONNECTIONS
  rememberRequestStarts(app.server)
  app.server.on('connect', (_request, socket: Duplex) => writeEnvelope(socket, 405))
  // Callback style: no promise on every request of the process for a check that almost never fires.
  app.addHook('onRequest', (request, reply, done) => {
    const { httpVersionMajor, httpVersionMinor } = request.raw
    if (request.headers.host === undefined && httpVersionMajor === 1 && httpVersionMinor >= 1) {
      reply.code(400).headers(RESPONSE_HEADERS).send(errorEnvelope('bad_request', 'An HTTP/1.1 request must carry a Host header', 400))
      return
    }
    done()
  })
}

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses (oversized headers, a bad
 * `Content-Length` or `Transfer-Encoding`, a malformed method or header, a timed-out request),
 * answered in the envelope on the raw socket, then closed.
 */
export function workforceClientErrorHandler(error: ConnectionError, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
  // A response to HEAD has no body (RFC 9110 9.3.2); the method is the first bytes Node read.
  writeEnvelope(socket, status, startOfRequest(socket, error) === 'HEAD ')
}

/** The first bytes of the request each socket is receiving, kept by `rememberRequestStarts`. */
const REQUEST_START = Symbol('workforce-api request start')
type TrackedSocket = Duplex & { [REQUEST_START]?: string | null }

/**
 * Notes the first five bytes of each request on each connection (a new request starts with the
 * first data after the previous response ended), so a parser error met in a later chunk of a
 * long request still knows whether it was a HEAD.
 */
function rememberRequestStarts(server: Server): void {
  server.on('connection', (socket: TrackedSocket) => {
    socket[REQUEST_START] = null
    socket.on('data', (chunk: Buffer) => {
      if (socket[REQUEST_START] === null) socket[REQUEST_START] = chunk.subarray(0, 5).toString('latin1')
    })
  })
  server.on('request', (_request, response) => {
    const socket = response.socket as TrackedSocket | null
    response.once('finish', () => {
      if (socket !== null) socket[REQUEST_START] = null
    })
  })
}

/** What the failed request started with: remembered per connection, else the chunk Node was parsing. */
function startOfRequest(socket: TrackedSocket, error: ConnectionError): string | undefined {
  const remembered = socket[REQUEST_START]
  if (typeof remembered === 'string') return remembered
  // Node hands over the bytes it was parsing as a Buffer (Fastify's type says otherwise).
  const raw = error.rawPacket as unknown
  return Buffer.isBuffer(raw) ? raw.subarray(0, 5).toString('latin1') : undefined
}

const CLIENT_ERROR_MESSAGES: Readonly<Record<number, string>> = {
  400: 'The request could not be parsed as HTTP',
  405: 'CONNECT is not supported',
  408: 'The request did not arrive in time',
  431: 'The request headers are too large',
}

function writeEnvelope(socket: Duplex, status: number, headOnly = false): void {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const body = JSON.stringify(errorEnvelope(STATUS_CODES[status] ?? 'bad_request', CLIENT_ERROR_MESSAGES[status] ?? 'Bad request', status))
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    ...RESPONSE_HEADERS,
    connection: 'close',
  }
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  socket.end(`HTTP/1.1 ${status} ${HTTP_REASONS[status]}\r\n${head}\r\n${headOnly ? '' : body}`)
}
