import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

const PREFIX = 'wfa-admin-replay.v1.'
const INFO = 'fastify-workforce-api admin idempotent replay'
const IV_BYTES = 12

/**
 * Seals the stored answer of an admin change for its idempotent replay. Those answers hold
 * secrets shown once (an API key's plaintext, a webhook signing secret), and the idempotency
 * store keeps them for a day: they are stored sealed with AES-256-GCM under a key derived
 * (HKDF-SHA256) from the raw `Idempotency-Key`, which is never stored (the slot is its
 * SHA-256), with the slot as associated data. Only a retry that presents the same key opens
 * it; a dump of the idempotency table alone does not.
 */
export class ReplaySeal {
  readonly #key: Buffer

  constructor(idempotencyKey: string, private readonly slot: string) {
    this.#key = Buffer.from(hkdfSync('sha256', idempotencyKey, slot, INFO, 32))
  }

  seal(body: string): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv)
    cipher.setAAD(Buffer.from(this.slot))
    const ciphertext = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()])
    return `${PREFIX}${[iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')).join('.')}`
  }

  /** The body `seal` was given; throws if `stored` was not sealed for this key and slot. */
  open(stored: string): string {
    const [iv, tag, ciphertext] = stored.startsWith(PREFIX) ? stored.slice(PREFIX.length).split('.') : []
    if (iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('workforce-admin: a stored admin answer is not sealed')
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(this.slot))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8')
  }
}
