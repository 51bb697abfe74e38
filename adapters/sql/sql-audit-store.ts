import type { AuditEntry, AuditPage, AuditStore } from '../../src/ports/audit-store.js'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'
import type { SqlTransactor } from './sql-transactor.js'

const AUDIT = 'wfa_audit_events'

/**
 * Writes `entry` on `trx`, the transaction of the change it describes: the key and webhook
 * stores call it after their change, and only when the change happened. The id is the primary
 * key, so an entry that cannot be stored (an id already used) fails the call and the change
 * rolls back with it.
 */
export async function insertAuditEntry(trx: QueryDb, codec: SqlCodec, entry: AuditEntry): Promise<void> {
  await trx
    .insertInto(AUDIT)
    .values({
      id: entry.id,
      company_id: entry.company_id,
      at: codec.instant(entry.at),
      actor_id: entry.actor_id,
      actor_name: entry.actor_name,
      ip: entry.ip,
      action: entry.action,
      target_type: entry.target_type,
      target_id: entry.target_id,
      details: JSON.stringify(entry.details),
    })
    .execute()
}

/**
 * Runs a one-statement change `work`: on `db` itself when there is no audit entry, else in a
 * transaction that writes the entry after it when `happened(result)`.
 */
export function auditedChange<T>(
  db: QueryDb,
  transact: SqlTransactor,
  codec: SqlCodec,
  audit: AuditEntry | undefined,
  work: (db: QueryDb) => Promise<T>,
  happened: (result: T) => boolean = () => true,
): Promise<T> {
  if (audit === undefined) return work(db)
  return transact(async (trx) => {
    const result = await work(trx)
    if (happened(result)) await insertAuditEntry(trx, codec, audit)
    return result
  })
}

/**
 * The `AuditStore` port over `wfa_audit_events`: the read side of the trail the key and webhook
 * stores write (`insertAuditEntry`). Entries never change once written, so a page needs no
 * transaction: the cursor's position is read first, then the page after it.
 *
 * @example
 * const { entries, has_more } = await new SqlAuditStore(db, sqliteCodec).list(1, { limit: 50 })
 */
export class SqlAuditStore implements AuditStore {
  constructor(
    private readonly db: QueryDb,
    private readonly codec: SqlCodec,
  ) {}

  async list(companyId: number, page: { limit: number; before?: string }): Promise<AuditPage> {
    const c = this.codec
    const limit = Math.max(0, Math.floor(page.limit))
    let query = this.db.selectFrom(AUDIT).selectAll().where('company_id', '=', companyId)
    if (page.before !== undefined) {
      // Another company's entry, or none, is no position in this company's trail.
      const cursor = await this.db.selectFrom(AUDIT).select('at').where('id', '=', page.before).where('company_id', '=', companyId).executeTakeFirst()
      if (cursor === undefined) return { entries: [], has_more: false }
      const at = c.instant(c.readInstant(cursor.at))
      const before = page.before
      query = query.where((eb) => eb.or([eb('at', '<', at), eb.and([eb('at', '=', at), eb('id', '<', before)])]))
    }
    const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute()
    return { entries: rows.slice(0, limit).map((row) => this.#entry(row)), has_more: rows.length > limit }
  }

  #entry(row: Record<string, any>): AuditEntry {
    const c = this.codec
    return {
      id: row.id,
      company_id: c.readInt(row.company_id),
      at: c.readInstant(row.at),
      actor_id: row.actor_id,
      actor_name: row.actor_name,
      ip: row.ip,
      action: row.action,
      target_type: row.target_type,
      target_id: row.target_id,
      details: JSON.parse(row.details as string) as Record<string, unknown>,
    }
  }
}
