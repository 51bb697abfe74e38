import type { Kysely } from 'kysely'
import type { ModuleRegistry, PlatformModule } from '../../src/ports/module-registry.js' // 'fastify-workforce-api' in a host
import type { HostDatabase } from './database.js'

/** The host sells features under its own names; each platform module is one of them. */
export const FEATURE_OF: Readonly<Record<PlatformModule, string>> = {
  core: 'base',
  projects: 'project_tracking',
  todo: 'tasks',
}

/** Module switches from the host's `org_features`. Without a row, only `core` is on (the port's default). */
export class HostModuleRegistry implements ModuleRegistry {
  constructor(private readonly db: Kysely<HostDatabase>) {}

  async isActive(companyId: number, module: PlatformModule): Promise<boolean> {
    const row = await this.db
      .selectFrom('org_features')
      .select('enabled')
      .where('org_id', '=', companyId)
      .where('feature', '=', FEATURE_OF[module])
      .executeTakeFirst()
    return row === undefined ? module === 'core' : row.enabled === 1
  }
}
