import type { ApiKeyRecord, KeyState, KeyStore } from '../../src/ports/key-store.js'

/**
 * The reference `KeyStore`: a `Map` the caller may pass in and inspect. Per process only:
 * a deployment with several instances needs a shared store (SQLite file, Postgres).
 */
export class MemoryKeyStore implements KeyStore {
  constructor(readonly keys: Map<string, ApiKeyRecord> = new Map()) {}

  async find(keyId: string): Promise<ApiKeyRecord | null> {
    const record = this.keys.get(keyId)
    return record === undefined ? null : structuredClone(record)
  }

  async create(record: ApiKeyRecord): Promise<void> {
    if (this.keys.has(record.key_id)) throw new Error(`API key ${record.key_id} already exists`)
    this.keys.set(record.key_id, structuredClone(record))
  }

  async setState(keyId: string, to: KeyState, from: readonly KeyState[]): Promise<ApiKeyRecord | null> {
    const record = this.keys.get(keyId)
    if (record === undefined || !from.includes(record.state)) return null
    record.state = to
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
