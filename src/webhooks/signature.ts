import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Webhook signatures compatible with the Standard Webhooks specification, so a receiver can
 * verify with its off-the-shelf libraries: headers `webhook-id` (stable across retries),
 * `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, space-separated while two secrets
 * are valid). The spec's `X-Service-Signature` carries the same value (spec 6.2).
 */

/** Prefix of a signing secret: the rest is the base64 of the HMAC key. */
export const SECRET_PREFIX = 'whsec_'
/** Random bytes of a new signing secret. */
const SECRET_BYTES = 32
/** How far a delivery's timestamp may be from the receiver's clock (replay protection). */
export const DEFAULT_TOLERANCE_SECONDS = 300

/** A new signing secret, `whsec_` + base64 of 32 random bytes: shown to the host once. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`
}

/**
 * The HMAC key of a `whsec_…` secret (its base64 part, decoded). The dispatcher keeps these per
 * endpoint, so an attempt neither opens the sealed secret nor decodes it again.
 */
export function webhookSigningKey(secret: string): Buffer {
  return keyOf(secret)
}

function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
  const key = Buffer.from(encoded, 'base64')
  if (key.length === 0) throw new TypeError('a webhook secret must be whsec_ followed by base64')
  return key
}

function signatureOf(key: Buffer, id: string, timestampSeconds: number, body: string): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest()
}

/** The headers of one delivery attempt, signed with every secret currently valid (rotation). */
export function signWebhook(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  if (secrets.length === 0) throw new TypeError('signWebhook needs at least one secret')
  return signWebhookWithKeys(secrets.map(keyOf), id, timestampSeconds, body)
}

/**
 * `signWebhook` with the secrets' HMAC keys (`webhookSigningKey`) instead of the secrets.
 *
 * @example
 * const keys = [webhookSigningKey(secret)] // once per endpoint and secret
 * const headers = signWebhookWithKeys(keys, event.id, Math.floor(Date.now() / 1000), payload)
 */
export function signWebhookWithKeys(keys: readonly Buffer[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  if (keys.length === 0) throw new TypeError('signWebhookWithKeys needs at least one key')
  const signature = keys.map((key) => `v1,${signatureOf(key, id, timestampSeconds, body).toString('base64')}`).join(' ')
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signature,
    'x-service-signature': signature,
  }
}

/** Why a delivery failed verification; the message says which check. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'WebhookVerificationError'
  }
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the delivery's timestamp and now, in seconds. Default 300. */
  toleranceSeconds?: number
  /** Now, in milliseconds since the epoch. Default `Date.now()`. */
  now?: number
}

/**
 * Verifies a delivery as a receiver: the timestamp is within the tolerance, and one of the
 * `v1` signatures matches `secret` over the raw body (compared in constant time).
 *
 * @returns the parsed JSON payload.
 * @throws WebhookVerificationError when a header is missing, the timestamp is out of range,
 * or no signature matches (a changed byte, another secret).
 *
 * @example
 * const event = verifyWebhook(process.env.WEBHOOK_SECRET!, request.headers, rawBody)
 */
export function verifyWebhook(
  secret: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  rawBody: string | Buffer,
  options: VerifyWebhookOptions = {},
): unknown {
  const header = (name: string) => {
    const value = headers[name] ?? headers[name.toLowerCase()]
    if (typeof value !== 'string' || value === '') throw new WebhookVerificationError(`missing ${name} header`)
    return value
  }
  const id = header('webhook-id')
  const timestampText = header('webhook-timestamp')
  const signatures = header('webhook-signature')
  if (!/^\d{1,15}$/.test(timestampText)) throw new WebhookVerificationError('webhook-timestamp is not a Unix time in seconds')
  const timestamp = Number(timestampText)
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000)
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (Math.abs(nowSeconds - timestamp) > tolerance) throw new WebhookVerificationError('webhook-timestamp is outside the tolerance')
  const body = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8')
  const expected = signatureOf(keyOf(secret), id, timestamp, body)
  const matches = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2)
    if (version !== 'v1' || value === undefined) return false
    const given = Buffer.from(value, 'base64')
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  if (!matches) throw new WebhookVerificationError('no webhook-signature matches the secret')
  return JSON.parse(body) as unknown
}
