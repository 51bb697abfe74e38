import type { AuditEntry } from '../../src/ports/audit-store.js'
import type { ApiKeyRecord, KeyState, KeyStore } from '../../src/ports/key-store.js'
import { MemoryAuditStore } from './memory-audit-store.js'

/**
 * The reference `KeyStore`: a `Map` the caller may pass in and inspect. Per process only:
 * a deployment with several instances needs a shared store (SQLite file, Postgres).
 * Audit entries go to `audit` in the same synchronous step as the change they describe.
 */
export class MemoryKeyStore implements KeyStore {
  constructor(
    readonly keys: Map<string, ApiKeyRecord> = new Map(),
    readonly audit: MemoryAuditStore = new MemoryAuditStore(),
  ) {}

  async find(keyId: string): Promise<ApiKeyRecord | null> {
    const record = this.keys.get(keyId)
    return record === undefined ? null : structuredClone(record)
  }

  async create(record: ApiKeyRecord, audit?: AuditEntry): Promise<void> {
    if (this.keys.has(record.key_id)) throw new Error(`API key ${record.key_id} already exists`)
    this.audit.check(audit)
    this.keys.set(record.key_id, structuredClone(record))
    this.audit.record(audit)
  }

  async setState(keyId: string, to: KeyState, from: readonly KeyState[], audit?: AuditEntry): Promise<ApiKeyRecord | null> {
    const record = this.keys.get(keyId)
    if (record === undefined || !from.includes(record.state)) return null
    this.audit.check(audit)
    record.state = to
    this.audit.record(audit)
    return structuredClone(record)
  }

  async list(companyId?: number): Promise<ApiKeyRecord[]> {
    return [...this.keys.values()]
      .filter((record) => companyId === undefined || record.company_id === companyId)
      .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.key_id.localeCompare(b.key_id))
      .map((record) => structuredClone(record))
  }

  async touchLastUsed(keyId: string, at: Date): Promise<void> {
    const record = this.keys.get(keyId)
    if (record !== undefined) record.last_used_at = at
  }
}
