import { useRef, useState } from 'preact/hooks'
import type { EndpointWithSecret } from '../api/types'
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
  const { client } = usePortal()
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
    if (!/^https?:\/\/\S+$/i.test(url.trim())) found.url = 'Enter the full address, starting with https://'
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
        <p class="hint" id="endpoint-url-hint">
          We send a signed POST request here for each event.
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
