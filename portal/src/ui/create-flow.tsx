import type { ComponentChildren } from 'preact'
import { useRef, useState } from 'preact/hooks'
import { ErrorNotice } from './error-notice'
import type { Resource } from './use-resource'

interface CreateButtonProps {
  label: string
  testId: string
  onClick: () => void
}

/** A screen's primary "create" action. */
export function CreateButton({ label, testId, onClick }: CreateButtonProps) {
  return (
    <button type="button" class="button button-primary" onClick={onClick} data-testid={testId}>
      {label}
    </button>
  )
}

interface CreateFormSlotProps<T> {
  /** What the form needs first (scopes, event types). */
  options: Pick<Resource<T | undefined>, 'data' | 'error'>
  /** The line shown (and announced) while they load. */
  loading: string
  children: (options: T) => ComponentChildren
}

/** A create form once its options have loaded; their error, or an announced loading line, until then. */
export function CreateFormSlot<T>({ options, loading, children }: CreateFormSlotProps<T>) {
  if (options.data !== undefined) return <>{children(options.data)}</>
  if (options.error !== undefined) return <ErrorNotice error={options.error} />
  return (
    <p class="muted" role="status">
      {loading}
    </p>
  )
}

/** A secret shown once (a key's plaintext, a signing secret), with what to say about it. */
export interface Revealed {
  title: string
  value: string
  hint: string
  /** What the secret belongs to (a key id, an endpoint id): put away when that is revoked, disabled or deleted. */
  subject: string
}

/** A screen's create form and the secret it (or a rotation) shows once. */
export function useCreateFlow() {
  const [creating, setCreating] = useState(false)
  const [revealed, setRevealed] = useState<Revealed | null>(null)
  // What is shown now, for `forget` after an await: a render's `revealed` may be stale by then.
  const shown = useRef<Revealed | null>(null)
  const show = (next: Revealed | null) => {
    shown.current = next
    setRevealed(next)
  }
  return {
    creating,
    revealed,
    /** Opens the form; a secret still shown is put away first. */
    start: () => {
      show(null)
      setCreating(true)
    },
    close: () => setCreating(false),
    reveal: (next: Revealed) => show(next),
    dismiss: () => show(null),
    /** Puts the secret away if it is `subject`'s, which can no longer use it: true if it was shown. */
    forget: (subject: string): boolean => {
      if (shown.current?.subject !== subject) return false
      show(null)
      return true
    },
  }
}
