import type { ScopeGroup } from '../api/types'
import { ALL_SCOPES } from './scope-picker'

/** Up to this many scopes are shown as chips; more are summarised on one line. */
const SHOWN_CHIPS = 3

/** `users:read` → `read`: what a scope lets a key do, whatever the resource. */
function accessOf(scope: string): string {
  const at = scope.lastIndexOf(':')
  return at === -1 ? scope : scope.slice(at + 1)
}

/**
 * One line for many scopes, by access: "read: all · write: 3" (all: every scope of the catalogue
 * with that access). Without the catalogue, the count alone.
 */
export function summariseScopes(scopes: readonly string[], catalogue: readonly string[] | undefined): string {
  if (catalogue === undefined || catalogue.length === 0) return `${scopes.length} scopes`
  if (catalogue.every((scope) => scopes.includes(scope))) return 'All scopes'
  const granted = new Map<string, number>()
  for (const scope of scopes) granted.set(accessOf(scope), (granted.get(accessOf(scope)) ?? 0) + 1)
  const offered = new Map<string, number>()
  for (const scope of catalogue) offered.set(accessOf(scope), (offered.get(accessOf(scope)) ?? 0) + 1)
  return [...granted]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([access, count]) => `${access}: ${count === offered.get(access) ? 'all' : count}`)
    .join(' · ')
}

interface ScopeSummaryProps {
  scopes: readonly string[]
  /** `GET /scopes`, once loaded: tells "every scope" from "many scopes". */
  groups: readonly ScopeGroup[] | undefined
}

/**
 * A key's scopes in one row: a few as chips; more (or every scope) as one summary chip that
 * opens the full list. A key made with "all scopes" holds each scope of its day by name.
 */
export function ScopeSummary({ scopes, groups }: ScopeSummaryProps) {
  if (scopes.includes(ALL_SCOPES)) return <span class="chip chip-summary">All scopes</span>
  const catalogue = groups?.flatMap((group) => group.scopes.map(({ scope }) => scope))
  const every = catalogue !== undefined && catalogue.length > 0 && catalogue.every((scope) => scopes.includes(scope))
  const chips = (
    <ul class="chips" aria-label={`${scopes.length} scopes`}>
      {scopes.map((scope) => (
        <li class="chip" key={scope}>
          {scope}
        </li>
      ))}
    </ul>
  )
  if (!every && scopes.length <= SHOWN_CHIPS) return chips
  return (
    <details class="scope-summary" data-testid="scope-summary">
      <summary title={scopes.join(', ')}>
        <span class="chip chip-summary">{summariseScopes(scopes, catalogue)}</span>
        <span class="sr-only"> ({scopes.length} scopes): show the list</span>
      </summary>
      {chips}
    </details>
  )
}
