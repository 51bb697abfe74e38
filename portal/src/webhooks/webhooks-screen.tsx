import type { Endpoint, EndpointWithSecret, List } from '../api/types'
import { Badge } from '../ui/badge'
import { CreateButton, CreateFormSlot, useCreateFlow } from '../ui/create-flow'
import { ErrorNotice } from '../ui/error-notice'
import { Heading } from '../ui/heading'
import { OneTimeSecret } from '../ui/one-time-secret'
import { usePortal } from '../ui/portal-context'
import { RowButton } from '../ui/row-button'
import { ScreenHead } from '../ui/screen-head'
import { Time, formatDateTime } from '../ui/time'
import { useAction } from '../ui/use-action'
import { useResource } from '../ui/use-resource'
import { CreateEndpointForm } from './create-endpoint-form'
import { ALL_EVENTS } from './event-picker'

const SECRET_HINT = 'Your receiver needs it to check the webhook-signature header of each request. Store it with the receiver’s configuration now.'

export function WebhooksScreen() {
  const { client, announce, confirm, showDeliveries } = usePortal()
  const endpoints = useResource(() => client.get<List<Endpoint>>('/webhooks/endpoints'), [client])
  const flow = useCreateFlow()
  const { creating, revealed } = flow
  const eventTypes = useResource(() => (creating ? client.get<List<string>>('/webhooks/event-types') : Promise.resolve(undefined)), [client, creating])
  const rowAction = useAction()

  function replaceEndpoint(next: Endpoint) {
    endpoints.update((list) => ({ data: list.data.map((endpoint) => (endpoint.id === next.id ? next : endpoint)) }))
  }

  async function sendTest(endpoint: Endpoint) {
    if (rowAction.pending) return
    const answer = await rowAction.run(() => client.send<{ event_id: string }>('POST', `/webhooks/endpoints/${endpoint.id}/test`))
    if (answer !== undefined) announce(`Test event ${answer.event_id} sent to ${endpoint.url}. Its delivery appears in the delivery log.`)
  }

  async function setEnabled(endpoint: Endpoint, enable: boolean) {
    if (rowAction.pending) return
    const answer = await rowAction.run(() => client.send<{ data: Endpoint }>('POST', `/webhooks/endpoints/${endpoint.id}/${enable ? 'enable' : 'disable'}`))
    if (answer === undefined) return
    replaceEndpoint(answer.data)
    announce(`Endpoint ${endpoint.url} ${enable ? 'enabled' : 'disabled'}.`)
  }

  async function rotateSecret(endpoint: Endpoint) {
    if (rowAction.pending) return
    const confirmed = await confirm({
      title: 'Rotate the signing secret?',
      body: `A new secret signs the requests to ${endpoint.url}. The old one also signs them for 24 hours, so you can update the receiver without missing events.`,
      action: 'Rotate secret',
    })
    if (!confirmed) return
    const answer = await rowAction.run(() => client.send<EndpointWithSecret>('POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`))
    if (answer === undefined) return
    replaceEndpoint(answer.data)
    flow.reveal({ title: 'New signing secret', value: answer.secret, hint: `The old secret keeps signing for 24 hours. ${SECRET_HINT}`, subject: endpoint.id })
    announce('Secret rotated. Copy the new secret now.')
  }

  async function remove(endpoint: Endpoint) {
    if (rowAction.pending) return
    const confirmed = await confirm({
      title: 'Delete this endpoint?',
      body: `No more events are sent to ${endpoint.url}, and its delivery log is deleted with it. This cannot be undone.`,
      action: 'Delete endpoint',
      danger: true,
    })
    if (!confirmed) return
    const answer = await rowAction.run(() => client.send<void>('DELETE', `/webhooks/endpoints/${endpoint.id}`).then(() => true))
    if (answer === undefined) return
    endpoints.update((list) => ({ data: list.data.filter((other) => other.id !== endpoint.id) }))
    // A deleted endpoint's secret signs nothing any more.
    flow.forget(endpoint.id)
    announce(`Endpoint ${endpoint.url} deleted.`)
  }

  return (
    <section aria-labelledby="webhooks-title">
      <ScreenHead id="webhooks-title" title="Webhooks" description="Endpoints receive a signed request whenever data in this company changes.">
        {!creating && (
          <CreateButton
            label="Add endpoint"
            testId="create-endpoint"
            onClick={flow.start}
          />
        )}
      </ScreenHead>

      {revealed !== null && (
        <OneTimeSecret
          title={revealed.title}
          label="Signing secret"
          value={revealed.value}
          hint={revealed.hint}
          valueTestId="endpoint-secret"
          copyTestId="copy-secret"
          onDone={flow.dismiss}
        />
      )}

      {creating && (
        <CreateFormSlot options={eventTypes} loading="Loading event types…">
          {(types) => (
            <CreateEndpointForm
              eventTypes={types.data}
              onCreated={(created) => {
                flow.close()
                endpoints.update((list) => ({ data: [...list.data, created.data] }))
                flow.reveal({ title: 'Endpoint added: copy its signing secret', value: created.secret, hint: SECRET_HINT, subject: created.data.id })
                announce(`Endpoint ${created.data.url} added. Copy its signing secret now: it is shown only once.`)
              }}
              onCancel={flow.close}
            />
          )}
        </CreateFormSlot>
      )}

      <ErrorNotice error={rowAction.error} testId="webhooks-error" />
      <ErrorNotice error={endpoints.error} />
      {endpoints.data === undefined ? (
        endpoints.loading && <p class="muted">Loading endpoints…</p>
      ) : endpoints.data.data.length === 0 ? (
        <p class="empty">No endpoints yet. Add one to be told about changes as they happen.</p>
      ) : (
        <ul class="cards" aria-labelledby="webhooks-title">
          {endpoints.data.data.map((endpoint) => (
            <li class="card endpoint" key={endpoint.id} data-testid={`endpoint-${endpoint.id}`}>
              <div class="endpoint-head">
                <Heading depth={2} class="endpoint-url" id={`url-${endpoint.id}`}>
                  {endpoint.url}
                </Heading>
                <Badge tone={endpoint.status === 'enabled' ? 'success' : 'neutral'}>{endpoint.status}</Badge>
              </div>
              {endpoint.description !== null && endpoint.description !== '' && <p>{endpoint.description}</p>}
              <EndpointHealth endpoint={endpoint} />
              <dl class="meta">
                <div>
                  <dt>Events</dt>
                  <dd>
                    {endpoint.events.includes(ALL_EVENTS) ? (
                      <span class="chip">all events</span>
                    ) : (
                      <ul class="chips">
                        {endpoint.events.map((type) => (
                          <li class="chip" key={type}>
                            {type}
                          </li>
                        ))}
                      </ul>
                    )}
                  </dd>
                </div>
                <div>
                  <dt>Added</dt>
                  <dd>
                    <Time value={endpoint.created_at} />
                  </dd>
                </div>
                <div>
                  <dt>Id</dt>
                  <dd class="mono">{endpoint.id}</dd>
                </div>
              </dl>
              <div class="actions">
                {/* A disabled endpoint receives nothing; the admin API refuses its test with 409. */}
                {endpoint.status === 'enabled' && (
                  <RowButton label="Send test event" target={`to ${endpoint.url}`} onClick={() => sendTest(endpoint)} testId={`send-test-${endpoint.id}`} />
                )}
                <RowButton label="Delivery log" target={`of ${endpoint.url}`} onClick={() => showDeliveries(endpoint.id)} testId={`deliveries-${endpoint.id}`} />
                {endpoint.status === 'enabled' ? (
                  <RowButton label="Disable" target={endpoint.url} onClick={() => setEnabled(endpoint, false)} testId={`disable-endpoint-${endpoint.id}`} />
                ) : (
                  <RowButton label="Enable" target={endpoint.url} onClick={() => setEnabled(endpoint, true)} testId={`enable-endpoint-${endpoint.id}`} />
                )}
                <RowButton label="Rotate secret" target={`of ${endpoint.url}`} onClick={() => rotateSecret(endpoint)} testId={`rotate-secret-${endpoint.id}`} />
                <RowButton label="Delete" target={endpoint.url} danger onClick={() => remove(endpoint)} testId={`delete-endpoint-${endpoint.id}`} />
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

/** Why an endpoint stopped, or that it is about to: the delivery path pauses, then disables, failing receivers. */
function EndpointHealth({ endpoint }: { endpoint: Endpoint }) {
  if (endpoint.status === 'disabled' && endpoint.disabled_reason === 'gone') {
    return <p class="notice notice-warning">Disabled automatically: the receiver answered 410 Gone. Enable it again once it accepts events.</p>
  }
  if (endpoint.status === 'disabled' && endpoint.disabled_reason === 'failing') {
    return (
      <p class="notice notice-warning">
        Disabled automatically after deliveries kept failing{endpoint.failing_since !== null && ` since ${formatDateTime(endpoint.failing_since)}`}. Fix the receiver, then enable it.
      </p>
    )
  }
  if (endpoint.status === 'enabled' && endpoint.failing_since !== null) {
    const failures = endpoint.consecutive_failures ?? 0
    const inARow = failures > 1 ? ` (${failures} failed attempts in a row)` : ''
    const paused = endpoint.paused_until ?? null
    return (
      <p class="notice notice-warning" data-testid={`endpoint-health-${endpoint.id}`}>
        Deliveries have been failing since {formatDateTime(endpoint.failing_since)}
        {inARow}.{' '}
        {paused !== null
          ? `Paused until ${formatDateTime(paused)}: then one delivery is tried, and if it succeeds the rest follow. `
          : ''}
        Check the delivery log.
      </p>
    )
  }
  return null
}
