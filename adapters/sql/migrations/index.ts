import type { Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'
import { initial } from './2026_11_21_0001_initial.js'
import { writes } from './2026_11_22_0002_writes.js'
import { invitations } from './2026_11_23_0003_invitations.js'
import { keyRateLimits } from './2026_11_23_0004_key_rate_limits.js'
import { webhooks } from './2026_11_23_0005_webhooks.js'
import { listVersions } from './2026_11_23_0006_list_versions.js'
import { admin } from './2026_11_23_0007_admin.js'
import { endpointHealth } from './2026_11_26_0008_endpoint_health.js'
import { perCompanyUserIds } from './2026_11_26_0009_per_company_user_ids.js'
import { listRowCounts } from './2026_11_26_0010_list_row_counts.js'
import { eventFeed } from './2026_11_27_0011_event_feed.js'
import { usageNotModified } from './2026_11_27_0012_usage_not_modified.js'

/**
 * The schema's migrations, one file each, frozen in time: they never import application code
 * (only kysely and the column-type shape), so a later change to the code cannot change what an
 * old migration does; a helper two of them need is copied into each, not shared. Listed
 * explicitly, in order; names sort lexically and are what `wfa_migrations` records, so a name
 * never changes. A new migration is one new file and one line here.
 */
export function createMigrations(types: SqlColumnTypes, schema?: string): Record<string, Migration> {
  return {
    '2026_11_21_0001_initial': initial(types),
    '2026_11_22_0002_writes': writes(types),
    '2026_11_23_0003_invitations': invitations(),
    '2026_11_23_0004_key_rate_limits': keyRateLimits(),
    '2026_11_23_0005_webhooks': webhooks(types),
    '2026_11_23_0006_list_versions': listVersions(types, schema),
    '2026_11_23_0007_admin': admin(types),
    '2026_11_26_0008_endpoint_health': endpointHealth(types),
    '2026_11_26_0009_per_company_user_ids': perCompanyUserIds(types, schema),
    '2026_11_26_0010_list_row_counts': listRowCounts(types, schema),
    '2026_11_27_0011_event_feed': eventFeed(types),
    '2026_11_27_0012_usage_not_modified': usageNotModified(types),
  }
}
