import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { AuditEntry, AuditStore } from '../../ports/audit-store.js'
import type { ClaimedDelivery, WebhookEndpointRecord } from '../../ports/webhook-store.js'
import type { ConformanceGroup } from '../group.js'
import { auditEntry, auditId } from '../audit-facts.js'
import { DELIVERY_LEASE_MS, attemptRecord, changeEvent, endpointRecord, eventId, outcome } from '../webhook-facts.js'
import { afterNow } from '../write-facts.js'
import { outcomeOf } from '../write-outcomes.js'
import { keyRecord } from './key-store.js'
import { typed } from './value-fidelity.js'
import { deliveriesOf, recordEvents } from './webhook-outbox.js'

/** The company's whole trail, newest first. */
async function trailOf(audit: AuditStore, companyId: number): Promise<AuditEntry[]> {
  return (await audit.list(companyId, { limit: 1_000 })).entries
}

/** An entry as a failure message shows it: what, and which. */
function line(entry: AuditEntry): string {
  return `${entry.at instanceof Date ? entry.at.toISOString() : typed(entry.at)} ${entry.action} ${entry.target_id} (${entry.id})`
}

/** Newest first, as the port lists: by `at`, then `id`, descending. */
function newestFirst(entries: readonly AuditEntry[]): AuditEntry[] {
  return [...entries].sort((a, b) => b.at.getTime() - a.at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
}

const keyTarget = (keyId: string) => ({ target_type: 'api_key', target_id: keyId }) as const
const endpointTarget = (endpoint: WebhookEndpointRecord) => ({ target_type: 'webhook_endpoint', target_id: endpoint.id }) as const

/**
 * The audit trail (src/ports/audit-store.ts): an entry handed to a mutating method of the
 * `KeyStore` or `WebhookStore` is committed with the change and only if the change happens, and
 * `AuditStore.list` reads one company's entries back, exactly, newest first, page by page.
 * Atomicity is proved with an entry whose id is already taken: the store cannot write it, so the
 * call must fail and leave the change undone.
 */
export const auditTrail: ConformanceGroup = {
  title: 'audit trail',
  requires: ['keyStore', 'audit'],
  define(ctx) {
    it('an entry handed to KeyStore.create and to each setState that happens is listed with its change, exactly', async () => {
      const keys = ctx.keyStore()
      const audit = ctx.audit()
      const key = keyRecord({ key_id: 'a1a1a1a1a1a1a1a1', name: 'audited' })
      const created = auditEntry('key created', 1, 'key.created', keyTarget(key.key_id), 0, { details: { name: 'audited', scopes: key.scopes, expires_at: null } })
      const disabled = auditEntry('key disabled', 1, 'key.disabled', keyTarget(key.key_id), 1_000, { ip: '203.0.113.9' })
      const enabled = auditEntry('key enabled', 1, 'key.enabled', keyTarget(key.key_id), 2_000, { ip: null, details: {} })
      const revoked = auditEntry('key revoked', 1, 'key.revoked', keyTarget(key.key_id), 3_000)

      await keys.create(key, created)
      expect(await keys.find(key.key_id), 'find() after create(key, entry)').toEqual(key)
      expect(await trailOf(audit, 1), 'list(1) after create(key, entry)').toEqual([created])
      const steps = {
        'setState(disabled, [active], entry)': (await keys.setState(key.key_id, 'disabled', ['active'], disabled))?.state ?? null,
        'setState(active, [disabled], entry)': (await keys.setState(key.key_id, 'active', ['disabled'], enabled))?.state ?? null,
        'setState(revoked, [active, disabled], entry)': (await keys.setState(key.key_id, 'revoked', ['active', 'disabled'], revoked))?.state ?? null,
      }
      expect(steps, 'the state each setState returned').toEqual({
        'setState(disabled, [active], entry)': 'disabled',
        'setState(active, [disabled], entry)': 'active',
        'setState(revoked, [active, disabled], entry)': 'revoked',
      })
      const trail = await trailOf(audit, 1)
      expect(trail.map(line), 'list(1): newest first').toEqual([revoked, enabled, disabled, created].map(line))
      expect(trail, 'list(1): every entry exactly (ip, actor, details)').toEqual([revoked, enabled, disabled, created])
      expect(
        trail.map((entry) => [typed(entry.at), typed(entry.company_id)]),
        'at and company_id of each entry, with runtime types',
      ).toEqual([revoked, enabled, disabled, created].map((entry) => [typed(entry.at), typed(entry.company_id)]))

      // Without an entry, a change records nothing.
      const plain = keyRecord({ key_id: 'b2b2b2b2b2b2b2b2' })
      await keys.create(plain)
      await keys.setState(plain.key_id, 'disabled', ['active'])
      expect((await trailOf(audit, 1)).map(line), 'list(1) after changes made without an entry').toEqual([revoked, enabled, disabled, created].map(line))
    })

    it('an entry handed to a KeyStore change that does not happen is not recorded', async () => {
      const keys = ctx.keyStore()
      const audit = ctx.audit()
      const key = keyRecord({ key_id: 'c3c3c3c3c3c3c3c3' })
      const created = auditEntry('refused: created', 1, 'key.created', keyTarget(key.key_id), 0)
      await keys.create(key, created)
      const refused = {
        'setState from a state not allowed': await keys.setState(key.key_id, 'active', ['disabled'], auditEntry('refused: wrong state', 1, 'key.enabled', keyTarget(key.key_id), 1_000)),
        'setState of an unknown key': await keys.setState('ffffffffffffffff', 'disabled', ['active'], auditEntry('refused: unknown', 1, 'key.disabled', keyTarget('ffffffffffffffff'), 1_001)),
      }
      expect(refused, 'what each refused setState returned').toEqual({ 'setState from a state not allowed': null, 'setState of an unknown key': null })
      const revoked = auditEntry('refused: revoked', 1, 'key.revoked', keyTarget(key.key_id), 2_000)
      expect((await keys.setState(key.key_id, 'revoked', ['active', 'disabled'], revoked))?.state, 'setState(revoked)').toBe('revoked')
      expect(
        await keys.setState(key.key_id, 'active', ['disabled'], auditEntry('refused: revoked is final', 1, 'key.enabled', keyTarget(key.key_id), 3_000)),
        'setState of a revoked key',
      ).toBeNull()
      const duplicate = keyRecord({ key_id: key.key_id, company_id: 1, name: 'impostor' })
      expect(
        await outcomeOf(keys.create(duplicate, auditEntry('refused: duplicate key', 1, 'key.created', keyTarget(key.key_id), 4_000))),
        'create() of an existing key_id',
      ).not.toBe('resolved')
      expect((await trailOf(audit, 1)).map(line), 'list(1): the entries of the changes that happened, only').toEqual([revoked, created].map(line))
    })

    it('a KeyStore change whose entry cannot be stored (its id is taken) fails and is rolled back with it', async () => {
      const keys = ctx.keyStore()
      const audit = ctx.audit()
      const key = keyRecord({ key_id: 'd4d4d4d4d4d4d4d4' })
      const created = auditEntry('rollback: created', 1, 'key.created', keyTarget(key.key_id), 0)
      await keys.create(key, created)
      // The store writes this entry with the change; its id is taken, so it cannot.
      const taken = (label: string, action: AuditEntry['action'], keyId: string) => auditEntry(label, 1, action, keyTarget(keyId), 1_000, { id: created.id })
      const second = keyRecord({ key_id: 'e5e5e5e5e5e5e5e5' })
      const outcomes = {
        'setState(disabled, [active]) with a taken entry id': await outcomeOf(keys.setState(key.key_id, 'disabled', ['active'], taken('rollback: disable', 'key.disabled', key.key_id))),
        'create() with a taken entry id': await outcomeOf(keys.create(second, taken('rollback: create', 'key.created', second.key_id))),
      }
      expect(
        Object.entries(outcomes).filter(([, result]) => result === 'resolved').map(([call]) => call),
        'calls that resolved although their entry could not be stored (written outside the change\'s transaction?)',
      ).toEqual([])
      expect(await keys.find(key.key_id), 'the key after the failed setState: still active').toEqual(key)
      expect(await keys.find(second.key_id), 'the key of the failed create: not stored').toBeNull()
      expect(await trailOf(audit, 1), 'list(1): the first entry, unchanged').toEqual([created])
    })

    if (ctx.supports.webhooks) {
      it('an entry handed to each WebhookStore change that happens is listed with it', async () => {
        const store = ctx.webhooks()
        const audit = ctx.audit()
        const endpoint = endpointRecord('audit: endpoint', 1, ['todos.created'])
        const target = endpointTarget(endpoint)
        const entry = (label: string, action: AuditEntry['action'], atMs: number) => auditEntry(`webhooks: ${label}`, 1, action, target, atMs)
        const created = entry('created', 'webhook_endpoint.created', 0)
        const updated = entry('updated', 'webhook_endpoint.updated', 1_000)
        const rotated = entry('rotated', 'webhook_endpoint.secret_rotated', 1_500)
        const recovered = entry('recovered', 'webhook_deliveries.recovered', 3_000)
        const redelivered = entry('redelivered', 'webhook_delivery.redelivered', 4_000)
        const tested = entry('tested', 'webhook_endpoint.test_sent', 5_000)
        const disabled = entry('disabled', 'webhook_endpoint.disabled', 6_000)
        const enabled = entry('enabled', 'webhook_endpoint.enabled', 7_000)
        const deleted = entry('deleted', 'webhook_endpoint.deleted', 8_000)

        await store.createEndpoint(endpoint, created)
        const event = changeEvent('audit: event', 1, 'todos.created', ctx.edges.unicodeTodo, 2_000)
        await recordEvents(ctx, [event])
        const [claim] = (await store.claimDue(afterNow(2_000), afterNow(2_000 + DELIVERY_LEASE_MS), 10)) as [ClaimedDelivery]
        expect(claim?.event.id, 'the claimed event').toBe(event.id)
        expect(await store.finishAttempt(claim, outcome.failed(attemptRecord(1, 2_100, 500)), afterNow(2_200)), 'finish: failed').not.toBeNull()
        const test = changeEvent('audit: test event', 1, 'webhook.test', 0, 5_000)

        const results = {
          updateEndpoint: (await store.updateEndpoint(endpoint.id, { description: 'changed' }, afterNow(1_000), updated))?.description ?? null,
          'updateEndpoint (rotation)':
            (await store.updateEndpoint(endpoint.id, { secret: 'sealed:v1:rotated', previous_secret: endpoint.secret, previous_secret_expires_at: afterNow(86_400_000) }, afterNow(1_500), rotated))
              ?.secret ?? null,
          recover: await store.recover(endpoint.id, afterNow(0), afterNow(3_000), recovered),
          redeliver: await store.redeliver(endpoint.id, event.id, afterNow(4_000), redelivered),
          sendTest: await store.sendTest(endpoint.id, test, afterNow(5_000), tested),
          disableEndpoint: await store.disableEndpoint(endpoint.id, 'manual', afterNow(6_000), disabled),
          enableEndpoint: await store.enableEndpoint(endpoint.id, afterNow(7_000), enabled),
          deleteEndpoint: await store.deleteEndpoint(endpoint.id, deleted),
        }
        expect(results, 'what each change returned').toEqual({
          updateEndpoint: 'changed',
          'updateEndpoint (rotation)': 'sealed:v1:rotated',
          recover: 1,
          redeliver: true,
          sendTest: true,
          disableEndpoint: true,
          enableEndpoint: true,
          deleteEndpoint: true,
        })
        const expected = [deleted, enabled, disabled, tested, redelivered, recovered, rotated, updated, created]
        const trail = await trailOf(audit, 1)
        expect(trail.map(line), 'list(1): one entry per change, newest first').toEqual(expected.map(line))
        expect(trail, 'list(1): every entry exactly').toEqual(expected)
      })

      it('an entry handed to a WebhookStore change that does not happen is not recorded', async () => {
        const store = ctx.webhooks()
        const audit = ctx.audit()
        const mine = endpointRecord('refused: mine', 1, ['*'])
        const paused = endpointRecord('refused: paused', 1, ['*'], { status: 'disabled', disabled_reason: 'manual' })
        const theirs = endpointRecord('refused: theirs', 2, ['*'])
        const setup = [
          auditEntry('refused webhooks: mine', 1, 'webhook_endpoint.created', endpointTarget(mine), 0),
          auditEntry('refused webhooks: paused', 1, 'webhook_endpoint.created', endpointTarget(paused), 1),
          auditEntry('refused webhooks: theirs', 2, 'webhook_endpoint.created', endpointTarget(theirs), 2),
        ] as const
        await store.createEndpoint(mine, setup[0])
        await store.createEndpoint(paused, setup[1])
        await store.createEndpoint(theirs, setup[2])
        const theirEvent = changeEvent('refused: their event', 2, 'users.created', 5, 10)
        await recordEvents(ctx, [theirEvent])
        const unknown = endpointRecord('refused: unknown', 1, ['*'])
        let n = 0
        const entry = (endpoint: WebhookEndpointRecord, action: AuditEntry['action']) => auditEntry(`refused webhooks: ${++n}`, 1, action, endpointTarget(endpoint), 1_000 + n)
        const now = afterNow(1_000)
        const refused = {
          'updateEndpoint of an unknown id': await store.updateEndpoint(unknown.id, { description: 'x' }, now, entry(unknown, 'webhook_endpoint.updated')),
          'enableEndpoint of an enabled endpoint': await store.enableEndpoint(mine.id, now, entry(mine, 'webhook_endpoint.enabled')),
          'enableEndpoint of an unknown id': await store.enableEndpoint(unknown.id, now, entry(unknown, 'webhook_endpoint.enabled')),
          'disableEndpoint of a disabled endpoint': await store.disableEndpoint(paused.id, 'manual', now, entry(paused, 'webhook_endpoint.disabled')),
          'disableEndpoint of an unknown id': await store.disableEndpoint(unknown.id, 'manual', now, entry(unknown, 'webhook_endpoint.disabled')),
          'deleteEndpoint of an unknown id': await store.deleteEndpoint(unknown.id, entry(unknown, 'webhook_endpoint.deleted')),
          'redeliver of an unknown event': await store.redeliver(mine.id, eventId('refused: never recorded'), now, entry(mine, 'webhook_delivery.redelivered')),
          "redeliver of another company's event": await store.redeliver(mine.id, theirEvent.id, now, entry(mine, 'webhook_delivery.redelivered')),
          'redeliver to an unknown endpoint': await store.redeliver(unknown.id, theirEvent.id, now, entry(unknown, 'webhook_delivery.redelivered')),
          'recover of an endpoint without failed deliveries': await store.recover(mine.id, afterNow(-1_000_000), now, entry(mine, 'webhook_deliveries.recovered')),
          'recover of an unknown endpoint': await store.recover(unknown.id, afterNow(-1_000_000), now, entry(unknown, 'webhook_deliveries.recovered')),
          'sendTest to an unknown endpoint': await store.sendTest(unknown.id, changeEvent('refused: test', 1, 'webhook.test', 0, 1_000), now, entry(unknown, 'webhook_endpoint.test_sent')),
        }
        expect(refused, 'what each refused change returned').toEqual({
          'updateEndpoint of an unknown id': null,
          'enableEndpoint of an enabled endpoint': false,
          'enableEndpoint of an unknown id': false,
          'disableEndpoint of a disabled endpoint': false,
          'disableEndpoint of an unknown id': false,
          'deleteEndpoint of an unknown id': false,
          'redeliver of an unknown event': false,
          "redeliver of another company's event": false,
          'redeliver to an unknown endpoint': false,
          'recover of an endpoint without failed deliveries': 0,
          'recover of an unknown endpoint': 0,
          'sendTest to an unknown endpoint': false,
        })
        const duplicate = { ...mine, url: 'https://hooks.example.com/impostor' }
        expect(await outcomeOf(store.createEndpoint(duplicate, entry(mine, 'webhook_endpoint.created'))), 'createEndpoint() of an existing id').not.toBe('resolved')
        expect((await trailOf(audit, 1)).map(line), 'list(1): the entries of the endpoints created, only').toEqual(newestFirst([setup[0], setup[1]]).map(line))
        expect((await trailOf(audit, 2)).map(line), 'list(2)').toEqual([line(setup[2])])
      })

      it('a WebhookStore change whose entry cannot be stored (its id is taken) fails and is rolled back with it', async () => {
        const store = ctx.webhooks()
        const audit = ctx.audit()
        const endpoint = endpointRecord('rollback: endpoint', 1, ['*'])
        const created = auditEntry('webhook rollback: created', 1, 'webhook_endpoint.created', endpointTarget(endpoint), 0)
        await store.createEndpoint(endpoint, created)
        const failed = changeEvent('rollback: failed', 1, 'todos.created', 1, 10)
        const pending = changeEvent('rollback: pending', 1, 'users.updated', 2, 20)
        await recordEvents(ctx, [failed, pending])
        const claims = await store.claimDue(afterNow(100), afterNow(100 + DELIVERY_LEASE_MS), 10)
        const claimOf = (event: { id: string }) => claims.find((claim) => claim.event.id === event.id) as ClaimedDelivery
        expect(await store.finishAttempt(claimOf(failed), outcome.failed(attemptRecord(1, 110, 500)), afterNow(120)), 'finish: failed').not.toBeNull()
        expect(await store.finishAttempt(claimOf(pending), outcome.retryAt(attemptRecord(1, 110, 503), 60_000), afterNow(120)), 'finish: retry').not.toBeNull()
        const before = { endpoint: await store.getEndpoint(endpoint.id), deliveries: await deliveriesOf(store, { endpoint }) }

        const other = endpointRecord('rollback: other', 1, ['*'])
        const test = changeEvent('rollback: test', 1, 'webhook.test', 0, 1_000)
        const taken = (action: AuditEntry['action'], target: WebhookEndpointRecord = endpoint) =>
          auditEntry(`webhook rollback: ${action}`, 1, action, endpointTarget(target), 1_000, { id: created.id })
        const now = afterNow(1_000)
        const outcomes = {
          createEndpoint: await outcomeOf(store.createEndpoint(other, taken('webhook_endpoint.created', other))),
          updateEndpoint: await outcomeOf(store.updateEndpoint(endpoint.id, { description: 'lost' }, now, taken('webhook_endpoint.updated'))),
          disableEndpoint: await outcomeOf(store.disableEndpoint(endpoint.id, 'manual', now, taken('webhook_endpoint.disabled'))),
          deleteEndpoint: await outcomeOf(store.deleteEndpoint(endpoint.id, taken('webhook_endpoint.deleted'))),
          redeliver: await outcomeOf(store.redeliver(endpoint.id, failed.id, now, taken('webhook_delivery.redelivered'))),
          recover: await outcomeOf(store.recover(endpoint.id, afterNow(0), now, taken('webhook_deliveries.recovered'))),
          sendTest: await outcomeOf(store.sendTest(endpoint.id, test, now, taken('webhook_endpoint.test_sent'))),
        }
        expect(
          Object.entries(outcomes).filter(([, result]) => result === 'resolved').map(([call]) => call),
          'calls that resolved although their entry could not be stored (written outside the change\'s transaction?)',
        ).toEqual([])
        expect(await store.getEndpoint(other.id), 'the endpoint of the failed createEndpoint: not stored').toBeNull()
        expect(
          { endpoint: await store.getEndpoint(endpoint.id), deliveries: await deliveriesOf(store, { endpoint }) },
          'the endpoint and its deliveries after the failed update, disable, delete, redeliver, recover and sendTest: unchanged',
        ).toEqual(before)
        expect(await store.eventPayload(endpoint.id, test.id), 'eventPayload of the failed sendTest\'s event').toBeNull()

        const disabled = auditEntry('webhook rollback: disabled', 1, 'webhook_endpoint.disabled', endpointTarget(endpoint), 2_000)
        expect(await store.disableEndpoint(endpoint.id, 'manual', afterNow(2_000), disabled), 'disableEndpoint with a fresh entry').toBe(true)
        expect(await outcomeOf(store.enableEndpoint(endpoint.id, afterNow(3_000), taken('webhook_endpoint.enabled'))), 'enableEndpoint with a taken entry id').not.toBe('resolved')
        expect((await store.getEndpoint(endpoint.id))?.status, 'the endpoint after the failed enable').toBe('disabled')
        expect(await trailOf(audit, 1), 'list(1): the entries of the changes that happened').toEqual([disabled, created])
      })
    }

    it('list pages newest first (at, then id) with before and has_more, and never lists another company\'s entries', async () => {
      const keys = ctx.keyStore()
      const audit = ctx.audit()
      // Written out of time order, two pairs at the same instant, company 2's among them.
      const specs: Array<[label: string, companyId: number, atMs: number]> = [
        ['paging: c', 1, 3_000],
        ['paging: a', 1, 1_000],
        ['paging: other company, newest', 2, 9_000],
        ['paging: tie 1', 1, 5_000],
        ['paging: f', 1, 7_000],
        ['paging: tie 2', 1, 5_000],
        ['paging: other company, oldest', 2, 0],
        ['paging: b', 1, 2_000],
        ['paging: same instant as b', 1, 2_000],
      ]
      const entries: AuditEntry[] = []
      for (const [index, [label, companyId, atMs]] of specs.entries()) {
        const key = keyRecord({ key_id: `f0f0f0f0f0f0f0${index.toString(16).padStart(2, '0')}`, company_id: companyId })
        const entry = auditEntry(label, companyId, 'key.created', keyTarget(key.key_id), atMs)
        await keys.create(key, entry)
        entries.push(entry)
      }
      const expected = newestFirst(entries.filter((entry) => entry.company_id === 1))

      const pages: Array<{ entries: string[]; has_more: boolean }> = []
      let before: string | undefined
      for (let page = 0; page < 5; page++) {
        const result = await audit.list(1, before === undefined ? { limit: 3 } : { limit: 3, before })
        pages.push({ entries: result.entries.map(line), has_more: result.has_more })
        if (!result.has_more) break
        before = result.entries[result.entries.length - 1]?.id
      }
      expect(pages, 'pages of 3, following has_more with the last id as before').toEqual([
        { entries: expected.slice(0, 3).map(line), has_more: true },
        { entries: expected.slice(3, 6).map(line), has_more: true },
        { entries: expected.slice(6).map(line), has_more: false },
      ])
      const all = await audit.list(1, { limit: expected.length })
      expect([all.entries.length, all.has_more], `list(1, limit ${expected.length}) of ${expected.length} entries`).toEqual([expected.length, false])
      expect((await audit.list(1, { limit: expected.length - 1 })).has_more, `list(1, limit ${expected.length - 1}).has_more`).toBe(true)
      expect(await trailOf(audit, 2), 'list(2): company 2\'s entries only').toEqual(newestFirst(entries.filter((entry) => entry.company_id === 2)))
      expect(await audit.list(3, { limit: 10 }), 'list(3): a company without entries').toEqual({ entries: [], has_more: false })
      const theirs = entries.find((entry) => entry.company_id === 2) as AuditEntry
      expect(await audit.list(1, { limit: 10, before: theirs.id }), "list(1) before an entry of company 2's").toEqual({ entries: [], has_more: false })
      expect(await audit.list(1, { limit: 10, before: auditId('paging: never recorded') }), 'list(1) before an unknown id').toEqual({ entries: [], has_more: false })
    })
  },
}
