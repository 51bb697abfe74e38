import { useRef, useState } from 'preact/hooks'
import type { EndpointWithSecret, Settings } from '../api/types'
import { ErrorNotice, FieldError } from '../ui/error-notice'
import { Heading } from '../ui/heading'
import { usePortal } from '../ui/portal-context'
import { useAction } from '../ui/use-action'
import { useFieldProblems } from '../ui/use-field-problems'
import { EventPicker } from './event-picker'

/** The form's fields, as the API names them, with the labels its messages go after. */
const FIELDS = { url: 'The URL', description: 'The description', events: 'Events' } as const
type Field = keyof typeof FIELDS

interface CreateEndpointFormProps {
  eventTypes: string[]
  onCreated: (created: EndpointWithSecret) => void
  onCancel: () => void
}

export function CreateEndpointForm({ eventTypes, onCreated, onCancel }: CreateEndpointFormProps) {
  const { client, settings } = usePortal()
  const httpAllowed = settings?.webhooks.http_allowed === true
  const action = useAction()
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [events, setEvents] = useState<string[]>([])
  const form = useRef<HTMLFormElement>(null)
  const { problem, errorId, describedBy, accept } = useFieldProblems<Field>(action.error, FIELDS, 'endpoint')

  async function submit(event: Event) {
    event.preventDefault()
    if (action.pending) return
    const found: Partial<Record<Field, string>> = {}
    if (!/^https?:\/\/\S+$/i.test(url.trim())) found.url = `Enter the full address, starting with ${httpAllowed ? 'https:// or http://' : 'https://'}`
    else if (!httpAllowed && settings !== undefined && /^http:/i.test(url.trim())) found.url = 'Use an https:// address: this server sends webhooks over https only.'
    if (events.length === 0) found.events = 'Choose at least one event type, or all events.'
    if (!accept(found)) {
      action.clear()
      form.current?.querySelector<HTMLElement>(found.url === undefined ? '[data-testid="event-all"]' : '#endpoint-url')?.focus()
      return
    }
    const body = { url: url.trim(), events, description: description.trim() === '' ? null : description.trim() }
    const created = await action.run(() => client.send<EndpointWithSecret>('POST', '/webhooks/endpoints', body))
    if (created !== undefined) onCreated(created)
  }

  return (
    <form class="card form" ref={form} onSubmit={submit} noValidate aria-labelledby="create-endpoint-title" data-testid="create-endpoint-form">
      <Heading depth={2} class="form-title" id="create-endpoint-title">
        New webhook endpoint
      </Heading>
      <div class="field">
        <label class="label" for="endpoint-url">
          Endpoint URL
        </label>
        <input
          id="endpoint-url"
          class="input"
          type="url"
          inputMode="url"
          maxLength={2048}
          placeholder="https://example.com/webhooks/workforce"
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
          aria-invalid={problem('url') !== undefined}
          aria-describedby={describedBy('endpoint-url-hint', 'url')}
          autocomplete="off"
          spellcheck={false}
          data-testid="endpoint-url"
        />
        <p class="hint" id="endpoint-url-hint" data-testid="endpoint-url-hint">
          We send a signed POST request here for each event. <UrlRule settings={settings} />
        </p>
        <FieldError id="endpoint-url-error" message={problem('url')} />
      </div>
      <div class="field">
        <label class="label" for="endpoint-description">
          Description <span class="optional">(optional)</span>
        </label>
        <input
          id="endpoint-description"
          class="input"
          type="text"
          maxLength={500}
          value={description}
          onInput={(event) => setDescription(event.currentTarget.value)}
          aria-invalid={problem('description') !== undefined}
          aria-describedby={describedBy('endpoint-description-hint', 'description')}
          data-testid="endpoint-description"
        />
        <p class="hint" id="endpoint-description-hint">
          For your team, e.g. which system receives the events.
        </p>
        <FieldError id="endpoint-description-error" message={problem('description')} />
      </div>
      <EventPicker types={eventTypes} value={events} onChange={setEvents} errorId={errorId('events')} />
      <FieldError id="endpoint-events-error" message={problem('events')} />
      <ErrorNotice error={action.error} shownFields={FIELDS} testId="create-endpoint-error" />
      <div class="actions">
        <button type="submit" class="button button-primary" aria-disabled={action.pending} data-testid="submit-endpoint">
          {action.pending ? 'Adding…' : 'Add endpoint'}
        </button>
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

/** What the server accepts (`GET /settings`): https to public addresses, unless the host allows more. */
function UrlRule({ settings }: { settings: Settings | undefined }) {
  if (settings === undefined) return null
  const { http_allowed: http, private_addresses_allowed: private_ } = settings.webhooks
  if (http && private_) return <>It may be https:// or http://, and may be on a private or local network: this server allows that for development.</>
  if (http) return <>It may be https:// or http://.</>
  if (private_) return <>It must start with https://; private and local network addresses are allowed.</>
  return <>It must start with https:// and be reachable from the internet (private and local network addresses are refused).</>
}
