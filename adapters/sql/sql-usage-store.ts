import { sql } from 'kysely'
import type { UsageIncrement, UsageRow, UsageStore } from '../../src/ports/usage-store.js'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'
import { sqlTransactor, type SqlTransactor, type SqlWriteOptions } from './sql-transactor.js'

const USAGE = 'wfa_key_usage'
/** Rows per multi-row upsert: 9 parameters each, far below both dialects' bound-parameter limits. */
const ROWS_PER_UPSERT = 500

/**
 * The `UsageStore` port over `wfa_key_usage`. `add` is one `insert … on conflict do update`
 * that adds to the stored counts in the database itself, so instances adding to the same
 * (key, hour) at once never lose a count; one call is one transaction.
 *
 * @example
 * await new SqlUsageStore(db, postgresCodec).add([{ company_id: 1, key_id, hour, requests: 3, client_errors: 1, server_errors: 0, rate_limited: 1, last_rate_limited_at, not_modified: 0 }])
 */
export class SqlUsageStore implements UsageStore {
  readonly #transact: SqlTransactor

  constructor(
    private readonly db: QueryDb,
    private readonly codec: SqlCodec,
    options: Pick<SqlWriteOptions, 'transact'> = {},
  ) {
    this.#transact = sqlTransactor(db, options)
  }

  async add(increments: readonly UsageIncrement[]): Promise<void> {
    const rows = mergeByKeyAndHour(increments)
    if (rows.length === 0) return
    const c = this.codec
    const values = rows.map((row) => ({
      company_id: row.company_id,
      key_id: row.key_id,
      hour: c.instant(row.hour),
      requests: row.requests,
      client_errors: row.client_errors,
      server_errors: row.server_errors,
      rate_limited: row.rate_limited,
      last_rate_limited_at: row.last_rate_limited_at === null ? null : c.instant(row.last_rate_limited_at),
      not_modified: row.not_modified,
    }))
    await this.#transact(async (trx) => {
      for (let start = 0; start < values.length; start += ROWS_PER_UPSERT) {
        await trx
          .insertInto(USAGE)
          .values(values.slice(start, start + ROWS_PER_UPSERT))
          .onConflict((oc) =>
            oc.columns(['key_id', 'hour']).doUpdateSet({
              requests: sql`${sql.ref(`${USAGE}.requests`)} + excluded.requests`,
              client_errors: sql`${sql.ref(`${USAGE}.client_errors`)} + excluded.client_errors`,
              server_errors: sql`${sql.ref(`${USAGE}.server_errors`)} + excluded.server_errors`,
              rate_limited: sql`${sql.ref(`${USAGE}.rate_limited`)} + excluded.rate_limited`,
              not_modified: sql`${sql.ref(`${USAGE}.not_modified`)} + excluded.not_modified`,
              // The later of the two; null on either side keeps the other (SQLite's max() would give null).
              last_rate_limited_at: sql`case when ${sql.ref(`${USAGE}.last_rate_limited_at`)} is null or excluded.last_rate_limited_at > ${sql.ref(`${USAGE}.last_rate_limited_at`)}
                then excluded.last_rate_limited_at else ${sql.ref(`${USAGE}.last_rate_limited_at`)} end`,
            }),
          )
          .execute()
      }
    })
  }

  async hourly(companyId: number, since: Date): Promise<UsageRow[]> {
    const c = this.codec
    const rows = await this.db
      .selectFrom(USAGE)
      .selectAll()
      .where('company_id', '=', companyId)
      .where('hour', '>=', c.instant(since))
      .orderBy('hour')
      .orderBy('key_id')
      .execute()
    return rows.map((row) => ({
      company_id: c.readInt(row.company_id),
      key_id: row.key_id as string,
      hour: c.readInstant(row.hour),
      requests: c.readInt(row.requests),
      client_errors: c.readInt(row.client_errors),
      server_errors: c.readInt(row.server_errors),
      rate_limited: c.readInt(row.rate_limited),
      last_rate_limited_at: row.last_rate_limited_at === null ? null : c.readInstant(row.last_rate_limited_at),
      not_modified: c.readInt(row.not_modified),
    }))
  }
}

/**
 * One row per (key, hour), summed, in (key, hour) order. One statement may not update a row
 * twice (Postgres refuses), and concurrent upserts that lock rows in the same order cannot
 * deadlock each other.
 */
function mergeByKeyAndHour(increments: readonly UsageIncrement[]): UsageIncrement[] {
  const merged = new Map<string, UsageIncrement>()
  for (const increment of increments) {
    const slot = `${increment.key_id}\n${increment.hour.getTime()}`
    const seen = merged.get(slot)
    if (seen === undefined) {
      merged.set(slot, { ...increment })
      continue
    }
    seen.requests += increment.requests
    seen.client_errors += increment.client_errors
    seen.server_errors += increment.server_errors
    seen.rate_limited += increment.rate_limited
    seen.not_modified += increment.not_modified
    seen.last_rate_limited_at = later(seen.last_rate_limited_at, increment.last_rate_limited_at)
  }
  return [...merged.values()].sort((a, b) => (a.key_id < b.key_id ? -1 : a.key_id > b.key_id ? 1 : a.hour.getTime() - b.hour.getTime()))
}

function later(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b
  if (b === null) return a
  return b > a ? b : a
}
