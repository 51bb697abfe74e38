import { describe } from 'vitest'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build } from '../helpers/build.js'
import { countLookups, sharedAddressSuite } from './shared-address-suite.js'

// Issue 21, item 2, over real HTTP on one instance with its local counters (memory, SQLite).
describe.each(READ_ADAPTERS)('a shared address never locks out a valid key ($name)', (adapter) => {
  sharedAddressSuite(async ({ rateLimit, keyCacheTtlMs }) => {
    let lookups: () => number = () => 0
    const t = await build({
      adapter,
      options: (opened) => {
        lookups = countLookups(opened.keyStore)
        return { rateLimit, ...(keyCacheTtlMs === undefined ? {} : { keyCache: { ttlMs: keyCacheTtlMs } }) }
      },
    })
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' })
    return {
      instances: [{ url: `${address}/api/public/v1`, lookups: () => lookups() }],
      async createKey(rateLimit) {
        const created = await t.app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'], ...(rateLimit === undefined ? {} : { rateLimit }) })
        return { key: created.key, keyId: created.info.key_id }
      },
      close: () => t.close(),
    }
  }, 0)
})
