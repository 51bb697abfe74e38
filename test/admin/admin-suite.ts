import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ReferenceAdapterPorts } from '../../src/ports/index.js'
import { idempotencySlot, requestFingerprint } from '../../src/corridor/idempotency-fingerprint.js'
import { ALL_SCOPES } from '../../src/scopes.js'
import { buildAdminApp, type AdminAdapterFactory, type AdminTestApp, type AdminTransport } from './admin-app.js'

const KEY_ID = /^[0-9a-f]{16}$/
const ENDPOINT_ID = /^we_[a-z2-7]{24}$/
/** A public address needing no DNS: the dispatcher is off in these tests, nothing is sent. */
const HOOK_URL = 'https://93.184.215.14/hooks'

/**
 * The admin API over one adapter, through `app.inject` or real HTTP on a loopback port:
 * sessions, cross-site refusal, keys, webhook endpoints and deliveries, tenant isolation,
 * idempotent retries and the audit trail.
 */
export function defineAdminApiSuite(factory: AdminAdapterFactory, transport: AdminTransport = 'inject'): void {
  describe(`workforceAdmin over ${factory.name} (${transport === 'http' ? 'real HTTP' : 'app.inject'})`, () => {
    let opened: Awaited<ReturnType<AdminAdapterFactory['open']>>
    let t: AdminTestApp
    let extra: Array<{ close(): Promise<void> }> = []

    beforeEach(async () => {
      opened = await factory.open()
      t = await buildAdminApp(opened.adapter, { transport })
    })
    afterEach(async () => {
      for (const closable of extra) await closable.close()
      extra = []
      await t.close()
      await opened.adapter.close()
      await opened.drop()
    })

    const createKey = async (body: Record<string, unknown> = { name: 'CRM', scopes: ['users:read'] }, session?: string) => {
      const res = await t.admin('POST', '/keys', body, session === undefined ? {} : { session })
      expect(res.statusCode, res.body).toBe(201)
      return res.json() as { key: string; data: { key_id: string; name: string; scopes: string[]; state: string } }
    }
    const createEndpoint = async (session?: string) => {
      const res = await t.admin('POST', '/webhooks/endpoints', { url: HOOK_URL, events: ['users.created'], description: 'CRM' }, session === undefined ? {} : { session })
      expect(res.statusCode, res.body).toBe(201)
      return res.json() as { secret: string; data: { id: string; url: string; status: string } }
    }
    const auditOf = async (session?: string) => {
      const res = await t.admin('GET', '/audit?limit=100', undefined, session === undefined ? {} : { session })
      expect(res.statusCode, res.body).toBe(200)
      return res.json() as { data: Array<{ action: string; target_id: string; actor: { id: string; name: string }; ip: string | null; details: Record<string, unknown> }>; has_more: boolean }
    }

    describe('sessions', () => {
      it('answers 401 in the envelope without a session, and an API key is not a session', async () => {
        const { key } = await createKey()
        const none = await t.admin('GET', '/keys', undefined, { session: null })
        expect(none.statusCode).toBe(401)
        expect(none.json()).toEqual({ error: { code: 'unauthorized', message: 'Not signed in', status: 401 } })
        expect(none.headers['www-authenticate']).toBeUndefined()
        const withKey = await t.admin('GET', '/keys', undefined, { session: null, headers: { authorization: `Bearer ${key}`, 'x-api-key': key } })
        expect(withKey.statusCode).toBe(401)
      })

      it("the admin session never works on the public API", async () => {
        const res = await t.send({ method: 'GET', url: '/api/public/v1/users', headers: { 'x-test-session': '1:u1:Ada Admin' } })
        expect(res.statusCode).toBe(401)
      })

      it('tells who is signed in', async () => {
        const res = await t.admin('GET', '/session')
        expect(res.json()).toEqual({ company_id: 1, actor: { id: 'u1', name: 'Ada Admin' } })
      })
    })

    describe('cross-site requests', () => {
      it('refuses a mutation without the JSON content type or without X-Requested-With, and changes nothing', async () => {
        const plain = await t.send({
          method: 'POST',
          url: '/settings/integrations/api/keys',
          headers: { 'x-test-session': '1:u1:Ada', 'content-type': 'text/plain', 'x-requested-with': 'workforce-admin' },
          payload: JSON.stringify({ name: 'x', scopes: ['all'] }),
        })
        expect(plain.statusCode).toBe(403)
        const form = await t.send({
          method: 'POST',
          url: '/settings/integrations/api/keys',
          headers: { 'x-test-session': '1:u1:Ada', 'content-type': 'application/json' },
          payload: JSON.stringify({ name: 'x', scopes: ['all'] }),
        })
        expect(form.statusCode).toBe(403)
        expect(form.json().error.code).toBe('forbidden')
        expect((await t.admin('GET', '/keys')).json().data).toEqual([])
        expect((await auditOf()).data).toEqual([])
      })

      it("uses the host's own check when given", async () => {
        await t.close()
        t = await buildAdminApp(opened.adapter, { transport, admin: { csrf: (request) => request.headers['x-csrf-token'] === 'good' } })
        const bad = await t.admin('POST', '/keys', { name: 'x', scopes: ['all'] }, { headers: { 'x-csrf-token': 'bad' } })
        expect(bad.statusCode).toBe(403)
        const good = await t.admin('POST', '/keys', { name: 'x', scopes: ['all'] }, { headers: { 'x-csrf-token': 'good', 'x-requested-with': 'anything' } })
        expect(good.statusCode).toBe(201)
      })
    })

    describe('keys', () => {
      it('creates a key whose plaintext is shown once and works on the public API at once', async () => {
        const created = await createKey({ name: 'CRM sync', scopes: ['users:read', 'todos:read'] })
        expect(created.data).toMatchObject({ key_id: expect.stringMatching(KEY_ID), name: 'CRM sync', scopes: ['users:read', 'todos:read'], state: 'active', last_used_at: null })
        expect(created.key).toContain(created.data.key_id)
        const listed = await t.admin('GET', '/keys')
        expect(listed.json().data).toEqual([created.data])
        expect(listed.body).not.toContain(created.key)
        expect((await t.api('GET', '/v1/users', created.key)).statusCode).toBe(200)
        expect((await t.api('GET', '/v1/projects', created.key)).statusCode).toBe(403)
      })

      it('disables, enables and revokes; a revoked key is refused by the public API and cannot come back', async () => {
        const { key, data } = await createKey()
        const disabled = await t.admin('POST', `/keys/${data.key_id}/disable`)
        expect(disabled.json().data.state).toBe('disabled')
        expect((await t.api('GET', '/v1/users', key)).statusCode).toBe(401)
        expect((await t.admin('POST', `/keys/${data.key_id}/enable`)).json().data.state).toBe('active')
        expect((await t.api('GET', '/v1/users', key)).statusCode).toBe(200)
        expect((await t.admin('POST', `/keys/${data.key_id}/revoke`)).json().data.state).toBe('revoked')
        expect((await t.api('GET', '/v1/users', key)).statusCode).toBe(401)
        const again = await t.admin('POST', `/keys/${data.key_id}/enable`)
        expect(again.statusCode).toBe(409)
        expect(again.json().error.code).toBe('conflict')
      })

      it('rotates: a twin with the same scopes, the old key still active until revoked', async () => {
        const { key: old, data } = await createKey({ name: 'ERP', scopes: ['users:read', 'users:write'], rate_limit: 50 })
        const rotated = await t.admin('POST', `/keys/${data.key_id}/rotate`)
        expect(rotated.statusCode).toBe(201)
        const twin = rotated.json()
        expect(twin.data).toMatchObject({ name: 'ERP (rotated)', scopes: ['users:read', 'users:write'], rate_limit: 50, state: 'active' })
        expect(twin.data.key_id).not.toBe(data.key_id)
        expect((await t.api('GET', '/v1/users', old)).statusCode).toBe(200)
        expect((await t.api('GET', '/v1/users', twin.key)).statusCode).toBe(200)
        expect((await auditOf()).data[0]).toMatchObject({ action: 'key.created', target_id: twin.data.key_id, details: { rotated_from: data.key_id } })
      })

      it('rotates an expiring key into a twin with the same lifetime from now, and an expired one into a usable twin', async () => {
        const hour = 60 * 60 * 1000
        const expiring = await createKey({ name: 'Payroll', scopes: ['users:read'], expires_at: new Date(Date.now() + hour).toISOString() })
        const before = Date.now()
        const twin = (await t.admin('POST', `/keys/${expiring.data.key_id}/rotate`)).json()
        const twinExpiry = Date.parse(twin.data.expires_at)
        expect(twinExpiry).toBeGreaterThanOrEqual(before + hour - 5_000)
        expect(twinExpiry).toBeLessThanOrEqual(Date.now() + hour + 5_000)
        // Rotating the twin again does not pile up suffixes.
        const again = (await t.admin('POST', `/keys/${twin.data.key_id}/rotate`)).json()
        expect(again.data.name).toBe('Payroll (rotated)')

        // The twin gets the same lifetime from now: long enough that a loaded machine still
        // rotates and reads with it before it lapses (200 ms made this test flaky).
        const lifetimeMs = 1_500
        const expired = await t.app.workforceApi.keys.create({
          companyId: 1,
          name: 'Old',
          scopes: ['users:read'],
          expiresAt: new Date(Date.now() + lifetimeMs),
        })
        await new Promise((resolve) => setTimeout(resolve, lifetimeMs + 100))
        expect((await t.api('GET', '/v1/users', expired.key)).statusCode).toBe(401)
        const revived = (await t.admin('POST', `/keys/${expired.info.key_id}/rotate`)).json()
        expect(revived.data.state).toBe('active')
        expect((await t.api('GET', '/v1/users', revived.key)).statusCode).toBe(200)

        const bornExpired = await t.app.workforceApi.keys.create({ companyId: 1, name: 'Never', scopes: ['users:read'], expiresAt: new Date(Date.now() - hour) })
        const refused = await t.admin('POST', `/keys/${bornExpired.info.key_id}/rotate`)
        expect(refused.statusCode).toBe(409)
        expect(refused.json().error.code).toBe('conflict')
      })

      it('refuses a key that would be created already expired', async () => {
        const refused = await t.admin('POST', '/keys', { name: 'Late', scopes: ['users:read'], expires_at: new Date(Date.now() - 1000).toISOString() })
        expect(refused.statusCode).toBe(422)
        expect(refused.json().error.details).toEqual([expect.objectContaining({ field: 'expires_at' })])
        expect((await t.admin('GET', '/keys')).json().data.map((key: { name: string }) => key.name)).not.toContain('Late')
      })

      it('refuses bad input with 422 and details, never a 500', async () => {
        const cases = [
          {},
          { name: '', scopes: ['all'] },
          { name: 'x', scopes: [] },
          { name: 'x', scopes: ['users:wrte'] },
          { name: 'x', scopes: ['all'], rate_limit: 0 },
          { name: 'x', scopes: ['all'], expires_at: 'tomorrow' },
          { name: 'x', scopes: ['all'], extra: true },
        ]
        for (const body of cases) {
          const res = await t.admin('POST', '/keys', body)
          expect(res.statusCode, JSON.stringify(body)).toBe(422)
          expect(res.json().error).toMatchObject({ code: 'validation_error', status: 422, details: expect.any(Array) })
        }
        expect((await t.admin('POST', '/keys/not-a-key/revoke')).statusCode).toBe(404)
        expect((await t.admin('GET', '/keys')).json().data).toEqual([])
      })

      it("another company's key answers like an unknown one", async () => {
        const { data } = await createKey(undefined, '2:u9:Other Admin')
        const unknown = 'ffffffffffffffff'
        for (const action of ['disable', 'enable', 'revoke', 'rotate']) {
          const theirs = await t.admin('POST', `/keys/${data.key_id}/${action}`)
          const none = await t.admin('POST', `/keys/${unknown}/${action}`)
          expect(theirs.statusCode).toBe(404)
          expect(theirs.json().error.message.replace(data.key_id, unknown)).toBe(none.json().error.message)
        }
        expect((await t.admin('GET', '/keys')).json().data).toEqual([])
        expect((await t.admin('GET', '/keys', undefined, { session: '2:u9:Other Admin' })).json().data[0].state).toBe('active')
      })
    })

    describe('idempotent retries', () => {
      it('replays a create with the same Idempotency-Key: one key, the same plaintext', async () => {
        const headers = { 'idempotency-key': 'create-crm-1' }
        const first = await t.admin('POST', '/keys', { name: 'CRM', scopes: ['all'] }, { headers })
        const second = await t.admin('POST', '/keys', { name: 'CRM', scopes: ['all'] }, { headers })
        expect(first.statusCode).toBe(201)
        expect(second.statusCode).toBe(201)
        expect(second.headers['idempotent-replay']).toBe('true')
        expect(second.json()).toEqual(first.json())
        expect((await t.admin('GET', '/keys')).json().data).toHaveLength(1)
        expect((await auditOf()).data).toHaveLength(1)
        // What the store keeps for the replay is sealed: neither the plaintext nor the answer.
        const now = new Date()
        const stored = await t.adapter.idempotency.begin({
          slot: idempotencySlot('workforce-admin\n1\nu1', 'create-crm-1'),
          fingerprint: requestFingerprint('POST', '/settings/integrations/api/keys', { name: 'CRM', scopes: ['all'] }),
          companyId: 1,
          token: 'inspect',
          now,
          leaseUntil: new Date(now.getTime() + 60_000),
          expiredBefore: new Date(now.getTime() - 86_400_000),
        })
        expect(stored.state).toBe('replay')
        const storedBody = (stored as { response: { body: string } }).response.body
        expect(storedBody).not.toContain(first.json().key)
        expect(storedBody).not.toContain(first.json().data.key_id)
        const other = await t.admin('POST', '/keys', { name: 'Other', scopes: ['all'] }, { headers })
        expect(other.statusCode).toBe(422)
        // Another user's same key is their own slot.
        const theirs = await t.admin('POST', '/keys', { name: 'CRM', scopes: ['all'] }, { headers, session: '1:u2:Bob' })
        expect(theirs.headers['idempotent-replay']).toBeUndefined()
        expect((await t.admin('GET', '/keys')).json().data).toHaveLength(2)
      })
    })

    describe('webhook endpoints and deliveries', () => {
      it('creates with the secret once, updates, disables, enables, rotates and deletes', async () => {
        const created = await createEndpoint()
        expect(created.secret).toMatch(/^whsec_/)
        expect(created.data).toMatchObject({ id: expect.stringMatching(ENDPOINT_ID), url: HOOK_URL, status: 'enabled' })
        const listed = await t.admin('GET', '/webhooks/endpoints')
        expect(listed.json().data.map((e: { id: string }) => e.id)).toEqual([created.data.id])
        expect(listed.body).not.toContain('whsec_')
        const id = created.data.id
        const patched = await t.admin('PATCH', `/webhooks/endpoints/${id}`, { events: ['todos.updated', 'users.created'], description: null })
        expect(patched.json().data).toMatchObject({ events: ['users.created', 'todos.updated'], description: null })
        expect((await t.admin('POST', `/webhooks/endpoints/${id}/disable`)).json().data).toMatchObject({ status: 'disabled', disabled_reason: 'manual' })
        expect((await t.admin('POST', `/webhooks/endpoints/${id}/enable`)).json().data.status).toBe('enabled')
        const rotated = await t.admin('POST', `/webhooks/endpoints/${id}/rotate-secret`)
        expect(rotated.json().secret).toMatch(/^whsec_/)
        expect(rotated.json().secret).not.toBe(created.secret)
        expect((await t.admin('DELETE', `/webhooks/endpoints/${id}`)).statusCode).toBe(204)
        expect((await t.admin('GET', `/webhooks/endpoints/${id}`)).statusCode).toBe(404)
        const actions = (await auditOf()).data.map((entry) => entry.action)
        expect(actions).toEqual([
          'webhook_endpoint.deleted',
          'webhook_endpoint.secret_rotated',
          'webhook_endpoint.enabled',
          'webhook_endpoint.disabled',
          'webhook_endpoint.updated',
          'webhook_endpoint.created',
        ])
      })

      it('sends a test event to that endpoint only, lists it with filters, shows its payload, redelivers it', async () => {
        const mine = await createEndpoint()
        const other = await createEndpoint()
        const sent = await t.admin('POST', `/webhooks/endpoints/${mine.data.id}/test`)
        expect(sent.statusCode).toBe(202)
        const eventId = sent.json().event_id as string
        const deliveries = await t.admin('GET', `/webhooks/endpoints/${mine.data.id}/deliveries`)
        expect(deliveries.json()).toMatchObject({ data: [{ event_id: eventId, event_type: 'webhook.test', status: 'pending', attempts_made: [] }], has_more: false })
        expect((await t.admin('GET', `/webhooks/endpoints/${other.data.id}/deliveries`)).json().data).toEqual([])
        expect((await t.admin('GET', `/webhooks/endpoints/${mine.data.id}/deliveries?status=delivered`)).json().data).toEqual([])
        expect((await t.admin('GET', `/webhooks/endpoints/${mine.data.id}/deliveries?event_type=users.created`)).json().data).toEqual([])
        const payload = await t.admin('GET', `/webhooks/endpoints/${mine.data.id}/deliveries/${eventId}/payload`)
        expect(payload.headers['content-type']).toMatch(/^application\/json/)
        expect(payload.json()).toMatchObject({ id: eventId, type: 'webhook.test', company_id: 1, data: { endpoint_id: mine.data.id } })
        expect((await t.admin('GET', `/webhooks/endpoints/${other.data.id}/deliveries/${eventId}/payload`)).statusCode).toBe(404)
        expect((await t.admin('POST', `/webhooks/endpoints/${mine.data.id}/deliveries/${eventId}/redeliver`)).statusCode).toBe(202)
        const recovered = await t.admin('POST', `/webhooks/endpoints/${mine.data.id}/recover`, { since: '2000-01-01T00:00:00.000Z' })
        expect(recovered.json()).toEqual({ count: 0 })
        const actions = (await auditOf()).data.map((entry) => entry.action)
        // A recover that found nothing to send records nothing.
        expect(actions.slice(0, 2)).toEqual(['webhook_delivery.redelivered', 'webhook_endpoint.test_sent'])
      })

      it('refuses a test event to a disabled endpoint with 409, records nothing and queues nothing', async () => {
        const mine = await createEndpoint()
        expect((await t.admin('POST', `/webhooks/endpoints/${mine.data.id}/disable`)).statusCode).toBe(200)
        const before = (await auditOf()).data.length
        const refused = await t.admin('POST', `/webhooks/endpoints/${mine.data.id}/test`)
        expect(refused.statusCode).toBe(409)
        expect(refused.json().error).toMatchObject({ code: 'conflict', message: expect.stringContaining('disabled') })
        expect((await t.admin('GET', `/webhooks/endpoints/${mine.data.id}/deliveries`)).json().data).toEqual([])
        expect((await auditOf()).data.length).toBe(before)
        expect((await t.admin('POST', `/webhooks/endpoints/${mine.data.id}/enable`)).statusCode).toBe(200)
        expect((await t.admin('POST', `/webhooks/endpoints/${mine.data.id}/test`)).statusCode).toBe(202)
      })

      it("another company's endpoint answers like an unknown one, on every route", async () => {
        const theirs = await createEndpoint('2:u9:Other')
        const unknown = 'we_aaaaaaaaaaaaaaaaaaaaaaaa'
        const calls: Array<[string, string, unknown?]> = [
          ['GET', ''],
          ['PATCH', '', { description: 'x' }],
          ['POST', '/disable'],
          ['POST', '/enable'],
          ['POST', '/rotate-secret'],
          ['POST', '/test'],
          ['GET', '/deliveries'],
          ['POST', '/recover', { since: '2000-01-01T00:00:00.000Z' }],
          ['DELETE', ''],
        ]
        for (const [method, suffix, body] of calls) {
          const a = await t.admin(method, `/webhooks/endpoints/${theirs.data.id}${suffix}`, body)
          const b = await t.admin(method, `/webhooks/endpoints/${unknown}${suffix}`, body)
          expect(a.statusCode, `${method} ${suffix}`).toBe(404)
          expect(a.json().error.message.replace(theirs.data.id, unknown)).toBe(b.json().error.message)
        }
        expect((await t.admin('GET', '/webhooks/endpoints', undefined, { session: '2:u9:Other' })).json().data[0].status).toBe('enabled')
      })
    })

    describe('audit trail', () => {
      it('records who, what, when and from where for every change, never a secret, and forwards it after commit', async () => {
        const { key, data } = await createKey({ name: 'CRM', scopes: ['all'] })
        await t.admin('POST', `/keys/${data.key_id}/disable`)
        const endpoint = await createEndpoint()
        const rotated = (await t.admin('POST', `/webhooks/endpoints/${endpoint.data.id}/rotate-secret`)).json().secret as string
        // Refused: a revoked key cannot be enabled, and nothing is recorded for it.
        await t.admin('POST', `/keys/${data.key_id}/revoke`)
        expect((await t.admin('POST', `/keys/${data.key_id}/enable`)).statusCode).toBe(409)
        const audit = await auditOf()
        expect(audit.data.map((entry) => [entry.action, entry.target_id])).toEqual([
          ['key.revoked', data.key_id],
          ['webhook_endpoint.secret_rotated', endpoint.data.id],
          ['webhook_endpoint.created', endpoint.data.id],
          ['key.disabled', data.key_id],
          ['key.created', data.key_id],
        ])
        for (const entry of audit.data) expect(entry).toMatchObject({ actor: { id: 'u1', name: 'Ada Admin' }, ip: '127.0.0.1' })
        const everything = JSON.stringify(audit) + JSON.stringify(t.audited)
        for (const secret of [key, key.slice(-20), endpoint.secret, rotated, 'whsec_']) expect(everything).not.toContain(secret)
        expect(t.audited.map((entry) => entry.action)).toEqual(['key.created', 'key.disabled', 'webhook_endpoint.created', 'webhook_endpoint.secret_rotated', 'key.revoked'])
        // Another company sees none of it.
        expect((await auditOf('2:u9:Other')).data).toEqual([])
      })

      it('pages newest first', async () => {
        for (let i = 0; i < 5; i += 1) await createKey({ name: `k${i}`, scopes: ['all'] })
        const first = (await t.admin('GET', '/audit?limit=2')).json()
        expect(first.has_more).toBe(true)
        expect(first.data.map((entry: { details: { name: string } }) => entry.details.name)).toEqual(['k4', 'k3'])
        const next = (await t.admin('GET', `/audit?limit=2&before=${first.data[1].id}`)).json()
        expect(next.data.map((entry: { details: { name: string } }) => entry.details.name)).toEqual(['k2', 'k1'])
      })
    })

    describe('modules, scopes and usage', () => {
      it('groups scopes by module with the module state', async () => {
        await (opened.adapter.modules as ReferenceAdapterPorts['modules']).setActive(1, 'todo', false)
        const scopes = (await t.admin('GET', '/scopes')).json().data as Array<{ module: string; enabled: boolean; scopes: Array<{ scope: string }> }>
        expect(scopes.map((group) => [group.module, group.enabled])).toEqual([
          ['core', true],
          ['projects', true],
          ['todo', false],
        ])
        expect(scopes.find((group) => group.module === 'todo')?.scopes.map((s) => s.scope)).toEqual(['todos:read', 'todos:write'])
        expect((await t.admin('GET', '/modules')).json().data).toContainEqual({ module: 'todo', enabled: false })
      })

      it('describes every scope by what it grants (regression: GET /scopes answered { scope } only, the key form showed empty hints)', async () => {
        const groups = (await t.admin('GET', '/scopes')).json().data as Array<{ scopes: Array<{ scope: string; description: string }> }>
        const scopes = groups.flatMap((group) => group.scopes)
        expect(scopes.map((entry) => entry.scope)).toEqual(ALL_SCOPES)
        for (const entry of scopes) expect(Object.keys(entry)).toEqual(['scope', 'description'])
        expect(scopes.find((entry) => entry.scope === 'users:read')?.description).toBe('List users, get one user')
        // Write scopes are described by the write routes' summaries, whatever this API mounts.
        expect(scopes.find((entry) => entry.scope === 'todos:write')?.description).toBe('Create a to-do, change some fields of a to-do')
        expect(scopes.filter((entry) => entry.description === '')).toEqual([])
      })

      it('counts requests per key per hour across two instances, with 4xx and the last 429', async () => {
        const { key, data } = await createKey({ name: 'CRM', scopes: ['users:read'], rate_limit: 3 })
        const second = await opened.second()
        const other = await buildAdminApp(second, { transport, api: { rateLimit: { max: 100, timeWindow: 60_000 } } })
        extra.push(other, second)
        for (let i = 0; i < 2; i += 1) expect((await t.api('GET', '/v1/users', key)).statusCode).toBe(200)
        expect((await t.api('GET', '/v1/projects', key)).statusCode).toBe(403)
        const limited: number[] = []
        for (let i = 0; i < 4; i += 1) limited.push((await other.api('GET', '/v1/users', key)).statusCode)
        expect(limited).toEqual([200, 200, 200, 429])
        // Each instance adds its counts when it closes (and every few seconds meanwhile).
        await other.close()
        await t.close()
        t = await buildAdminApp(opened.adapter, { transport })
        const usage = (await t.admin('GET', '/usage')).json()
        expect(usage.recorded).toBe(true)
        expect(usage.data).toEqual([
          {
            key_id: data.key_id,
            hour: expect.any(String),
            requests: 7,
            client_errors: 2,
            server_errors: 0,
            rate_limited: 1,
            last_rate_limited_at: expect.any(String),
            not_modified: 0,
          },
        ])
        expect((await t.admin('GET', '/usage', undefined, { session: '2:u9:Other' })).json().data).toEqual([])
      })

      it('counts a conditional GET answered 304 as a request and as not_modified, not as a client error', async () => {
        const { key, data } = await createKey({ name: 'Sync', scopes: ['users:read'] })
        const first = await t.api('GET', '/v1/users', key)
        expect(first.statusCode).toBe(200)
        const etag = first.headers.etag
        expect(etag).toEqual(expect.any(String))
        const again = await t.send({ method: 'GET', url: '/api/public/v1/users', headers: { authorization: `Bearer ${key}`, 'if-none-match': etag as string } })
        expect(again.statusCode).toBe(304)
        // The meter adds its counts when the app closes.
        await t.close()
        t = await buildAdminApp(opened.adapter, { transport })
        expect((await t.admin('GET', '/usage')).json().data).toEqual([
          { key_id: data.key_id, hour: expect.any(String), requests: 2, client_errors: 0, server_errors: 0, rate_limited: 0, last_rate_limited_at: null, not_modified: 1 },
        ])
      })

      it('answers the not_modified count the usage store holds, and 0 from a store that does not know it', async () => {
        const now = Date.now()
        const hour = new Date(now - (now % 3_600_000))
        const usage = opened.adapter.usage
        await usage.add([{ company_id: 1, key_id: 'aaaaaaaaaaaaaaa1', hour, requests: 9, client_errors: 1, server_errors: 0, rate_limited: 0, last_rate_limited_at: null, not_modified: 5 }])
        const expected = { key_id: 'aaaaaaaaaaaaaaa1', hour: hour.toISOString(), requests: 9, client_errors: 1, server_errors: 0, rate_limited: 0, last_rate_limited_at: null }
        expect((await t.admin('GET', '/usage')).json().data).toEqual([{ ...expected, not_modified: 5 }])
        // A host's store written before the field (src/ports/usage-store.ts): its rows have none.
        await t.close()
        const olderStore = {
          add: (increments: Parameters<typeof usage.add>[0]) => usage.add(increments),
          hourly: async (companyId: number, since: Date) => (await usage.hourly(companyId, since)).map(({ not_modified: _dropped, ...row }) => row),
        }
        t = await buildAdminApp(opened.adapter, { transport, api: { usage: olderStore } })
        expect((await t.admin('GET', '/usage')).json().data).toEqual([{ ...expected, not_modified: 0 }])
      })
    })
  })
}
