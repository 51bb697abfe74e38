/**
 * Broken ports of the admin API: the audit trail written by the key and webhook stores, key
 * usage, and the webhook store's test sends, payloads and delivery filters (docs/adapters.md).
 */
import type { AuditEntry } from '../../../src/ports/audit-store.js'
import type { ApiKeyRecord, KeyState } from '../../../src/ports/key-store.js'
import type { UsageIncrement } from '../../../src/ports/usage-store.js'
import type { DeliveryQuery, WebhookEndpointChanges } from '../../../src/ports/webhook-store.js'
import type { ChangeEvent } from '../../../src/ports/write-storage.js'
import { override, type BrokenAdapter } from './wrap.js'

export const BROKEN_ADMIN_PORTS: readonly BrokenAdapter[] = [
  {
    name: 'audit-on-refused-set-state',
    area: 'audit',
    bug: '`setState` writes its audit entry before the conditional UPDATE and keeps it when no row changed',
    caughtBy: 'audit trail',
    break: ({ keyStore }, adapter) => ({
      keyStore: override(keyStore, {
        async setState(keyId: string, to: KeyState, from: readonly KeyState[], audit?: AuditEntry) {
          const changed = await keyStore.setState(keyId, to, from)
          if (audit !== undefined) adapter.audit.record(audit)
          return changed
        },
      }),
    }),
  },
  {
    name: 'audit-outside-the-transaction',
    area: 'audit',
    bug: 'the key store commits the change, then writes the audit entry in a statement of its own: an entry that fails leaves the change made',
    caughtBy: 'audit trail',
    break: ({ keyStore }, adapter) => ({
      keyStore: override(keyStore, {
        async create(record: ApiKeyRecord, audit?: AuditEntry) {
          await keyStore.create(record)
          adapter.audit.check(audit)
          adapter.audit.record(audit)
        },
        async setState(keyId: string, to: KeyState, from: readonly KeyState[], audit?: AuditEntry) {
          const changed = await keyStore.setState(keyId, to, from)
          if (changed !== null) {
            adapter.audit.check(audit)
            adapter.audit.record(audit)
          }
          return changed
        },
      }),
    }),
  },
  {
    name: 'audit-dropped-by-update-endpoint',
    area: 'audit',
    bug: '`updateEndpoint` ignores its `audit` argument: secret rotations leave no trace',
    caughtBy: 'audit trail',
    break: ({ webhooks }) => ({
      webhooks: override(webhooks, {
        updateEndpoint: (id: string, changes: WebhookEndpointChanges, now: Date) => webhooks.updateEndpoint(id, changes, now),
      }),
    }),
  },
  {
    name: 'audit-recover-of-nothing',
    area: 'audit',
    bug: '`recover` writes its audit entry even when no delivery was failed',
    caughtBy: 'audit trail',
    break: ({ webhooks }, adapter) => ({
      webhooks: override(webhooks, {
        async recover(endpointId: string, since: Date, now: Date, audit?: AuditEntry) {
          const count = await webhooks.recover(endpointId, since, now, audit)
          if (count === 0) adapter.audit.record(audit)
          return count
        },
      }),
    }),
  },
  {
    name: 'audit-before-inclusive',
    area: 'audit',
    bug: '`list` pages with `id <= before`: the cursor entry shows again at the top of the next page',
    caughtBy: 'audit trail',
    break: ({ audit }) => ({
      audit: override(audit, {
        async list(companyId: number, page: { limit: number; before?: string }) {
          if (page.before === undefined) return audit.list(companyId, page)
          const cursor = (await audit.list(companyId, { limit: 1_000 })).entries.find((entry) => entry.id === page.before)
          const rest = await audit.list(companyId, page)
          if (cursor === undefined) return rest
          return { entries: [cursor, ...rest.entries].slice(0, page.limit), has_more: rest.has_more || rest.entries.length >= page.limit }
        },
      }),
    }),
  },
  {
    name: 'audit-every-company',
    area: 'audit',
    bug: '`list` forgets `company_id = ?`: a company sees who changed every other company\'s keys',
    caughtBy: 'audit trail',
    break: ({ audit }, adapter) => ({
      audit: override(audit, {
        async list(_companyId: number, page: { limit: number; before?: string }) {
          const companies = [...new Set(adapter.audit.entries.map((entry) => entry.company_id))]
          const all = (await Promise.all(companies.map(async (company) => (await audit.list(company, { limit: 1_000 })).entries))).flat()
          all.sort((a, b) => b.at.getTime() - a.at.getTime() || (a.id < b.id ? 1 : -1))
          return { entries: all.slice(0, page.limit), has_more: all.length > page.limit }
        },
      }),
    }),
  },
  {
    name: 'usage-add-overwrites',
    area: 'usage',
    bug: '`add` upserts with `do update set requests = excluded.requests`: each flush replaces the hour\'s counts',
    caughtBy: 'key usage',
    break: ({ usage }, adapter) => ({
      usage: override(usage, {
        async add(increments: readonly UsageIncrement[]) {
          for (const increment of increments) adapter.usage.rows.delete(`${increment.key_id}\n${increment.hour.getTime()}`)
          await usage.add(increments)
        },
      }),
    }),
  },
  {
    name: 'usage-last-rate-limited-overwritten',
    area: 'usage',
    bug: '`add` sets `last_rate_limited_at = excluded.last_rate_limited_at`: an older or null instant replaces a later one',
    caughtBy: 'key usage',
    break: ({ usage }, adapter) => ({
      usage: override(usage, {
        async add(increments: readonly UsageIncrement[]) {
          await usage.add(increments)
          for (const increment of increments) {
            const row = adapter.usage.rows.get(`${increment.key_id}\n${increment.hour.getTime()}`)
            if (row !== undefined) row.last_rate_limited_at = increment.last_rate_limited_at
          }
        },
      }),
    }),
  },
  {
    name: 'usage-hourly-by-key',
    area: 'usage',
    bug: '`hourly` orders by `key_id, hour`',
    caughtBy: 'key usage',
    break: ({ usage }) => ({
      usage: override(usage, {
        async hourly(companyId: number, since: Date) {
          return (await usage.hourly(companyId, since)).sort((a, b) => (a.key_id < b.key_id ? -1 : a.key_id > b.key_id ? 1 : a.hour.getTime() - b.hour.getTime()))
        },
      }),
    }),
  },
  {
    name: 'send-test-through-the-outbox',
    area: 'webhooks outbox',
    bug: '`sendTest` records the test event through the outbox: every endpoint of the company subscribed to `*` receives it too',
    caughtBy: 'webhook test events, payloads and delivery filters',
    break: ({ webhooks }, adapter) => ({
      webhooks: override(webhooks, {
        async sendTest(endpointId: string, event: ChangeEvent, now: Date, audit?: AuditEntry) {
          const sent = await webhooks.sendTest(endpointId, event, now, audit)
          if (sent) await adapter.writes.transaction(async () => void adapter.webhooks.fanOut(event, []))
          return sent
        },
      }),
    }),
  },
  {
    name: 'event-payload-of-any-endpoint',
    area: 'webhooks outbox',
    bug: '`eventPayload` looks the event up by id alone, not through the endpoint\'s deliveries',
    caughtBy: 'webhook test events, payloads and delivery filters',
    break: ({ webhooks }, adapter) => ({
      webhooks: override(webhooks, {
        async eventPayload(_endpointId: string, eventId: string) {
          return adapter.webhooks.events.get(eventId)?.payload ?? null
        },
      }),
    }),
  },
  {
    name: 'deliveries-filtered-after-the-page',
    area: 'webhooks outbox',
    bug: '`listDeliveries` takes `limit + 1` rows, then filters by status and type: pages come short and has_more lies',
    caughtBy: 'webhook test events, payloads and delivery filters',
    break: ({ webhooks }) => ({
      webhooks: override(webhooks, {
        async listDeliveries(endpointId: string, page: DeliveryQuery) {
          const { status, event_type, ...window } = page
          const rows = await webhooks.listDeliveries(endpointId, window)
          const kept = rows.deliveries.filter((delivery) => (status === undefined || delivery.status === status) && (event_type === undefined || delivery.event_type === event_type))
          return { deliveries: kept, has_more: rows.has_more }
        },
      }),
    }),
  },
]
