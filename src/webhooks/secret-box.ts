import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const VERSION = 'v1'
const KEY_BYTES = 32
const IV_BYTES = 12

/** Why a sealed secret could not be opened: a different key, or a damaged value. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SecretBoxError'
  }
}

/**
 * Seals webhook signing secrets for storage with AES-256-GCM, so a database dump, backup or
 * replica alone does not reveal them. The key is the host's (`webhookOptions.secretKey`):
 * 32 bytes, given as base64 (`openssl rand -base64 32`) or a Buffer.
 *
 * A sealed value is `v1.<iv>.<tag>.<ciphertext>` (base64url parts); the endpoint id is bound
 * in as associated data, so a sealed secret copied to another endpoint does not open.
 */
export class SecretBox {
  readonly #key: Buffer

  constructor(key: string | Buffer) {
    const bytes = typeof key === 'string' ? Buffer.from(key, 'base64') : Buffer.from(key)
    if (bytes.length !== KEY_BYTES) throw new TypeError(`the webhook secret key must be ${KEY_BYTES} bytes (base64 of 32 random bytes)`)
    this.#key = bytes
  }

  seal(secret: string, endpointId: string): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv)
    cipher.setAAD(Buffer.from(endpointId))
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
    return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.')
  }

  open(sealed: string, endpointId: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.')
    if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) {
      throw new SecretBoxError(`the signing secret of endpoint ${endpointId} is not a sealed value`)
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(endpointId))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8')
    } catch {
      throw new SecretBoxError(`the signing secret of endpoint ${endpointId} does not open with this key (was it sealed with another webhook secret key?)`)
    }
  }
}
