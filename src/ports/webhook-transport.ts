/** One signed delivery attempt, ready to send. */
export interface WebhookRequest {
  url: string
  /** Lower-case names: content-type, user-agent, the Standard Webhooks headers and X-Service-Signature. */
  headers: Record<string, string>
  body: string
  /** Aborts the attempt when it fires (the 15 s timeout, or shutdown). */
  signal: AbortSignal
}

/** The receiver's answer, as much of it as delivery decisions and the attempt log need. */
export interface WebhookResponse {
  status: number
  /** `Retry-After`, when the receiver sent one (raw header value). */
  retryAfter: string | null
  /** The start of the response body, at most the transport's cap (a few KiB). */
  body: string
}

/**
 * Sends webhook deliveries. The default (`httpWebhookTransport`) posts over HTTP with
 * undici: keep-alive, the connect-time address check, no redirects. A host may supply its
 * own, for example to hand deliveries to its own queue or egress proxy.
 *
 * `send` resolves with any HTTP response (the dispatcher decides what counts as success) and
 * rejects when none came: refused, reset, timed out, aborted, or a non-public address.
 */
export interface WebhookTransport {
  send(request: WebhookRequest): Promise<WebhookResponse>
  /** Releases connections; called when the app closes. */
  close?(): Promise<void>
}
