import type { WebhookRequest, WebhookResponse, WebhookTransport } from '../ports/webhook-transport.js'

/** A delivery attempt the recording transport received. */
export interface RecordedWebhook {
  url: string
  headers: Record<string, string>
  body: string
  /** `Date.now()` when it was sent. */
  at: number
}

export interface RecordingWebhookTransport extends WebhookTransport {
  /** Every attempt so far, oldest first. */
  readonly sent: RecordedWebhook[]
  /** Decides each answer; default `{ status: 204 }`. Replace it to simulate failures. */
  answer: (request: RecordedWebhook) => WebhookResponse | Promise<WebhookResponse>
}

/**
 * A `WebhookTransport` that sends nothing: it records each attempt and answers as told. For
 * hosts' tests of their webhook wiring (and ours), without a receiver or a network.
 *
 * @example
 * const transport = recordingWebhookTransport()
 * await app.register(workforceApi, { ...ports, webhookOptions: { secretKey, transport } })
 * // … make a change …
 * expect(JSON.parse(transport.sent[0].body).type).toBe('todos.created')
 */
export function recordingWebhookTransport(answer?: RecordingWebhookTransport['answer']): RecordingWebhookTransport {
  const transport: RecordingWebhookTransport = {
    sent: [],
    answer: answer ?? (() => ({ status: 204, retryAfter: null, body: '' })),
    async send(request: WebhookRequest): Promise<WebhookResponse> {
      request.signal.throwIfAborted()
      const recorded = { url: request.url, headers: { ...request.headers }, body: request.body, at: Date.now() }
      transport.sent.push(recorded)
      return transport.answer(recorded)
    },
  }
  return transport
}
