import type { ModuleSwitchboard, PlatformModule } from '../../src/ports/module-registry.js'
import type { ModuleRow } from '../../src/ports/dataset.js'

/** The reference `ModuleRegistry`. Without a row, only `core` is active (as in the SQL adapters). */
export class MemoryModuleRegistry implements ModuleSwitchboard {
  constructor(readonly rows: ModuleRow[] = []) {}

  async isActive(companyId: number, module: PlatformModule): Promise<boolean> {
    const row = this.rows.find((candidate) => candidate.company_id === companyId && candidate.module === module)
    return row === undefined ? module === 'core' : row.active
  }

  async setActive(companyId: number, module: PlatformModule, active: boolean): Promise<void> {
    const row = this.rows.find((candidate) => candidate.company_id === companyId && candidate.module === module)
    if (row === undefined) this.rows.push({ company_id: companyId, module, active })
    else row.active = active
  }
}
