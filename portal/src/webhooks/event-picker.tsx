/** What `POST /webhooks/endpoints` takes for every event type, present and future. */
export const ALL_EVENTS = '*'

interface EventPickerProps {
  types: string[]
  value: readonly string[]
  onChange: (events: string[]) => void
  errorId: string | undefined
}

/** `users.created` → resource `users`: the types grouped by what they are about. */
function byResource(types: readonly string[]): Array<[string, string[]]> {
  const groups = new Map<string, string[]>()
  for (const type of types) {
    const resource = type.slice(0, type.indexOf('.'))
    groups.set(resource, [...(groups.get(resource) ?? []), type])
  }
  return [...groups]
}

export function EventPicker({ types, value, onChange, errorId }: EventPickerProps) {
  const all = value.includes(ALL_EVENTS)
  const toggle = (type: string, on: boolean) => onChange(on ? [...value, type] : value.filter((chosen) => chosen !== type))

  return (
    <fieldset class={`fieldset${errorId === undefined ? '' : ' fieldset-invalid'}`} aria-describedby={errorId}>
      <legend class="label">Events</legend>
      <label class="check check-strong">
        <input type="checkbox" checked={all} onChange={(event) => onChange(event.currentTarget.checked ? [ALL_EVENTS] : [])} data-testid="event-all" />
        <span>
          All events
          <span class="hint">Every event type, including types added in later releases.</span>
        </span>
      </label>
      <div class="scope-groups">
        {byResource(types).map(([resource, group]) => (
          <fieldset class="scope-group" key={resource} disabled={all}>
            <legend>
              <span class="module-name">{resource}</span>
            </legend>
            {group.map((type) => (
              <label class="check" key={type}>
                <input type="checkbox" checked={all || value.includes(type)} onChange={(event) => toggle(type, event.currentTarget.checked)} data-testid={`event-${type}`} />
                <code>{type}</code>
              </label>
            ))}
          </fieldset>
        ))}
      </div>
    </fieldset>
  )
}
