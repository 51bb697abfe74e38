/** Broken `WebhookStore.replay`s: the period's end, the batch limit, and what is left alone. */
import type { AuditEntry } from '../../../src/ports/audit-store.js'
import type { ReplayPeriod } from '../../../src/ports/webhook-store.js'
import { override, type BrokenAdapter } from './wrap.js'

export const BROKEN_REPLAYS: readonly BrokenAdapter[] = [
  {
    name: 'replay-until-inclusive',
    area: 'webhooks outbox',
    bug: '`replay` reads `occurred_at <= until`: an event at the end of the period is sent, and sent again by the next period',
    caughtBy: 'webhook replay of a period',
    break: ({ webhooks }) => ({
      webhooks: override(webhooks, {
        replay: (endpointId: string, period: ReplayPeriod, now: Date, audit?: AuditEntry) =>
          webhooks.replay(endpointId, { ...period, until: new Date(period.until.getTime() + 1) }, now, audit),
      }),
    }),
  },
  {
    name: 'replay-without-limit',
    area: 'webhooks outbox',
    bug: '`replay` makes the whole period due in one transaction, whatever `limit` says',
    caughtBy: 'webhook replay of a period',
    break: ({ webhooks }) => ({
      webhooks: override(webhooks, {
        replay: (endpointId: string, period: ReplayPeriod, now: Date, audit?: AuditEntry) =>
          webhooks.replay(endpointId, { ...period, limit: Number.MAX_SAFE_INTEGER }, now, audit),
      }),
    }),
  },
  {
    name: 'replay-resends-delivered',
    area: 'webhooks outbox',
    bug: "`replay` re-dues every delivery of the period, delivered ones too: receivers get what they already have",
    caughtBy: 'webhook replay of a period',
    break: ({ webhooks }, adapter) => ({
      webhooks: override(webhooks, {
        async replay(endpointId: string, period: ReplayPeriod, now: Date, audit?: AuditEntry) {
          const result = await webhooks.replay(endpointId, period, now, audit)
          const delivered = adapter.webhooks.deliveries.filter((row) => {
            const event = adapter.webhooks.events.get(row.event_id)
            return row.endpoint_id === endpointId && row.status === 'delivered' && event !== undefined && event.occurred_at >= period.since && event.occurred_at < period.until
          })
          for (const row of delivered) await webhooks.redeliver(endpointId, row.event_id, now)
          return { ...result, count: result.count + delivered.length }
        },
      }),
    }),
  },
]
