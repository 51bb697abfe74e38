import { useState } from 'preact/hooks'
import type { Delivery } from '../api/types'
import { ErrorNotice } from '../ui/error-notice'
import { usePortal } from '../ui/portal-context'
import { TableHead } from '../ui/table-head'
import { Time } from '../ui/time'
import { useAction } from '../ui/use-action'

/** A response body is the receiver's, of any size: the log shows its start. */
const RESPONSE_PREVIEW_CHARS = 300

interface DeliveryDetailsProps {
  endpointId: string
  delivery: Delivery
}

/** A delivery's attempts, and its payload on request (`…/deliveries/:event_id/payload`). */
export function DeliveryDetails({ endpointId, delivery }: DeliveryDetailsProps) {
  const { client } = usePortal()
  const [payload, setPayload] = useState<string | null>(null)
  const loading = useAction()

  async function showPayload() {
    const body = await loading.run(() => client.get<unknown>(`/webhooks/endpoints/${endpointId}/deliveries/${delivery.event_id}/payload`))
    if (body !== undefined) setPayload(JSON.stringify(body, null, 2))
  }

  return (
    <div class="delivery-details">
      {delivery.attempts_made.length === 0 ? (
        <p class="muted">No attempt yet{delivery.next_attempt_at !== null && ': the first is due soon'}.</p>
      ) : (
        <table class="table table-inner">
          <caption class="caption">Attempts</caption>
          <TableHead columns={['#', 'Time', 'Response', 'Duration', 'Result']} />
          <tbody>
            {delivery.attempts_made.map((attempt) => (
              <tr key={attempt.number}>
                <td>{attempt.number}</td>
                <td>
                  <Time value={attempt.attempted_at} />
                </td>
                <td class="mono">{attempt.status_code ?? '—'}</td>
                <td>{attempt.duration_ms} ms</td>
                <td>
                  <span class={attempt.succeeded ? 'text-success' : 'text-danger'}>{attempt.succeeded ? 'Succeeded' : 'Failed'}</span>
                  {attempt.error !== null && <span class="hint">{attempt.error}</span>}
                  {attempt.response_body !== null && attempt.response_body !== '' && (
                    <pre class="code code-small">
                      {attempt.response_body.length > RESPONSE_PREVIEW_CHARS ? `${attempt.response_body.slice(0, RESPONSE_PREVIEW_CHARS)}…` : attempt.response_body}
                    </pre>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="actions">
        {payload === null ? (
          <button type="button" class="button button-small" onClick={showPayload} aria-disabled={loading.pending} data-testid={`payload-${delivery.event_id}`}>
            {loading.pending ? 'Loading payload…' : 'Show payload'}
          </button>
        ) : (
          <button type="button" class="button button-small" onClick={() => setPayload(null)}>
            Hide payload
          </button>
        )}
      </div>
      <ErrorNotice error={loading.error} />
      {payload !== null && (
        <pre class="code" tabIndex={0} aria-label={`Payload of ${delivery.event_id}`} data-testid="payload">
          {payload}
        </pre>
      )}
    </div>
  )
}
