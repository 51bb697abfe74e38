import { useEffect, useRef } from 'preact/hooks'
import type { ConfirmRequest } from './portal-context'

interface ConfirmDialogProps {
  request: ConfirmRequest | null
  onAnswer: (confirmed: boolean) => void
}

/**
 * The one confirmation dialog: a native modal `<dialog>`, which keeps focus inside, closes on
 * Escape and gives focus back to the button that opened it. Cancel has focus first, so an
 * accidental Enter does not revoke or delete anything.
 */
export function ConfirmDialog({ request, onAnswer }: ConfirmDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null)
  const cancel = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    const element = dialog.current
    if (element === null) return
    if (request !== null && !element.open) {
      element.returnValue = ''
      element.showModal()
      cancel.current?.focus()
    } else if (request === null && element.open) {
      element.close()
    }
  }, [request])

  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-body"
      // Escape, or any other way the dialog closes without the confirm button.
      onClose={() => onAnswer(dialog.current?.returnValue === 'confirm')}
      data-testid="confirm-dialog"
    >
      {request !== null && (
        <form method="dialog">
          <h2 class="dialog-title" id="confirm-title">
            {request.title}
          </h2>
          <p id="confirm-body">{request.body}</p>
          <div class="actions actions-end">
            <button ref={cancel} type="submit" value="cancel" class="button" data-testid="cancel">
              Cancel
            </button>
            <button type="submit" value="confirm" class={`button ${request.danger === true ? 'button-danger' : 'button-primary'}`} data-testid="confirm">
              {request.action}
            </button>
          </div>
        </form>
      )}
    </dialog>
  )
}
