import type { ScopeGroup } from '../api/types'

/** What `POST /keys` takes for every scope of the catalogue at creation time (docs/api.md, section 2). */
export const ALL_SCOPES = 'all'

interface ScopePickerProps {
  groups: ScopeGroup[]
  value: readonly string[]
  onChange: (scopes: string[]) => void
  /** The id of the field's error message, when there is one. */
  errorId: string | undefined
}

/** Scopes grouped by platform module, with "all scopes" above them (which then greys them out). */
export function ScopePicker({ groups, value, onChange, errorId }: ScopePickerProps) {
  const all = value.includes(ALL_SCOPES)
  const toggle = (scope: string, on: boolean) => onChange(on ? [...value, scope] : value.filter((chosen) => chosen !== scope))

  return (
    <fieldset class={`fieldset${errorId === undefined ? '' : ' fieldset-invalid'}`} aria-describedby={errorId}>
      <legend class="label">Scopes</legend>
      <label class="check check-strong">
        <input type="checkbox" checked={all} onChange={(event) => onChange(event.currentTarget.checked ? [ALL_SCOPES] : [])} data-testid="scope-all" />
        <span>
          All scopes
          <span class="hint">Every scope that exists now. Scopes added in later releases are not included.</span>
        </span>
      </label>
      <div class="scope-groups">
        {groups.map((group) => (
          <fieldset class="scope-group" key={group.module} disabled={all}>
            <legend>
              <span class="module-name">{group.module}</span>
              {!group.enabled && <span class="hint"> (off for this company: requests with these scopes are refused until it is switched on)</span>}
            </legend>
            {group.scopes.map(({ scope, description }) => (
              <label class="check" key={scope}>
                <input
                  type="checkbox"
                  checked={all || value.includes(scope)}
                  onChange={(event) => toggle(scope, event.currentTarget.checked)}
                  data-testid={`scope-${scope}`}
                />
                <span>
                  <code>{scope}</code>
                  <span class="hint">{description}</span>
                </span>
              </label>
            ))}
          </fieldset>
        ))}
      </div>
    </fieldset>
  )
}
