import { randomBytes } from 'node:crypto'

// Beside the event types in src/events/ so that a producer (src/api) and delivery (src/webhooks,
// which also names its endpoints `we_…` with it) both take ids from below them.

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

/** `prefix` + 24 lower-case base32 characters (120 random bits). */
export function randomId(prefix: string): string {
  const bytes = randomBytes(15)
  let bits = 0
  let value = 0
  let out = prefix
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  return out
}

/** A new event id, `evt_…`: the payload's `id` and every attempt's `webhook-id`. */
export const newEventId = (): string => randomId('evt_')
