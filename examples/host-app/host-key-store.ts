import type { Kysely, Selectable } from 'kysely'
import type { ApiKeyRecord, KeyState, KeyStore } from '../../src/ports/key-store.js' // 'fastify-workforce-api' in a host
import type { HostDatabase } from './database.js'

type CredentialRow = Selectable<HostDatabase['api_credentials']>

/**
 * The public API's keys in the host's own `api_credentials` table. Only the SHA-256 of a
 * secret is ever stored; instants are ISO UTC text like every instant of this app.
 */
export class HostKeyStore implements KeyStore {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  async find(keyId: string): Promise<ApiKeyRecord | null> {
    const row = await this.db.selectFrom('api_credentials').selectAll().where('key_id', '=', keyId).executeTakeFirst()
    return row === undefined ? null : toRecord(row)
  }

  /** The primary key makes a duplicate `key_id` reject. */
  async create(record: ApiKeyRecord): Promise<void> {
    await this.db
      .insertInto('api_credentials')
      .values({
        key_id: record.key_id,
        org_id: record.company_id,
        secret_sha256: record.secret_hash,
        scope_list: record.scopes.join(' '),
        expires_at: record.expires_at?.toISOString() ?? null,
        state: record.state,
        label: record.name,
        requests_per_window: record.rate_limit,
        issued_at: record.created_at.toISOString(),
        last_used_at: record.last_used_at?.toISOString() ?? null,
      })
      .execute()
  }

  /** One conditional UPDATE: two admins racing cannot both win, and revoked stays revoked. */
  async setState(keyId: string, to: KeyState, from: readonly KeyState[]): Promise<ApiKeyRecord | null> {
    const row = await this.db
      .updateTable('api_credentials')
      .set({ state: to })
      .where('key_id', '=', keyId)
      .where('state', 'in', [...from])
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? null : toRecord(row)
  }

  async list(companyId?: number): Promise<ApiKeyRecord[]> {
    let query = this.db.selectFrom('api_credentials').selectAll().orderBy('issued_at').orderBy('key_id')
    if (companyId !== undefined) query = query.where('org_id', '=', companyId)
    return (await query.execute()).map(toRecord)
  }

  async touchLastUsed(keyId: string, at: Date): Promise<void> {
    await this.db.updateTable('api_credentials').set({ last_used_at: at.toISOString() }).where('key_id', '=', keyId).execute()
  }
}

function toRecord(row: CredentialRow): ApiKeyRecord {
  return {
    key_id: row.key_id,
    company_id: row.org_id,
    secret_hash: row.secret_sha256,
    scopes: row.scope_list === '' ? [] : row.scope_list.split(' '),
    expires_at: row.expires_at === null ? null : new Date(row.expires_at),
    state: row.state as KeyState,
    name: row.label,
    rate_limit: row.requests_per_window,
    created_at: new Date(row.issued_at),
    last_used_at: row.last_used_at === null ? null : new Date(row.last_used_at),
  }
}
