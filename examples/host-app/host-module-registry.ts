import type { Kysely } from 'kysely'
import type { ModuleRegistry, PLATFORM_MODULES, PlatformModule } from '../../src/ports/module-registry.js' // 'fastify-workforce-api' in a host
import type { HostDatabase } from './database.js'

/**
 * The host sells features under its own names; each platform module is one of them: the
 * contract's modules, and `teams`, the module of the host's own resource (teams.ts).
 */
export const FEATURE_OF = {
  core: 'base',
  projects: 'project_tracking',
  todo: 'tasks',
  teams: 'team_planning',
} as const satisfies Readonly<Record<(typeof PLATFORM_MODULES)[number] | 'teams', string>>

/** Module switches from the host's `org_features`. Without a row, only `core` is on (the port's default), so `teams` is off. */
export class HostModuleRegistry implements ModuleRegistry {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  async isActive(companyId: number, module: PlatformModule): Promise<boolean> {
    // A module the host sells no feature for is off.
    const feature = FEATURE_OF[module as keyof typeof FEATURE_OF] as string | undefined
    if (feature === undefined) return false
    const row = await this.db
      .selectFrom('org_features')
      .select('enabled')
      .where('org_id', '=', companyId)
      .where('feature', '=', feature)
      .executeTakeFirst()
    return row === undefined ? module === 'core' : row.enabled === 1
  }
}
