import type { AuditEntry, AuditPage, AuditStore } from '../../src/ports/audit-store.js'

/**
 * The reference `AuditStore`: an array of entries the caller may pass in and inspect. The memory
 * key and webhook stores share one (`createMemoryAdapter` wires it), and each appends its entry
 * in the same synchronous step as its change, so neither is ever seen without the other.
 */
export class MemoryAuditStore implements AuditStore {
  constructor(readonly entries: AuditEntry[] = []) {}

  /**
   * Throws if `entry` cannot be recorded (its id is taken), as a primary key would: a store
   * calls it before its change, so a refused entry leaves the change undone too.
   */
  check(entry: AuditEntry | undefined): void {
    if (entry !== undefined && this.entries.some((stored) => stored.id === entry.id)) {
      throw new Error(`Audit entry ${entry.id} already exists`)
    }
  }

  /** Appends `entry` (if given); called once the change it describes has happened. */
  record(entry: AuditEntry | undefined): void {
    if (entry !== undefined) this.entries.push(structuredClone(entry))
  }

  async list(companyId: number, page: { limit: number; before?: string }): Promise<AuditPage> {
    let trail = this.entries.filter((entry) => entry.company_id === companyId).sort(newestFirst)
    if (page.before !== undefined) {
      const cursor = trail.findIndex((entry) => entry.id === page.before)
      // An unknown id, or another company's, is no position in this company's trail.
      trail = cursor === -1 ? [] : trail.slice(cursor + 1)
    }
    const limit = Math.max(0, Math.floor(page.limit))
    return { entries: trail.slice(0, limit).map((entry) => structuredClone(entry)), has_more: trail.length > limit }
  }
}

function newestFirst(a: AuditEntry, b: AuditEntry): number {
  return b.at.getTime() - a.at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
}
