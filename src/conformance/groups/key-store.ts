import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ApiKeyRecord, KeyStore } from '../../ports/key-store.js'
import type { ConformanceGroup } from '../group.js'
import { typed } from './value-fidelity.js'

/** A stored key as the key manager would create it; the secret hash is never a real one here. */
export function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    key_id: '0123456789abcdef',
    company_id: 1,
    secret_hash: 'ab'.repeat(32),
    scopes: ['users:read', 'shifts:read', 'todos:write'],
    expires_at: null,
    state: 'active',
    name: null,
    rate_limit: null,
    created_at: new Date('2026-05-01T10:00:00.123Z'),
    last_used_at: null,
    ...overrides,
  }
}

/** The instants of a key record with their runtime types, so a string never passes for a Date. */
function instantsOf(record: ApiKeyRecord | null) {
  return record === null ? null : { created_at: typed(record.created_at), expires_at: typed(record.expires_at), last_used_at: typed(record.last_used_at) }
}

async function rejects(operation: Promise<unknown>): Promise<boolean> {
  try {
    await operation
    return false
  } catch {
    return true
  }
}

/** The `KeyStore` port (src/ports/key-store.ts). */
export const keyStoreGroup: ConformanceGroup = {
  title: 'key store',
  requires: ['keyStore'],
  define(ctx) {
    it('create then find returns the record exactly: dates to the millisecond, expires_at, scopes in order, rate_limit', async () => {
      const store = ctx.keyStore()
      const plain = keyRecord()
      const full = keyRecord({
        key_id: 'fedcba9876543210',
        company_id: 2,
        secret_hash: 'cd'.repeat(32),
        scopes: ['todos:read'],
        expires_at: new Date('2027-01-01T00:00:00.001Z'),
        name: 'Zapier — «sync» ünïcode',
        rate_limit: 120,
        created_at: new Date('2026-05-02T11:22:33.456Z'),
        last_used_at: new Date('2026-05-03T01:02:03.789Z'),
      })
      await store.create(plain)
      await store.create(full)
      for (const record of [plain, full]) {
        const found = await store.find(record.key_id)
        expect(found, `find(${record.key_id})`).toEqual(record)
        expect(instantsOf(found), `find(${record.key_id}) instants`).toEqual(instantsOf(record))
      }
    })

    it('find of an unknown key id is null', async () => {
      const store = ctx.keyStore()
      await store.create(keyRecord())
      expect(await store.find('ffffffffffffffff'), 'find(unknown key id)').toBeNull()
    })

    it('create rejects a key id that already exists and keeps the first record', async () => {
      const store = ctx.keyStore()
      const original = keyRecord()
      await store.create(original)
      const duplicate = keyRecord({ company_id: 2, secret_hash: 'ee'.repeat(32), name: 'impostor' })
      expect(await rejects(store.create(duplicate)), 'create() of an existing key_id rejected').toBe(true)
      expect(await store.find(original.key_id), 'the first record after the rejected duplicate').toEqual(original)
    })

    it('setState is compare-and-set: it moves only from an allowed state and returns the updated record', async () => {
      const store = ctx.keyStore()
      const record = keyRecord({ name: 'rotating', expires_at: new Date('2026-12-31T23:59:59.999Z') })
      await store.create(record)
      const id = record.key_id
      const steps: Array<{ to: ApiKeyRecord['state']; from: ApiKeyRecord['state'][]; result: ApiKeyRecord['state'] | null; after: ApiKeyRecord['state'] }> = [
        { to: 'disabled', from: ['active'], result: 'disabled', after: 'disabled' },
        { to: 'disabled', from: ['active'], result: null, after: 'disabled' },
        { to: 'active', from: ['disabled'], result: 'active', after: 'active' },
        { to: 'active', from: ['disabled'], result: null, after: 'active' },
        { to: 'revoked', from: ['active', 'disabled'], result: 'revoked', after: 'revoked' },
        // Revoked is final: no allowed transition starts from it.
        { to: 'active', from: ['disabled'], result: null, after: 'revoked' },
        { to: 'disabled', from: ['active'], result: null, after: 'revoked' },
        { to: 'revoked', from: ['active', 'disabled'], result: null, after: 'revoked' },
      ]
      for (const [index, step] of steps.entries()) {
        const label = `step ${index + 1}: setState(${id}, ${step.to}, [${step.from.join(', ')}])`
        const result = await store.setState(id, step.to, step.from)
        expect(result, `${label} returned`).toEqual(step.result === null ? null : { ...record, state: step.result })
        expect(await store.find(id), `${label}, then find`).toEqual({ ...record, state: step.after })
      }
      expect(await store.setState('ffffffffffffffff', 'disabled', ['active']), 'setState of an unknown key id').toBeNull()
    })

    it('setState leaves the other keys alone', async () => {
      const store = ctx.keyStore()
      const one = keyRecord()
      const two = keyRecord({ key_id: '1111111111111111' })
      await store.create(one)
      await store.create(two)
      await store.setState(one.key_id, 'revoked', ['active', 'disabled'])
      expect(await store.find(two.key_id), 'the key that was not changed').toEqual(two)
    })

    it('list orders by created_at then key_id, every company or one company', async () => {
      const store = ctx.keyStore()
      const t = (iso: string) => new Date(iso)
      const records = [
        keyRecord({ key_id: 'bbbbbbbbbbbbbbbb', created_at: t('2026-05-02T00:00:00.000Z') }),
        keyRecord({ key_id: 'cccccccccccccccc', created_at: t('2026-05-01T00:00:00.001Z') }),
        keyRecord({ key_id: 'aaaaaaaaaaaaaaaa', created_at: t('2026-05-01T00:00:00.001Z') }),
        keyRecord({ key_id: '9999999999999999', company_id: 2, created_at: t('2026-05-03T00:00:00.000Z') }),
        keyRecord({ key_id: '0000000000000000', company_id: 2, created_at: t('2026-04-30T23:59:59.999Z') }),
        keyRecord({ key_id: 'a000000000000000', created_at: t('2026-05-01T00:00:00.000Z') }),
      ]
      for (const record of records) await store.create(record)
      const order = (list: ApiKeyRecord[]) => list.map((record) => `${record.created_at.toISOString()} ${record.key_id}`)
      const sorted = [...records].sort(
        (a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.key_id < b.key_id ? -1 : a.key_id > b.key_id ? 1 : 0),
      )
      expect(order(await store.list()), 'list()').toEqual(order(sorted))
      expect(await store.list(), 'list() records').toEqual(sorted)
      expect(order(await store.list(1)), 'list(1)').toEqual(order(sorted.filter((record) => record.company_id === 1)))
      expect(order(await store.list(2)), 'list(2)').toEqual(order(sorted.filter((record) => record.company_id === 2)))
      expect(await store.list(3), 'list(3), a company without keys').toEqual([])
    })

    if (ctx.supports.touchLastUsed) {
      it('touchLastUsed records the instant exactly and changes nothing else', async () => {
        const store = ctx.keyStore()
        const touch = touchOf(store, ctx.name)
        const record = keyRecord({ state: 'disabled' })
        await store.create(record)
        const first = new Date('2026-06-01T08:00:00.321Z')
        await touch(record.key_id, first)
        expect(await store.find(record.key_id), 'after touchLastUsed').toEqual({ ...record, last_used_at: first })
        const later = new Date('2026-06-01T09:30:00.654Z')
        await touch(record.key_id, later)
        const found = await store.find(record.key_id)
        expect(found, 'after a second touchLastUsed').toEqual({ ...record, last_used_at: later })
        expect(instantsOf(found)?.last_used_at, 'last_used_at type').toBe(typed(later))
      })
    }
  },
}

function touchOf(store: KeyStore, name: string): NonNullable<KeyStore['touchLastUsed']> {
  const touch = store.touchLastUsed
  if (touch === undefined) {
    throw new Error(`${name}: supports.touchLastUsed is true (the default) but the key store has no touchLastUsed; implement it or declare supports: { touchLastUsed: false }`)
  }
  return touch.bind(store)
}
