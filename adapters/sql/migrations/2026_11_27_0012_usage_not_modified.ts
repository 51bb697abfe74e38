import type { Kysely, Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * Issue 25: each key's answers with 304 Not Modified per hour, beside its other counts (they are
 * also in `requests`). Not null with a default of 0: existing hours had none, and an instance
 * still running the previous version during a rolling upgrade inserts its rows without the column
 * (its upsert leaves the column alone). On Postgres 11+ a constant default adds the column without
 * rewriting the table. Self-contained like every migration.
 */
export function usageNotModified(t: SqlColumnTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_key_usage').addColumn('not_modified', t.bigint, (c) => c.notNull().defaultTo(0)).execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable('wfa_key_usage').dropColumn('not_modified').execute()
    },
  }
}
