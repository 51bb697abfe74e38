import type { ModuleSwitchboard, PlatformModule } from '../../src/ports/module-registry.js'
import type { SqlCodec } from './codec.js'
import type { ChangeNotifier } from './change-notifier.js'
import type { QueryDb } from './prepared.js'

/**
 * The `ModuleRegistry` port over `wfa_company_modules`. A company without a row for a
 * module has it active only if it is `core` (the base platform every company has).
 */
export class SqlModuleRegistry implements ModuleSwitchboard {
  constructor(
    private readonly db: QueryDb,
    private readonly codec: SqlCodec,
    /** Tells every instance of a switch, in the switch's own transaction (Postgres NOTIFY). */
    private readonly notify?: ChangeNotifier,
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
    const upsert = (db: QueryDb) =>
      db
        .insertInto('wfa_company_modules')
        .values({ company_id: companyId, module, active: value })
        .onConflict((oc) => oc.columns(['company_id', 'module']).doUpdateSet({ active: value }))
        .execute()
    const notify = this.notify
    if (notify === undefined) {
      await upsert(this.db)
      return
    }
    await this.db.transaction().execute(async (trx) => {
      await upsert(trx)
      await notify(trx, { kind: 'module', companyId, module })
    })
  }
}
