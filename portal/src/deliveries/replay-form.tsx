import { useState } from 'preact/hooks'
import type { Endpoint, ReplayAnswer, ReplayPeriod } from '../api/types'
import { ErrorNotice } from '../ui/error-notice'
import { usePortal } from '../ui/portal-context'
import { useAction } from '../ui/use-action'

/** What the form starts with: the last day. */
const DEFAULT_PERIOD_MS = 24 * 60 * 60 * 1000
/**
 * Calls one replay may take: the API sends at most 1,000 events a call and each call continues
 * where the last stopped, so this only bounds a period larger than anyone should replay by hand.
 */
const MAX_CALLS = 50

/** `Date` → the `YYYY-MM-DDTHH:mm` a `datetime-local` input shows, in the browser's time zone. */
function localInput(at: Date): string {
  const local = new Date(at.getTime() - at.getTimezoneOffset() * 60_000)
  return local.toISOString().slice(0, 16)
}

interface ReplayFormProps {
  endpoint: Endpoint
  onReplayed: () => void
}

/**
 * Sends the endpoint the retained events of a period it missed (disabled, or added later):
 * those it never got or that failed; delivered and pending ones are not sent twice.
 */
export function ReplayForm({ endpoint, onReplayed }: ReplayFormProps) {
  const { client, announce } = usePortal()
  const action = useAction()
  const [since, setSince] = useState(() => localInput(new Date(Date.now() - DEFAULT_PERIOD_MS)))
  // The input shows minutes: the next one, so the period covers what happened this minute.
  const [until, setUntil] = useState(() => localInput(new Date(Date.now() + 60_000)))

  async function submit(event: Event) {
    event.preventDefault()
    if (action.pending) return
    const period: ReplayPeriod = { since: new Date(since).toISOString(), until: new Date(until).toISOString() }
    const total = await action.run(async () => {
      let count = 0
      for (let call = 0; call < MAX_CALLS; call += 1) {
        const answer = await client.send<ReplayAnswer>('POST', `/webhooks/endpoints/${endpoint.id}/replay`, period)
        count += answer.count
        if (!answer.more) return { count, more: false }
      }
      return { count, more: true }
    })
    if (total === undefined) return
    const sent = total.count === 0 ? 'Nothing to send: every event of that period was delivered or is on its way.' : `${total.count} event${total.count === 1 ? '' : 's'} queued.`
    const waiting = endpoint.status === 'disabled' && total.count > 0 ? ' They are sent once the endpoint is enabled.' : ''
    const rest = total.more ? ' More remain: replay again to continue.' : ''
    announce(`${sent}${waiting}${rest}`)
    onReplayed()
  }

  const invalid = since === '' || until === '' || new Date(since).getTime() >= new Date(until).getTime()
  return (
    <form class="filters" onSubmit={submit} noValidate aria-labelledby="replay-title" data-testid="replay-form">
      <p class="label" id="replay-title">
        Replay a period
      </p>
      <div class="field">
        <label class="label" for="replay-since">
          From
        </label>
        <input id="replay-since" class="input" type="datetime-local" value={since} onInput={(event) => setSince(event.currentTarget.value)} data-testid="replay-since" />
      </div>
      <div class="field">
        <label class="label" for="replay-until">
          Until
        </label>
        <input id="replay-until" class="input" type="datetime-local" value={until} onInput={(event) => setUntil(event.currentTarget.value)} data-testid="replay-until" />
      </div>
      <div class="field">
        <button type="submit" class="button" aria-disabled={action.pending || invalid} disabled={invalid} aria-describedby="replay-hint" data-testid="replay-submit">
          {action.pending ? 'Replaying…' : 'Replay'}
        </button>
      </div>
      <p class="hint" id="replay-hint">
        Sends the events of this period the endpoint never got or that failed. Delivered ones are not sent twice.
      </p>
      <ErrorNotice error={action.error} testId="replay-error" />
    </form>
  )
}
