import { randomBytes } from 'node:crypto'
import { linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { SecretBox } from '../webhooks/secret-box.js'
import { CliError, isPostgresUrl } from './cli-error.js'

/** The environment variable that holds the webhook secret key: base64 of 32 bytes. */
export const WEBHOOK_KEY_ENV = 'WORKFORCE_WEBHOOK_KEY'
/** Beside a SQLite file `<db>`, the key file `<db>.webhook-key` holds the key when the variable is unset. */
export const WEBHOOK_KEY_FILE_SUFFIX = '.webhook-key'
const KEY_BYTES = 32

export const WEBHOOK_KEY_HOW_TO_SET = `set ${WEBHOOK_KEY_ENV} to base64 of 32 random bytes (openssl rand -base64 32), the same for every workforce-api command and serve instance on this database`

/** Where the key came from, for the one line the CLI prints about it. */
export type WebhookKeySource = 'env' | 'key-file' | 'new-key-file' | 'ephemeral'

export interface WebhookKey {
  /** base64 of 32 bytes, as `webhookOptions.secretKey` takes it. */
  key: string
  source: WebhookKeySource
  /** The key file, for the sources that have one. */
  path?: string
  /** One line for stderr: a key file was created, the key is ephemeral, or the key file is readable by others. */
  note?: string
}

/**
 * The key that seals endpoints' signing secrets at rest (`webhookOptions.secretKey`). `webhooks`
 * commands and `serve` resolve it the same way, so an endpoint created by the CLI is delivered
 * by `serve`:
 * 1. `WORKFORCE_WEBHOOK_KEY`, if set;
 * 2. a Postgres URL: none — the database is shared by instances that need one key, so the
 *    operator chooses it (`null`; `webhooks` commands refuse, `serve` runs without delivery);
 * 3. `:memory:`: a new key for this process (the database dies with it anyway);
 * 4. a SQLite file: the key file `<db>.webhook-key` beside it (mode 0600), created on first use.
 *    It must travel with the database: without it the stored secrets cannot be opened.
 *
 * @throws CliError (exit 2) when the variable is not base64 of 32 bytes, (exit 1) when the key file is damaged
 */
export function resolveWebhookKey(db: string): WebhookKey | null {
  const resolved = resolveWebhookKeyLater(db)
  // Nothing is sealed with the new key yet: of two processes creating the file, the loser takes the winner's key.
  return resolved?.save === undefined ? resolved : createKeyFile(resolved.path as string, resolved.key, { adoptWinner: true })
}

/**
 * Like `resolveWebhookKey`, except that a key file that does not exist yet is not written: the
 * new key comes back with `save()`, which writes the file once the command has done what it was
 * asked (`serve`: once it listens). A command that fails leaves no key file behind (issue 26).
 */
export function resolveWebhookKeyLater(db: string): PendingWebhookKey | null {
  const fromEnv = process.env[WEBHOOK_KEY_ENV]
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!isKey(fromEnv.trim())) throw new CliError(`${WEBHOOK_KEY_ENV} must be base64 of 32 bytes (openssl rand -base64 32)`, 2)
    return { key: fromEnv.trim(), source: 'env' }
  }
  if (isPostgresUrl(db)) return null
  if (db === ':memory:') return { key: newKey(), source: 'ephemeral', note: 'the webhook secret key lives in this process only (the database is :memory:)' }
  const path = `${db}${WEBHOOK_KEY_FILE_SUFFIX}`
  const existing = readKeyFile(path)
  if (existing !== null) return existing
  const key = newKey()
  return { key, source: 'new-key-file', path, save: () => createKeyFile(path, key, { adoptWinner: false }) }
}

/** A resolved key; `save` is there when the key file is still to be written. */
export interface PendingWebhookKey extends WebhookKey {
  /**
   * Writes the new key file and returns the key with the line to print about it.
   * @throws CliError when another process wrote a different key file meanwhile
   */
  save?(): WebhookKey
}

/**
 * A `SecretBox` whose key is resolved (and its key file created) only when a secret is sealed or
 * opened: `webhooks list`, or a `webhooks create` refused for its URL, events or company, never
 * creates a key file. `resolve` runs at most once.
 */
export class SecretBoxOnFirstUse extends SecretBox {
  readonly #resolve: () => string
  #box: SecretBox | undefined

  constructor(resolve: () => string) {
    // The placeholder key is never used: both methods go to the box made on first use.
    super(Buffer.alloc(KEY_BYTES))
    this.#resolve = resolve
  }

  override seal(secret: string, endpointId: string): string {
    return this.#real().seal(secret, endpointId)
  }

  override open(sealed: string, endpointId: string): string {
    return this.#real().open(sealed, endpointId)
  }

  #real(): SecretBox {
    this.#box ??= new SecretBox(this.#resolve())
    return this.#box
  }
}

/**
 * Whether `resolveWebhookKey(db)` reads (or creates) the key file beside a SQLite database.
 * Commands resolve such a key only once the database is known to be ours, so that a refused
 * `--db` gets no key file; every other source they check before opening anything.
 */
export function usesKeyFile(db: string): boolean {
  const fromEnv = process.env[WEBHOOK_KEY_ENV]
  return (fromEnv === undefined || fromEnv === '') && !isPostgresUrl(db) && db !== ':memory:'
}

/** Like `resolveWebhookKey`, for commands that cannot work without a key. */
export function requireWebhookKey(db: string): WebhookKey {
  const resolved = resolveWebhookKey(db)
  if (resolved === null) throw new CliError(`webhooks on a Postgres database need ${WEBHOOK_KEY_ENV}: ${WEBHOOK_KEY_HOW_TO_SET}`, 2)
  return resolved
}

/**
 * Writes `key` to the key file `path`. Written aside, then linked into place: link fails if the
 * file exists, so of two processes creating it at once one wins and the other reads its key,
 * never a half-written file: with `adoptWinner` the loser returns the winner's key, else it fails.
 */
function createKeyFile(path: string, key: string, { adoptWinner }: { adoptWinner: boolean }): WebhookKey {
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(draft, `${key}\n`, { mode: 0o600, flag: 'wx' })
  try {
    linkSync(draft, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const winner = readKeyFile(path)
    if (winner === null) throw error
    if (adoptWinner) return winner
    // A command that already uses `key` (serve, listening) cannot switch to the winner's now.
    throw new CliError(`another workforce-api command created ${path} meanwhile; run this one again to use that key`)
  } finally {
    unlinkSync(draft)
  }
  return {
    key,
    source: 'new-key-file',
    path,
    note: `created the webhook secret key ${path} (mode 0600); keep it with the database, or set ${WEBHOOK_KEY_ENV} instead`,
  }
}

function readKeyFile(path: string): WebhookKey | null {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new CliError(`cannot read the webhook secret key ${path}: ${(error as Error).message}`)
  }
  const key = text.trim()
  if (!isKey(key)) {
    throw new CliError(`the webhook secret key ${path} is not base64 of 32 bytes; restore it from a backup (endpoint secrets sealed with it cannot be opened without it)`)
  }
  const shared = (statSync(path).mode & 0o077) !== 0
  return { key, source: 'key-file', path, ...(shared ? { note: `warning: the webhook secret key ${path} is open to other users; chmod 600 it` } : {}) }
}

function isKey(text: string): boolean {
  return /^[A-Za-z0-9+/_-]+={0,2}$/.test(text) && Buffer.from(text, 'base64').length === KEY_BYTES
}

function newKey(): string {
  return randomBytes(KEY_BYTES).toString('base64')
}
