/** Broken key stores and module registries (docs/adapters.md, section 3). */
import type { ApiKeyRecord, KeyState } from '../../../src/ports/key-store.js'
import type { PlatformModule } from '../../../src/ports/module-registry.js'
import { override, type BrokenAdapter } from './wrap.js'

export const BROKEN_KEY_AND_MODULE_PORTS: readonly BrokenAdapter[] = [
  {
    name: 'key-create-upserts',
    area: 'keys',
    bug: '`INSERT OR REPLACE`: creating a key with an existing key_id overwrites it instead of failing',
    caughtBy: 'key store',
    break: ({ keyStore }, adapter) => ({
      keyStore: override(keyStore, {
        async create(record: ApiKeyRecord) {
          adapter.keyStore.keys.set(record.key_id, structuredClone(record))
        },
      }),
    }),
  },
  {
    name: 'key-set-state-ignores-from',
    area: 'keys',
    bug: '`setState` is a plain `UPDATE … SET state = ?` without `AND state IN (…)`: a revoked key can be enabled again',
    caughtBy: 'key store',
    break: ({ keyStore }, adapter) => ({
      keyStore: override(keyStore, {
        async setState(keyId: string, to: KeyState) {
          const record = adapter.keyStore.keys.get(keyId)
          if (record === undefined) return null
          record.state = to
          return structuredClone(record)
        },
      }),
    }),
  },
  {
    name: 'key-list-by-key-id',
    area: 'keys',
    bug: '`list` orders by `key_id` only',
    caughtBy: 'key store',
    break: ({ keyStore }) => ({
      keyStore: override(keyStore, {
        async list(companyId?: number) {
          return (await keyStore.list(companyId)).sort((a, b) => (a.key_id < b.key_id ? -1 : 1))
        },
      }),
    }),
  },
  {
    name: 'key-dates-whole-seconds',
    area: 'keys',
    bug: 'key dates are stored as UNIX seconds: `created_at` and `expires_at` lose their milliseconds',
    caughtBy: 'key store',
    break: ({ keyStore }) => {
      const seconds = (date: Date | null) => (date === null ? null : new Date(Math.floor(date.getTime() / 1000) * 1000))
      return {
        keyStore: override(keyStore, {
          async create(record: ApiKeyRecord) {
            await keyStore.create({ ...record, created_at: seconds(record.created_at) as Date, expires_at: seconds(record.expires_at) })
          },
        }),
      }
    },
  },
  {
    name: 'key-touch-not-stored',
    area: 'keys',
    bug: '`touchLastUsed` updates a cache but never the row',
    caughtBy: 'key store',
    break: ({ keyStore }) => ({ keyStore: override(keyStore, { touchLastUsed: async () => {} }) }),
  },
  {
    name: 'module-default-all-active',
    area: 'modules',
    bug: 'a company without module rows gets every module (`?? true`), not only `core`',
    caughtBy: 'module registry',
    break: ({ modules }, adapter) => ({
      modules: override(modules, {
        async isActive(companyId: number, module: PlatformModule) {
          const row = adapter.modules.rows.find((candidate) => candidate.company_id === companyId && candidate.module === module)
          return row === undefined ? true : row.active
        },
      }),
    }),
  },
  {
    name: 'module-row-means-active',
    area: 'modules',
    bug: '`isActive` checks that a row exists and ignores its `active` flag',
    caughtBy: 'module registry',
    break: ({ modules }, adapter) => ({
      modules: override(modules, {
        async isActive(companyId: number, module: PlatformModule) {
          const row = adapter.modules.rows.find((candidate) => candidate.company_id === companyId && candidate.module === module)
          return row === undefined ? module === 'core' : true
        },
      }),
    }),
  },
]
