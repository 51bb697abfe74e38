import type { Kysely, Migration } from 'kysely'

/**
 * A key's own rate limit (issue 9): requests per window, overriding the plugin's default;
 * null for the default. Self-contained like every migration.
 */
export function keyRateLimits(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_api_keys').addColumn('rate_limit', 'integer').execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable('wfa_api_keys').dropColumn('rate_limit').execute()
    },
  }
}
