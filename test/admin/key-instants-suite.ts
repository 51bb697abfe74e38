import { sql, type Kysely } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { MemoryKeyStore } from '../../adapters/memory/memory-key-store.js'
import { generateApiKey } from '../../src/auth/api-key.js'
import { MAX_KEY_EXPIRY } from '../../src/keys/key-manager.js'
import { buildAdminApp, type AdminAdapterFactory, type AdminTestApp, type AdminTransport } from './admin-app.js'

const NEVER = '9999-12-31T23:59:59.999Z'
const YEAR_10000 = new Date(Date.parse('+010000-06-01T00:00:00.000Z'))

interface KeyView {
  key_id: string
  state: string
  expires_at: string | null
  created_at: string
}

/**
 * Issue 21 item 7: every key expiry the admin API stores can be written back, on input and
 * after rotation, and one out-of-range row (written around the KeyManager, or before the
 * bound existed) never makes a company's key list unreadable.
 */
export function defineKeyInstantsSuite(factory: AdminAdapterFactory, transport: AdminTransport = 'inject'): void {
  describe(`key expiries stay representable over ${factory.name} (${transport === 'http' ? 'real HTTP' : 'app.inject'})`, () => {
    let opened: Awaited<ReturnType<AdminAdapterFactory['open']>>
    let t: AdminTestApp

    beforeEach(async () => {
      opened = await factory.open()
      t = await buildAdminApp(opened.adapter, { transport })
    })
    afterEach(async () => {
      await t.close()
      await opened.adapter.close()
      await opened.drop()
    })

    const listKeys = async () => {
      const res = await t.admin('GET', '/keys')
      expect(res.statusCode, res.body).toBe(200)
      return (res.json() as { data: KeyView[] }).data
    }

    /** The key lists as active and never expiring (its stored expiry is past what an instant can hold). */
    const expectListedAsNever = async (keyId: string) => {
      expect((await listKeys()).find((listed) => listed.key_id === keyId)).toMatchObject({ state: 'active', expires_at: NEVER })
    }

    /** Rotating the key gives a twin that never expires either. */
    const expectTwinNever = async (keyId: string) => {
      const rotated = await t.admin('POST', `/keys/${keyId}/rotate`, {})
      expect(rotated.statusCode, rotated.body).toBe(201)
      expect((rotated.json() as { data: KeyView }).data.expires_at).toBe(NEVER)
    }

    /** A key stored straight through the port, expiring at `expiresAt` as the caller gives it. */
    const storeKeyDirectly = async (expiresAt: Date) => {
      const { key, keyId, secretHash } = generateApiKey()
      await opened.adapter.keyStore.create({
        key_id: keyId,
        company_id: 1,
        secret_hash: secretHash,
        scopes: ['users:read'],
        expires_at: new Date('2030-01-01T00:00:00.000Z'),
        state: 'active',
        name: 'Stored around the manager',
        rate_limit: null,
        created_at: new Date(Date.now() - 60_000),
        last_used_at: null,
      })
      await writeExpiry(keyId, expiresAt)
      return { key, keyId }
    }

    /** Sets a stored key's expiry with the backend's own means: SQL for SQL stores, the record for memory. */
    const writeExpiry = async (keyId: string, expiresAt: Date | 'infinity') => {
      const db = (opened.adapter as { db?: Kysely<any> }).db
      if (factory.name === 'sqlite') {
        const ms = expiresAt === 'infinity' ? 9e15 : expiresAt.getTime()
        await db!.updateTable('wfa_api_keys').set({ expires_at: ms }).where('key_id', '=', keyId).execute()
      } else if (factory.name === 'postgres') {
        const text = expiresAt === 'infinity' ? 'infinity' : '10000-06-01 00:00:00+00'
        await db!.updateTable('wfa_api_keys').set({ expires_at: sql`${text}::timestamptz` }).where('key_id', '=', keyId).execute()
      } else {
        // The reference store's backing Map is public so tests can look (and reach) inside.
        const record = (opened.adapter.keyStore as MemoryKeyStore).keys.get(keyId)
        record!.expires_at = expiresAt === 'infinity' ? new Date(Number.NaN) : expiresAt
      }
    }

    it(`rotating a key that expires at ${NEVER} gives a twin expiring then, and the list stays readable (issue 21 repro)`, async () => {
      const created = await t.admin('POST', '/keys', { name: 'Forever', scopes: ['users:read'], expires_at: NEVER })
      expect(created.statusCode, created.body).toBe(201)
      const oldId = (created.json() as { data: KeyView }).data.key_id

      const rotated = await t.admin('POST', `/keys/${oldId}/rotate`, {})
      expect(rotated.statusCode, rotated.body).toBe(201)
      const twin = rotated.json() as { key: string; data: KeyView }
      expect(twin.data.expires_at).toBe(NEVER)
      expect(twin.data.state).toBe('active')
      // Its plaintext was shown, and it works.
      expect((await t.api('GET', '/v1/users', twin.key)).statusCode).toBe(200)

      const listed = await listKeys()
      expect(listed.map((key) => key.key_id).sort()).toEqual([oldId, twin.data.key_id].sort())
      expect(listed.every((key) => key.expires_at === NEVER)).toBe(true)

      // Rotating the twin again stays at the bound instead of drifting past it.
      const again = await t.admin('POST', `/keys/${twin.data.key_id}/rotate`, {})
      expect(again.statusCode, again.body).toBe(201)
      expect((again.json() as { data: KeyView }).data.expires_at).toBe(NEVER)

      const revoked = await t.admin('POST', `/keys/${twin.data.key_id}/revoke`, {})
      expect(revoked.statusCode, revoked.body).toBe(200)
      expect((revoked.json() as { data: KeyView }).data).toMatchObject({ state: 'revoked', expires_at: NEVER })
      expect(await listKeys()).toHaveLength(3)
    })

    it('refuses an expires_at past 9999-12-31T23:59:59.999Z once in UTC with a 422 naming the field, storing nothing', async () => {
      const before = await listKeys()
      for (const expires_at of ['9999-12-31T23:59:59.999-01:00', '9999-12-31T23:30:00-00:31', '+010000-01-01T00:00:00Z', '10000-01-01T00:00:00Z']) {
        const res = await t.admin('POST', '/keys', { name: 'Too late', scopes: ['users:read'], expires_at })
        expect(res.statusCode, `${expires_at}: ${res.body}`).toBe(422)
        const { error } = res.json() as { error: { code: string; status: number; details: Array<{ field: string }> } }
        expect(error.code).toBe('validation_error')
        expect(error.status).toBe(422)
        expect(error.details.map((detail) => detail.field)).toContain('expires_at')
      }
      expect(await listKeys()).toEqual(before)
      // The bound itself, written with an offset that keeps it in year 9999, is fine.
      const atBound = await t.admin('POST', '/keys', { name: 'At the bound', scopes: ['users:read'], expires_at: '9999-12-31T23:59:59.999+01:00' })
      expect(atBound.statusCode, atBound.body).toBe(201)
      expect((atBound.json() as { data: KeyView }).data.expires_at).toBe('9999-12-31T22:59:59.999Z')
    })

    it('the KeyManager refuses an unrepresentable expiry too', async () => {
      const keys = t.app.workforceApi.keys
      await expect(keys.create({ companyId: 1, scopes: ['users:read'], expiresAt: YEAR_10000 })).rejects.toMatchObject({ reason: 'invalid_input' })
      await expect(keys.create({ companyId: 1, scopes: ['users:read'], expiresAt: new Date(MAX_KEY_EXPIRY.getTime() + 1) })).rejects.toMatchObject({
        reason: 'invalid_input',
      })
      const atMax = await keys.create({ companyId: 1, scopes: ['users:read'], expiresAt: MAX_KEY_EXPIRY })
      expect(atMax.info.expires_at).toBe(NEVER)
    })

    it('a stored key expiring in year 10000 still lists, revokes and rotates, rendered at the bound', async () => {
      const { key, keyId } = await storeKeyDirectly(YEAR_10000)
      await expectListedAsNever(keyId)
      expect((await t.api('GET', '/v1/users', key)).statusCode).toBe(200)
      await expectTwinNever(keyId)

      const revoked = await t.admin('POST', `/keys/${keyId}/revoke`, {})
      expect(revoked.statusCode, revoked.body).toBe(200)
      expect((revoked.json() as { data: KeyView }).data).toMatchObject({ state: 'revoked', expires_at: NEVER })
      expect(await listKeys()).toHaveLength(2)
    })

    it("a stored expiry the driver cannot read as an instant (Postgres 'infinity', SQLite past ±8.64e15 ms) still lists, as never expiring", async () => {
      const { key, keyId } = await storeKeyDirectly(YEAR_10000)
      await writeExpiry(keyId, 'infinity')
      await expectListedAsNever(keyId)
      // The verifier already treats it as not expired; the view says the same.
      expect((await t.api('GET', '/v1/users', key)).statusCode).toBe(200)
      // Its twin never expires either, as far as an expiry can be stored.
      await expectTwinNever(keyId)
      expect(await listKeys()).toHaveLength(2)
    })
  })
}
