import { describe, expect, it, vi } from 'vitest'
import { MemoryKeyStore } from '../../adapters/memory/index.js'
import { KeyVerifier } from '../../src/auth/key-verifier.js'
import { KeyManager } from '../../src/keys/key-manager.js'

async function setup(cacheTtlMs: number) {
  let now = Date.parse('2026-06-01T08:00:00.000Z')
  const clock = { now: () => now }
  const keyStore = new MemoryKeyStore()
  const touch = vi.spyOn(keyStore, 'touchLastUsed')
  const { key } = await new KeyManager(keyStore, clock).create({ companyId: 1, scopes: ['users:read'] })
  const verifier = new KeyVerifier({ keyStore, clock, cacheTtlMs, lastUsedThrottleMs: 60_000 })
  return { key, verifier, touch, advance: (ms: number) => (now += ms), keyStore }
}

describe('last_used_at throttle', () => {
  // Regression: the throttle lived on the cache entry, so with the cache off every request wrote.
  it.each([0, 30_000])('records a key use once per throttle window (key cache ttl %i ms)', async (ttl) => {
    const { key, verifier, touch, advance, keyStore } = await setup(ttl)
    for (let i = 0; i < 20; i++) expect(await verifier.verify(key)).not.toBeNull()
    expect(touch).toHaveBeenCalledTimes(1)
    advance(59_999)
    await verifier.verify(key)
    expect(touch).toHaveBeenCalledTimes(1)
    advance(2) // past the window (lru-cache expires an entry strictly after its ttl)
    await verifier.verify(key)
    expect(touch).toHaveBeenCalledTimes(2)
    const [record] = await keyStore.list()
    expect(record?.last_used_at?.toISOString()).toBe('2026-06-01T08:01:00.001Z')
  })

  it('does not record a failed verification', async () => {
    const { key, verifier, touch } = await setup(0)
    const wrongSecret = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0')
    expect(await verifier.verify(wrongSecret)).toBeNull()
    expect(touch).not.toHaveBeenCalled()
  })
})
