import { createHash } from 'node:crypto'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { MemoryKeyStore } from '../../adapters/memory/memory-key-store.js'
import { KeyManagementError, KeyManager, normaliseScopes, type KeyScope } from '../../src/keys/key-manager.js'
import { SPEC_SCOPES } from '../helpers/spec-scopes.js'


const INFO_KEYS = ['company_id', 'created_at', 'expires_at', 'key_id', 'last_used_at', 'name', 'rate_limit', 'scopes', 'state']

describe('KeyManager', () => {
  let now: number
  let store: MemoryKeyStore
  let onChange: ReturnType<typeof vi.fn<(keyId: string) => void>>
  let keys: KeyManager

  beforeEach(() => {
    now = Date.parse('2026-06-01T12:00:00.000Z')
    store = new MemoryKeyStore()
    onChange = vi.fn<(keyId: string) => void>()
    keys = new KeyManager(store, { now: () => now }, onChange)
  })

  const expectRefused = async (promise: Promise<unknown>, reason: string) => {
    await expect(promise).rejects.toBeInstanceOf(KeyManagementError)
    await expect(promise).rejects.toMatchObject({ reason })
  }

  it('creates an active key, shows the plaintext once and stores only the SHA-256 of the secret', async () => {
    const { key, info } = await keys.create({ companyId: 7, scopes: ['users:read'], name: 'payroll sync' })
    const match = /^owk_([0-9a-f]{16})_([0-9a-f]{64})$/.exec(key)
    expect(match).not.toBeNull()
    const [, keyId, secret] = match as unknown as [string, string, string]
    expect(Object.keys(info).sort()).toEqual(INFO_KEYS)
    expect(info).toEqual({
      key_id: keyId,
      company_id: 7,
      name: 'payroll sync',
      scopes: ['users:read'],
      state: 'active',
      expires_at: null,
      rate_limit: null,
      created_at: '2026-06-01T12:00:00.000Z',
      last_used_at: null,
    })
    const stored = store.keys.get(keyId)
    expect(stored?.secret_hash).toBe(createHash('sha256').update(secret).digest('hex'))
    expect(JSON.stringify([...store.keys.values()])).not.toContain(secret)
    expect(JSON.stringify(await keys.list())).not.toContain(secret)
    expect(onChange).not.toHaveBeenCalled()
  })

  it('goes active → disabled → active, telling the cache each time', async () => {
    const { info } = await keys.create({ companyId: 1, scopes: ['users:read'] })
    expect((await keys.disable(info.key_id)).state).toBe('disabled')
    expect(store.keys.get(info.key_id)?.state).toBe('disabled')
    expect((await keys.enable(info.key_id)).state).toBe('active')
    expect(store.keys.get(info.key_id)?.state).toBe('active')
    expect(onChange.mock.calls).toEqual([[info.key_id], [info.key_id]])
  })

  it('revokes from active and from disabled', async () => {
    const active = (await keys.create({ companyId: 1, scopes: ['users:read'] })).info
    const disabled = (await keys.create({ companyId: 1, scopes: ['users:read'] })).info
    await keys.disable(disabled.key_id)
    expect((await keys.revoke(active.key_id)).state).toBe('revoked')
    expect((await keys.revoke(disabled.key_id)).state).toBe('revoked')
    expect(onChange).toHaveBeenCalledWith(active.key_id)
    expect(onChange).toHaveBeenCalledWith(disabled.key_id)
  })

  it('never leaves revoked: enable, disable and revoke all throw, and nothing changes', async () => {
    const { info } = await keys.create({ companyId: 1, scopes: ['users:read'] })
    await keys.revoke(info.key_id)
    onChange.mockClear()
    await expectRefused(keys.enable(info.key_id), 'invalid_transition')
    await expectRefused(keys.disable(info.key_id), 'invalid_transition')
    await expectRefused(keys.revoke(info.key_id), 'invalid_transition')
    expect(store.keys.get(info.key_id)?.state).toBe('revoked')
    expect(onChange).not.toHaveBeenCalled()
  })

  it('refuses transitions that are not in the lifecycle', async () => {
    const { info } = await keys.create({ companyId: 1, scopes: ['users:read'] })
    await expectRefused(keys.enable(info.key_id), 'invalid_transition') // already active
    await keys.disable(info.key_id)
    await expectRefused(keys.disable(info.key_id), 'invalid_transition') // already disabled
    expect(store.keys.get(info.key_id)?.state).toBe('disabled')
  })

  it('throws not_found for an unknown key', async () => {
    for (const action of ['enable', 'disable', 'revoke'] as const) {
      await expectRefused(keys[action]('0123456789abcdef'), 'not_found')
    }
    expect(onChange).not.toHaveBeenCalled()
  })

  it('expands "all" to every scope of the spec, de-duplicated', async () => {
    expect((await keys.create({ companyId: 1, scopes: ['all'] })).info.scopes).toEqual(SPEC_SCOPES)
    expect((await keys.create({ companyId: 1, scopes: ['todos:read', 'all', 'users:read'] })).info.scopes).toEqual(SPEC_SCOPES)
    expect(normaliseScopes(['todos:read', 'users:read', 'todos:read'])).toEqual(['users:read', 'todos:read'])
  })

  it.each([[['users:delete']], [['users:read', 'Users:Read']], [['*']], [[]], [['']]])('rejects scopes %j', async (scopes) => {
    // Names read at run time (the CLI, a host's form) reach the same check the types make.
    await expectRefused(keys.create({ companyId: 1, scopes: scopes as KeyScope[] }), 'invalid_input')
    expect(store.keys.size).toBe(0)
  })

  it.each([0, -1, 1.5, Number.NaN])('rejects companyId %s', async (companyId) => {
    await expectRefused(keys.create({ companyId, scopes: ['users:read'] }), 'invalid_input')
  })

  it('rejects an invalid expiry date', async () => {
    await expectRefused(keys.create({ companyId: 1, scopes: ['users:read'], expiresAt: new Date('nope') }), 'invalid_input')
  })

  it('reports an active key past expires_at as expired; disabled and revoked keep their state', async () => {
    const expiresAt = new Date(now + 1_000)
    const expiring = (await keys.create({ companyId: 1, scopes: ['users:read'], expiresAt })).info
    expect(expiring).toMatchObject({ state: 'active', expires_at: '2026-06-01T12:00:01.000Z' })
    const disabled = (await keys.create({ companyId: 1, scopes: ['users:read'], expiresAt })).info
    await keys.disable(disabled.key_id)
    now += 999
    expect((await keys.list()).find((k) => k.key_id === expiring.key_id)?.state).toBe('active')
    now += 1
    const listed = await keys.list()
    expect(listed.find((k) => k.key_id === expiring.key_id)?.state).toBe('expired')
    expect(listed.find((k) => k.key_id === disabled.key_id)?.state).toBe('disabled')
  })

  it('lists keys per company, oldest first', async () => {
    const first = (await keys.create({ companyId: 1, scopes: ['users:read'] })).info
    now += 1_000
    const other = (await keys.create({ companyId: 2, scopes: ['users:read'] })).info
    now += 1_000
    const second = (await keys.create({ companyId: 1, scopes: ['roles:read'] })).info
    expect((await keys.list({ companyId: 1 })).map((k) => k.key_id)).toEqual([first.key_id, second.key_id])
    expect((await keys.list({ companyId: 2 })).map((k) => k.key_id)).toEqual([other.key_id])
    expect((await keys.list()).map((k) => k.key_id)).toEqual([first.key_id, other.key_id, second.key_id])
    for (const info of await keys.list()) expect(Object.keys(info).sort()).toEqual(INFO_KEYS)
  })
})
