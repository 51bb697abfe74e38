import http from 'node:http'
import net from 'node:net'

/**
 * A small HTTP/1.1 client over real sockets for suites that talk to a listening app
 * (`app.listen({ host: '127.0.0.1', port: 0 })`) instead of `app.inject`. Connections are kept
 * alive and capped, and every request is timed from the moment it is handed to the socket pool
 * until the last byte of the response body arrived.
 */

/** Header values: one value, or several to send the header more than once. */
export type RawHeaders = Record<string, string | string[]>

export interface RawRequest {
  method: string
  /** The request target exactly as sent: already percent-encoded, bytes 0x21–0xFF only. */
  path: string
  headers?: RawHeaders
  /** Sent as is; a string is sent as UTF-8. */
  body?: string | Buffer
}

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  /** The body as UTF-8 text. */
  body: string
  /** Milliseconds from sending the request until the whole response had arrived. */
  elapsedMs: number
}

export interface HttpClient {
  readonly origin: string
  send(request: RawRequest): Promise<RawResponse>
  close(): void
}

/** Node's own rule for a request target (`http.request` throws ERR_UNESCAPED_CHARACTERS otherwise). */
export const SENDABLE_PATH = /^[\u0021-\u00ff]+$/
/** Node's own rule for a header value (`ERR_INVALID_CHAR` otherwise). */
export const SENDABLE_HEADER_VALUE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/

/**
 * A keep-alive client for `origin` (`http://127.0.0.1:<port>`), with at most `maxSockets`
 * connections. A request that has no complete response after `timeoutMs` rejects.
 */
export function httpClient(origin: string, options: { maxSockets?: number; timeoutMs?: number } = {}): HttpClient {
  const url = new URL(origin)
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 4 })
  const timeoutMs = options.timeoutMs ?? 10_000
  return {
    origin,
    send(request) {
      return new Promise<RawResponse>((resolve, reject) => {
        const started = performance.now()
        const body = request.body === undefined ? undefined : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body
        const headers: RawHeaders = { ...request.headers }
        if (body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-length')) {
          headers['content-length'] = String(body.length)
        }
        let settled = false
        const fail = (error: Error) => {
          if (settled) return
          settled = true
          reject(error)
        }
        const req = http.request(
          { agent, hostname: url.hostname, port: url.port, method: request.method, path: request.path, headers },
          (res) => {
            const chunks: Buffer[] = []
            res.on('data', (chunk: Buffer) => chunks.push(chunk))
            res.on('error', fail)
            res.on('end', () => {
              if (settled) return
              settled = true
              clearTimeout(timer)
              resolve({
                status: res.statusCode ?? 0,
                headers: res.headers,
                body: Buffer.concat(chunks).toString('utf8'),
                elapsedMs: performance.now() - started,
              })
            })
          },
        )
        const timer = setTimeout(() => {
          fail(new Error(`no complete response within ${timeoutMs} ms: ${request.method} ${request.path.slice(0, 200)}`))
          req.destroy()
        }, timeoutMs)
        req.on('error', (error: NodeJS.ErrnoException) => {
          clearTimeout(timer)
          const what = `${request.method} ${request.path.slice(0, 300)}`
          fail(new Error(`no response to ${what}: ${error.code ?? ''} ${error.message}`, { cause: error }))
        })
        // The server may answer (413, 400) and close before a large body is written: the
        // response still arrives, so a write error alone is not the request's outcome.
        if (body !== undefined) req.end(body)
        else req.end()
      })
    },
    close() {
      agent.destroy()
    },
  }
}

/**
 * Runs `work` on every item with at most `limit` running at once; resolves with the results in
 * the order of `items`. The first rejection rejects the whole, after the running ones settled.
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  let failure: { error: unknown } | undefined
  const lane = async () => {
    while (failure === undefined) {
      const index = next++
      if (index >= items.length) return
      try {
        results[index] = await work(items[index] as T, index)
      } catch (error) {
        failure ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane))
  if (failure !== undefined) throw failure.error
  return results
}

/**
 * Sends `request` on a fresh connection, byte for byte, and returns every byte the server sent
 * until it closed the connection (or `timeoutMs` passed): for answers an HTTP client refuses to
 * parse, such as a response to HEAD that carries a body.
 */
export function rawExchange(origin: string, request: RawRequest, timeoutMs = 2_000): Promise<string> {
  const url = new URL(origin)
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${url.host}`, 'connection: close']
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`)
  }
  const body = request.body === undefined ? Buffer.alloc(0) : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body
  if (request.body !== undefined) lines.push(`content-length: ${body.length}`)
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = net.connect(Number(url.port), url.hostname, () => socket.end(Buffer.concat([head, body])))
    const timer = setTimeout(() => {
      socket.destroy()
      resolve(`${Buffer.concat(chunks).toString('latin1')}<no close within ${timeoutMs} ms>`)
    }, timeoutMs)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(Buffer.concat(chunks).toString('latin1'))
    })
  })
}
