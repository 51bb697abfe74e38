import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request the receiver got. */
export interface Received {
  path: string
  headers: IncomingHttpHeaders
  /** The raw body, exactly as sent. */
  body: string
  /** `Date.now()` when the body had arrived. */
  at: number
}

/** How the receiver answers one request: a status (and headers, body), or `hang` (never answers). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang'

/**
 * A webhook receiver on 127.0.0.1 (a real HTTP server, keep-alive): records every request and
 * answers with `answer(request)` — 204 by default.
 */
export interface Receiver {
  url: string
  received: Received[]
  answer: (request: Received) => Answer
  /** Resolves once `count` requests (in total) have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const received: Received[] = []
  const waiters = new Set<() => boolean>()
  const hanging: ServerResponse[] = []
  const receiver: Receiver = {
    url: '',
    received,
    answer: () => ({ status: 204 }),
    waitFor(count, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return false
          clearTimeout(timer)
          resolve(received.slice(0, count))
          return true
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`receiver: ${received.length} of ${count} requests after ${timeoutMs} ms`))
        }, timeoutMs)
        if (!check()) waiters.add(check)
      })
    },
    async close() {
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry: Received = { path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      received.push(entry)
      for (const check of [...waiters]) if (check()) waiters.delete(check)
      const answer = receiver.answer(entry)
      if (answer === 'hang') {
        hanging.push(response)
        return
      }
      response.writeHead(answer.status, answer.headers)
      response.end(answer.body ?? '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  return receiver
}
