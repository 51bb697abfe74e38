import type { AuditEntry } from '../../src/ports/audit-store.js'
import type { ApiKeyRecord, KeyState, KeyStore } from '../../src/ports/key-store.js'
import type { SqlCodec } from './codec.js'
import type { ChangeNotifier } from './change-notifier.js'
import type { QueryDb } from './prepared.js'
import { auditedChange, insertAuditEntry } from './sql-audit-store.js'
import { sqlTransactor, type SqlTransactor } from './sql-transactor.js'

/** How the key store adapts to a dialect; every field is optional. */
export interface SqlKeyStoreOptions {
  /** Tells every instance of a state change, in the change's own transaction (Postgres NOTIFY). */
  notify?: ChangeNotifier
  /** The dialect's transactor (SQLite: `BEGIN IMMEDIATE` behind the gate). Default: Kysely's transactions on `db`. */
  transact?: SqlTransactor
}

/**
 * The `KeyStore` port over `wfa_api_keys`. Only the SHA-256 of a secret is ever written.
 * A change that carries an audit entry, or must be announced, is one transaction with it; a
 * plain one is a single statement.
 */
export class SqlKeyStore implements KeyStore {
  readonly #notify: ChangeNotifier | undefined
  readonly #transact: SqlTransactor

  constructor(
    private readonly db: QueryDb,
    private readonly codec: SqlCodec,
    options: SqlKeyStoreOptions = {},
  ) {
    this.#notify = options.notify
    this.#transact = sqlTransactor(db, options)
  }

  async find(keyId: string): Promise<ApiKeyRecord | null> {
    const row = await this.db.selectFrom('wfa_api_keys').selectAll().where('key_id', '=', keyId).executeTakeFirst()
    return row === undefined ? null : this.#decode(row)
  }

  async create(record: ApiKeyRecord, audit?: AuditEntry): Promise<void> {
    const c = this.codec
    const insert = (db: QueryDb) =>
      db
        .insertInto('wfa_api_keys')
        .values({
          key_id: record.key_id,
          company_id: record.company_id,
          secret_hash: record.secret_hash,
          scopes: c.json(record.scopes),
          expires_at: record.expires_at === null ? null : c.instant(record.expires_at),
          state: record.state,
          name: record.name,
          rate_limit: record.rate_limit,
          created_at: c.instant(record.created_at),
          last_used_at: record.last_used_at === null ? null : c.instant(record.last_used_at),
        })
        .execute()
    await auditedChange(this.db, this.#transact, c, audit, insert)
  }

  async setState(keyId: string, to: KeyState, from: readonly KeyState[], audit?: AuditEntry): Promise<ApiKeyRecord | null> {
    // One conditional UPDATE: two admins racing cannot both win, and revoked stays revoked.
    const update = (db: QueryDb) =>
      db.updateTable('wfa_api_keys').set({ state: to }).where('key_id', '=', keyId).where('state', 'in', [...from]).returningAll().executeTakeFirst()
    const notify = this.#notify
    const row =
      notify === undefined && audit === undefined
        ? await update(this.db)
        : await this.#transact(async (trx) => {
            const changed = await update(trx)
            // A refused change is neither announced nor audited.
            if (changed === undefined) return undefined
            await notify?.(trx, { kind: 'key', keyId })
            if (audit !== undefined) await insertAuditEntry(trx, this.codec, audit)
            return changed
          })
    return row === undefined ? null : this.#decode(row)
  }

  async list(companyId?: number): Promise<ApiKeyRecord[]> {
    let query = this.db.selectFrom('wfa_api_keys').selectAll().orderBy('created_at').orderBy('key_id')
    if (companyId !== undefined) query = query.where('company_id', '=', companyId)
    const rows = await query.execute()
    return rows.map((row) => this.#decode(row))
  }

  async touchLastUsed(keyId: string, at: Date): Promise<void> {
    await this.db.updateTable('wfa_api_keys').set({ last_used_at: this.codec.instant(at) }).where('key_id', '=', keyId).execute()
  }

  #decode(row: Record<string, any>): ApiKeyRecord {
    const c = this.codec
    return {
      key_id: row.key_id,
      company_id: c.readInt(row.company_id),
      secret_hash: row.secret_hash,
      scopes: c.readJson(row.scopes),
      expires_at: row.expires_at === null ? null : c.readInstant(row.expires_at),
      state: row.state,
      name: row.name,
      rate_limit: row.rate_limit === null ? null : c.readInt(row.rate_limit),
      created_at: c.readInstant(row.created_at),
      last_used_at: row.last_used_at === null ? null : c.readInstant(row.last_used_at),
    }
  }
}
