import type { ModuleSwitchboard, PlatformModule } from '../../src/ports/module-registry.js'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'

/**
 * The `ModuleRegistry` port over `wfa_company_modules`. A company without a row for a
 * module has it active only if it is `core` (the base platform every company has).
 */
export class SqlModuleRegistry implements ModuleSwitchboard {
  constructor(
    private readonly db: QueryDb,
    private readonly codec: SqlCodec,
  ) {}

  async isActive(companyId: number, module: PlatformModule): Promise<boolean> {
    const row = await this.db
      .selectFrom('wfa_company_modules')
      .select('active')
      .where('company_id', '=', companyId)
      .where('module', '=', module)
      .executeTakeFirst()
    return row === undefined ? module === 'core' : this.codec.readBool(row.active)
  }

  /** Switches a module on or off for a company (upsert). */
  async setActive(companyId: number, module: PlatformModule, active: boolean): Promise<void> {
    const value = this.codec.bool(active)
    await this.db
      .insertInto('wfa_company_modules')
      .values({ company_id: companyId, module, active: value })
      .onConflict((oc) => oc.columns(['company_id', 'module']).doUpdateSet({ active: value }))
      .execute()
  }
}
