import { isIP } from 'node:net'
import { Agent, request } from 'undici'
import type { WebhookRequest, WebhookResponse, WebhookTransport } from '../ports/webhook-transport.js'
import { guardedLookup, isPublicAddress, WebhookDestinationError, type DestinationPolicy } from './destination.js'

/** How much of a response body is kept for the attempt log. */
export const RESPONSE_BODY_KEPT_BYTES = 2 * 1024
/** How much of a response body is read (the rest is not); reading lets the connection be reused. */
const RESPONSE_BODY_READ_BYTES = 64 * 1024

export interface HttpTransportOptions extends DestinationPolicy {
  /** Connections kept per destination origin. Default 32. */
  connectionsPerOrigin?: number
  /** How long an idle keep-alive connection is kept (ms). Default 30,000. */
  keepAliveMs?: number
  /**
   * The dispatcher's attempt timeout (ms). undici's own header and body timeouts are set a
   * little beyond it, a second line that ends a stalled attempt even if the dispatcher's signal
   * never fired. Default 15,000.
   */
  timeoutMs?: number
}

/** How far beyond the attempt timeout undici's own timeouts fire (ms): the dispatcher's deadline normally ends the attempt first. */
const SOCKET_TIMEOUT_MARGIN_MS = 1_000

/**
 * The default `WebhookTransport`: HTTP POST with undici, keep-alive connections, redirects
 * never followed, and every address checked at connect time (DNS rebinding) unless
 * `allowPrivate`. An IP literal never reaches DNS, so it is checked here.
 */
export function httpWebhookTransport(options: HttpTransportOptions): WebhookTransport {
  const policy: DestinationPolicy = { allowPrivate: options.allowPrivate }
  const agent = new Agent({
    connect: { lookup: guardedLookup(policy) },
    connections: options.connectionsPerOrigin ?? 32,
    keepAliveTimeout: options.keepAliveMs ?? 30_000,
    // The dispatcher's deadline bounds the whole attempt; these are undici's own timers, held by
    // the connection, so a stalled socket is closed even if that deadline were lost.
    headersTimeout: (options.timeoutMs ?? 15_000) + SOCKET_TIMEOUT_MARGIN_MS,
    bodyTimeout: (options.timeoutMs ?? 15_000) + SOCKET_TIMEOUT_MARGIN_MS,
  })
  return {
    async send(webhook: WebhookRequest): Promise<WebhookResponse> {
      refuseAtSend(webhook.url, policy)
      const response = await request(webhook.url, {
        method: 'POST',
        headers: webhook.headers,
        body: webhook.body,
        dispatcher: agent,
        signal: webhook.signal,
      })
      const retryAfter = response.headers['retry-after']
      return {
        status: response.statusCode,
        retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
        body: await readStart(response.body),
      }
    },
    close: () => agent.close(),
  }
}

/** Refuses what the connect-time lookup cannot see: a non-https scheme and a non-public IP literal. */
function refuseAtSend(url: string, policy: DestinationPolicy): void {
  if (policy.allowPrivate) return
  const parsed = new URL(url)
  if (parsed.protocol !== 'https:') throw new WebhookDestinationError('not_https', `refused ${parsed.protocol} destination: only https is allowed`)
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) !== 0 && !isPublicAddress(host)) {
    throw new WebhookDestinationError('private_address', `refused non-public address ${host}`)
  }
}

async function readStart(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const kept: Buffer[] = []
  let keptBytes = 0
  let read = 0
  for await (const chunk of body) {
    if (keptBytes < RESPONSE_BODY_KEPT_BYTES) {
      const part = chunk.subarray(0, RESPONSE_BODY_KEPT_BYTES - keptBytes)
      kept.push(part)
      keptBytes += part.length
    }
    read += chunk.length
    if (read >= RESPONSE_BODY_READ_BYTES) {
      body.destroy()
      break
    }
  }
  return Buffer.concat(kept).toString('utf8')
}
