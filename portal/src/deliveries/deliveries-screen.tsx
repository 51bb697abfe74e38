import { Fragment } from 'preact'
import { useState } from 'preact/hooks'
import type { Delivery, DeliveryStatus, Endpoint, List, Page } from '../api/types'
import { Badge, type Tone } from '../ui/badge'
import { ErrorNotice } from '../ui/error-notice'
import { usePortal } from '../ui/portal-context'
import { RowButton } from '../ui/row-button'
import { ScreenHead } from '../ui/screen-head'
import { TableWrap } from '../ui/table-wrap'
import { TableHead } from '../ui/table-head'
import { Time } from '../ui/time'
import { useAction } from '../ui/use-action'
import { useOlderPages } from '../ui/use-older-pages'
import { useResource } from '../ui/use-resource'
import { DeliveryDetails } from './delivery-details'
import { ReplayForm } from './replay-form'

const PAGE_SIZE = 25
/** Sent by "Send test event"; not in `GET /webhooks/event-types`, which lists what endpoints subscribe to. */
const TEST_EVENT = 'webhook.test'
const STATUS_TONES: Record<DeliveryStatus, Tone> = { pending: 'info', delivered: 'success', failed: 'danger' }
const COLUMNS = 7

interface DeliveriesScreenProps {
  endpointId: string | null
  onEndpointChange: (endpointId: string) => void
}

export function DeliveriesScreen({ endpointId, onEndpointChange }: DeliveriesScreenProps) {
  const { client } = usePortal()
  const endpoints = useResource(() => client.get<List<Endpoint>>('/webhooks/endpoints'), [client])
  const eventTypes = useResource(() => client.get<List<string>>('/webhooks/event-types'), [client])
  const [status, setStatus] = useState('')
  const [eventType, setEventType] = useState('')

  const list = endpoints.data?.data
  const chosen = list?.find((endpoint) => endpoint.id === endpointId) ?? list?.[0]

  return (
    <section aria-labelledby="deliveries-title">
      <ScreenHead id="deliveries-title" title="Delivery log" description="Every event sent to an endpoint, newest first, with each attempt and the receiver’s answer." />
      <ErrorNotice error={endpoints.error} />
      {list === undefined ? (
        endpoints.loading && <p class="muted">Loading endpoints…</p>
      ) : chosen === undefined ? (
        <p class="empty">No webhook endpoints yet: add one under Webhooks to see its deliveries here.</p>
      ) : (
        <>
          <div class="filters">
            <div class="field">
              <label class="label" for="delivery-endpoint">
                Endpoint
              </label>
              <select id="delivery-endpoint" class="input" value={chosen.id} onChange={(event) => onEndpointChange(event.currentTarget.value)} data-testid="delivery-endpoint">
                {list.map((endpoint) => (
                  <option key={endpoint.id} value={endpoint.id}>
                    {endpoint.url}
                    {endpoint.description ? ` (${endpoint.description})` : ''}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label class="label" for="delivery-status">
                Status
              </label>
              <select id="delivery-status" class="input" value={status} onChange={(event) => setStatus(event.currentTarget.value)} data-testid="delivery-status">
                <option value="">Any status</option>
                <option value="pending">Pending</option>
                <option value="delivered">Delivered</option>
                <option value="failed">Failed</option>
              </select>
            </div>
            <div class="field">
              <label class="label" for="delivery-event-type">
                Event type
              </label>
              <select id="delivery-event-type" class="input" value={eventType} onChange={(event) => setEventType(event.currentTarget.value)} data-testid="delivery-event-type">
                <option value="">Any event type</option>
                {[...(eventTypes.data?.data ?? []), TEST_EVENT].map((type) => (
                  <option key={type} value={type}>
                    {type}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <DeliveryTable endpoint={chosen} status={status} eventType={eventType} />
        </>
      )}
    </section>
  )
}

interface DeliveryTableProps {
  endpoint: Endpoint
  status: string
  eventType: string
}

function DeliveryTable({ endpoint, status, eventType }: DeliveryTableProps) {
  const { client, announce } = usePortal()
  const pages = useOlderPages(
    (before: number | undefined) =>
      client.get<Page<Delivery>>(`/webhooks/endpoints/${endpoint.id}/deliveries`, { status, event_type: eventType, limit: PAGE_SIZE, before }),
    (delivery) => delivery.id,
    [client, endpoint.id, status, eventType],
  )
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set())
  const redeliver = useAction()

  function toggle(eventId: string) {
    setOpen((current) => {
      const next = new Set(current)
      if (!next.delete(eventId)) next.add(eventId)
      return next
    })
  }

  async function resend(delivery: Delivery) {
    if (redeliver.pending) return
    const answer = await redeliver.run(() => client.send<object>('POST', `/webhooks/endpoints/${endpoint.id}/deliveries/${delivery.event_id}/redeliver`))
    if (answer === undefined) return
    announce(`${delivery.event_type} ${delivery.event_id} queued for redelivery.`)
    pages.reload()
  }

  return (
    <>
      <div class="toolbar">
        <button type="button" class="button button-small" onClick={pages.reload} data-testid="refresh-deliveries">
          Refresh
        </button>
      </div>
      <ReplayForm endpoint={endpoint} onReplayed={pages.reload} />
      <ErrorNotice error={redeliver.error} testId="deliveries-error" />
      {pages.items.length === 0 && !pages.loading && pages.error === undefined ? (
        <p class="empty">{status === '' && eventType === '' ? 'Nothing sent to this endpoint yet.' : 'No delivery matches these filters.'}</p>
      ) : (
        <TableWrap labelledBy="deliveries-title">
          <table class="table" aria-labelledby="deliveries-title" aria-busy={pages.loading}>
            <TableHead columns={['Event', 'Status', 'Attempts', 'Last response', 'Created', 'Next attempt']} actions />
            <tbody>
              {pages.items.map((delivery) => {
                const last = delivery.attempts_made[delivery.attempts_made.length - 1]
                const expanded = open.has(delivery.event_id)
                return (
                  <Fragment key={delivery.id}>
                    <tr data-testid="delivery-row" data-event-id={delivery.event_id}>
                      <th scope="row">
                        <span class="strong">{delivery.event_type}</span>
                        <span class="mono hint">{delivery.event_id}</span>
                      </th>
                      <td>
                        <Badge tone={STATUS_TONES[delivery.status]}>{delivery.status}</Badge>
                      </td>
                      <td>{delivery.attempts}</td>
                      <td>
                        {last === undefined ? (
                          <span class="muted">—</span>
                        ) : (
                          <>
                            <span class="mono">{last.status_code ?? 'no answer'}</span> <span class="hint-inline">{last.duration_ms} ms</span>
                          </>
                        )}
                      </td>
                      <td>
                        <Time value={delivery.created_at} />
                      </td>
                      <td>
                        <Time value={delivery.next_attempt_at} />
                      </td>
                      <td class="row-actions">
                        <button
                          type="button"
                          class="button button-small"
                          aria-expanded={expanded}
                          aria-controls={expanded ? `details-${delivery.event_id}` : undefined}
                          onClick={() => toggle(delivery.event_id)}
                          data-testid={`delivery-details-${delivery.event_id}`}
                        >
                          Details<span class="sr-only"> of {delivery.event_id}</span>
                        </button>
                        <RowButton label="Redeliver" target={delivery.event_id} onClick={() => resend(delivery)} testId={`redeliver-${delivery.event_id}`} />
                      </td>
                    </tr>
                    {expanded && (
                      <tr class="details-row" id={`details-${delivery.event_id}`}>
                        <td colSpan={COLUMNS}>
                          <DeliveryDetails endpointId={endpoint.id} delivery={delivery} />
                        </td>
                      </tr>
                    )}
                  </Fragment>
                )
              })}
            </tbody>
          </table>
        </TableWrap>
      )}
      <ErrorNotice error={pages.error} />
      {pages.loading && <p class="muted">Loading deliveries…</p>}
      {pages.hasMore && !pages.loading && (
        <button type="button" class="button" onClick={pages.loadOlder} data-testid="load-older-deliveries">
          Load older deliveries
        </button>
      )}
    </>
  )
}
