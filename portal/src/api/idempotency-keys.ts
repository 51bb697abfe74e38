/**
 * One `Idempotency-Key` per pending action. An action is its method, path and body: the user
 * who retries it after a network error (the request may have been carried out, only its answer
 * lost) sends the same key, and the server replays the first answer instead of acting twice.
 * Any answer from the server settles the action; the next one gets a fresh key.
 */
export class IdempotencyKeys {
  readonly #pending = new Map<string, string>()

  keyFor(action: string): string {
    let key = this.#pending.get(action)
    if (key === undefined) {
      key = randomUuid()
      this.#pending.set(action, key)
    }
    return key
  }

  settle(action: string): void {
    this.#pending.delete(action)
  }
}

/** `crypto.randomUUID` exists only in secure contexts; a host page on plain HTTP still has `getRandomValues`. */
function randomUuid(): string {
  if (typeof crypto.randomUUID === 'function' && globalThis.isSecureContext) return crypto.randomUUID()
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
