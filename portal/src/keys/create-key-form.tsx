import { useRef, useState } from 'preact/hooks'
import type { CreatedKey, ScopeGroup } from '../api/types'
import { Heading } from '../ui/heading'
import { ErrorNotice, FieldError } from '../ui/error-notice'
import { usePortal } from '../ui/portal-context'
import { useAction } from '../ui/use-action'
import { useFieldProblems } from '../ui/use-field-problems'
import { defaultLimitText, parseRateLimit, windowName } from './rate-limit'
import { ScopePicker } from './scope-picker'

/** The form's fields, as the API names them, with the labels its messages go after. */
const FIELDS = { name: 'Name', scopes: 'Scopes', expires_at: 'Expiry', rate_limit: 'Rate limit' } as const
type Field = keyof typeof FIELDS

interface CreateKeyFormProps {
  groups: ScopeGroup[]
  onCreated: (created: CreatedKey) => void
  onCancel: () => void
}

/** The end of a local calendar day, as the API's UTC instant: a key "expires on 31 Dec" lasts that whole day. */
function endOfLocalDay(date: string): string {
  return new Date(`${date}T23:59:59.999`).toISOString()
}

function today(): string {
  const now = new Date()
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`
}

export function CreateKeyForm({ groups, onCreated, onCancel }: CreateKeyFormProps) {
  const { client, settings } = usePortal()
  const action = useAction()
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<string[]>([])
  const [expires, setExpires] = useState('')
  const [rateLimit, setRateLimit] = useState('')
  const form = useRef<HTMLFormElement>(null)
  const { problem, errorId, describedBy, accept } = useFieldProblems<Field>(action.error, FIELDS, 'key')

  const windowLabel = settings?.rate_limit == null ? 'window' : windowName(settings.rate_limit.window_ms)
  const fallback = defaultLimitText(settings)
  const defaultHint =
    settings?.rate_limit === null
      ? `How many requests the key may make per window. ${fallback}`
      : `How many requests the key may make per ${windowLabel}. Leave empty for the default${fallback === undefined ? '' : `: ${fallback}`}.`

  async function submit(event: Event) {
    event.preventDefault()
    if (action.pending) return
    const limit = parseRateLimit(rateLimit)
    const found = {
      ...(name.trim() === '' ? { name: 'Give the key a name, e.g. the app or person that uses it.' } : {}),
      ...(scopes.length === 0 ? { scopes: 'Choose at least one scope, or all scopes.' } : {}),
      ...('problem' in limit ? { rate_limit: limit.problem } : {}),
    }
    if (!accept(found)) {
      action.clear()
      const first = found.name !== undefined ? '#key-name' : found.scopes !== undefined ? '[data-testid="scope-all"]' : '#key-rate-limit'
      form.current?.querySelector<HTMLElement>(first)?.focus()
      return
    }
    const body = {
      name: name.trim(),
      scopes,
      expires_at: expires === '' ? null : endOfLocalDay(expires),
      rate_limit: 'value' in limit ? limit.value : null,
    }
    const created = await action.run(() => client.send<CreatedKey>('POST', '/keys', body))
    if (created !== undefined) onCreated(created)
  }

  return (
    <form class="card form" ref={form} onSubmit={submit} noValidate aria-labelledby="create-key-title" data-testid="create-key-form">
      <Heading depth={2} class="form-title" id="create-key-title">
        New API key
      </Heading>
      <div class="field">
        <label class="label" for="key-name">
          Name
        </label>
        <input
          id="key-name"
          class="input"
          type="text"
          maxLength={100}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
          aria-invalid={problem('name') !== undefined}
          aria-describedby={describedBy('key-name-hint', 'name')}
          autocomplete="off"
          data-testid="key-name"
        />
        <p class="hint" id="key-name-hint">
          Who or what uses the key, e.g. “Payroll sync”.
        </p>
        <FieldError id="key-name-error" message={problem('name')} />
      </div>
      <ScopePicker groups={groups} value={scopes} onChange={setScopes} errorId={errorId('scopes')} />
      <FieldError id="key-scopes-error" message={problem('scopes')} />
      <div class="field">
        <label class="label" for="key-expiry">
          Expires on <span class="optional">(optional)</span>
        </label>
        <input
          id="key-expiry"
          class="input input-short"
          type="date"
          min={today()}
          value={expires}
          onInput={(event) => setExpires(event.currentTarget.value)}
          aria-invalid={problem('expires_at') !== undefined}
          aria-describedby={describedBy('key-expiry-hint', 'expires_at')}
          data-testid="key-expiry"
        />
        <p class="hint" id="key-expiry-hint">
          The key stops working at the end of that day. Leave empty for a key that does not expire.
        </p>
        <FieldError id="key-expires_at-error" message={problem('expires_at')} />
      </div>
      <div class="field">
        <label class="label" for="key-rate-limit">
          Rate limit <span class="optional">(requests per {windowLabel}, optional)</span>
        </label>
        <input
          id="key-rate-limit"
          class="input input-short"
          type="text"
          inputMode="numeric"
          pattern="[0-9]*"
          value={rateLimit}
          onInput={(event) => setRateLimit(event.currentTarget.value)}
          aria-invalid={problem('rate_limit') !== undefined}
          aria-describedby={describedBy('key-rate-limit-hint', 'rate_limit')}
          autocomplete="off"
          data-testid="key-rate-limit"
        />
        <p class="hint" id="key-rate-limit-hint">
          {defaultHint}
        </p>
        <FieldError id="key-rate_limit-error" message={problem('rate_limit')} />
      </div>
      <ErrorNotice error={action.error} shownFields={FIELDS} testId="create-key-error" />
      <div class="actions">
        <button type="submit" class="button button-primary" aria-disabled={action.pending} data-testid="submit-key">
          {action.pending ? 'Creating…' : 'Create key'}
        </button>
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
