import type { Storage } from '../../src/ports/storage.js'

/**
 * `storage` with every reader's optional `seek` capability hidden: the plugin then serves lists
 * as an adapter without it does (one COUNT and one OFFSET query per request). For tests of what
 * lies under that path, and for benchmarks' "before" figures.
 */
export function withoutSeek(storage: Storage): Storage {
  const hidden: Record<string, unknown> = { company: (companyId: number) => storage.company(companyId) }
  for (const name of ['users', 'employees', 'roles', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const) {
    const reader = storage[name] as unknown as { list: (...args: unknown[]) => unknown; get: (...args: unknown[]) => unknown }
    hidden[name] = { list: (...args: unknown[]) => reader.list(...args), get: (...args: unknown[]) => reader.get(...args) }
  }
  return hidden as unknown as Storage
}
