import type { ApiKeyRecord, KeyState, KeyStore } from '../../src/ports/key-store.js'
import type { SqlCodec } from './codec.js'
import type { ChangeNotifier } from './change-notifier.js'
import type { QueryDb } from './prepared.js'

/** The `KeyStore` port over `wfa_api_keys`. Only the SHA-256 of a secret is ever written. */
export class SqlKeyStore implements KeyStore {
  constructor(
    private readonly db: QueryDb,
    private readonly codec: SqlCodec,
    /** Tells every instance of a state change, in the change's own transaction (Postgres NOTIFY). */
    private readonly notify?: ChangeNotifier,
  ) {}

  async find(keyId: string): Promise<ApiKeyRecord | null> {
    const row = await this.db.selectFrom('wfa_api_keys').selectAll().where('key_id', '=', keyId).executeTakeFirst()
    return row === undefined ? null : this.#decode(row)
  }

  async create(record: ApiKeyRecord): Promise<void> {
    const c = this.codec
    await this.db
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
  }

  async setState(keyId: string, to: KeyState, from: readonly KeyState[]): Promise<ApiKeyRecord | null> {
    // One conditional UPDATE: two admins racing cannot both win, and revoked stays revoked.
    const update = (db: QueryDb) =>
      db.updateTable('wfa_api_keys').set({ state: to }).where('key_id', '=', keyId).where('state', 'in', [...from]).returningAll().executeTakeFirst()
    const notify = this.notify
    const row =
      notify === undefined
        ? await update(this.db)
        : await this.db.transaction().execute(async (trx) => {
            const changed = await update(trx)
            if (changed !== undefined) await notify(trx, { kind: 'key', keyId })
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
