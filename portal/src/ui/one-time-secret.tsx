import { useEffect, useRef } from 'preact/hooks'
import { Heading } from './heading'
import { usePortal } from './portal-context'

interface OneTimeSecretProps {
  title: string
  /** What the secret is, e.g. "API key"; also the input's label. */
  label: string
  value: string
  /** Why and where to store it; the warning that it is never shown again is always added. */
  hint: string
  valueTestId: string
  copyTestId: string
  onDone: () => void
}

/**
 * A secret the server returns once (a new key's plaintext, an endpoint's signing secret).
 * Focus moves here when it appears, so keyboard and screen-reader users meet it first.
 */
export function OneTimeSecret({ title, label, value, hint, valueTestId, copyTestId, onDone }: OneTimeSecretProps) {
  const { announce } = usePortal()
  const panel = useRef<HTMLElement>(null)
  const input = useRef<HTMLInputElement>(null)

  useEffect(() => {
    panel.current?.focus()
  }, [value])

  async function copy() {
    try {
      await navigator.clipboard.writeText(value)
      announce(`${label} copied to the clipboard.`)
    } catch {
      // No clipboard API (plain HTTP) or no permission: select the text for Ctrl+C instead.
      input.current?.select()
      announce(`Could not copy automatically. The ${label.toLowerCase()} is selected: press Ctrl+C or ⌘C to copy it.`)
    }
  }

  return (
    <section class="secret" ref={panel} tabIndex={-1} aria-labelledby="secret-title" data-testid="one-time-secret">
      <Heading depth={2} class="secret-title" id="secret-title">
        {title}
      </Heading>
      <p class="secret-warning">
        <strong>This is the only time it is shown.</strong> {hint}
      </p>
      <label class="label" for="secret-value">
        {label}
      </label>
      <div class="secret-row">
        <input
          id="secret-value"
          ref={input}
          class="input mono"
          type="text"
          readOnly
          value={value}
          spellcheck={false}
          autocomplete="off"
          onFocus={(event) => event.currentTarget.select()}
          data-testid={valueTestId}
        />
        <button type="button" class="button button-primary" onClick={copy} data-testid={copyTestId}>
          Copy
        </button>
      </div>
      <div class="actions">
        <button type="button" class="button" onClick={onDone} data-testid="dismiss-secret">
          I have stored it
        </button>
      </div>
    </section>
  )
}
