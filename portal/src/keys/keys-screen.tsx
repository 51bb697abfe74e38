import type { CreatedKey, Key, KeyState, List, ScopeGroup } from '../api/types'
import { Badge, type Tone } from '../ui/badge'
import { CreateButton, CreateFormSlot, useCreateFlow } from '../ui/create-flow'
import { ErrorNotice } from '../ui/error-notice'
import { OneTimeSecret } from '../ui/one-time-secret'
import { RowButton } from '../ui/row-button'
import { usePortal } from '../ui/portal-context'
import { ScreenHead } from '../ui/screen-head'
import { TableWrap } from '../ui/table-wrap'
import { TableHead } from '../ui/table-head'
import { Time } from '../ui/time'
import { useAction } from '../ui/use-action'
import { useResource } from '../ui/use-resource'
import { CreateKeyForm } from './create-key-form'
import { keyLimit } from './rate-limit'
import { ScopeSummary } from './scope-summary'

const STATE_TONES: Record<KeyState, Tone> = { active: 'success', disabled: 'neutral', revoked: 'danger', expired: 'warning' }

/** A key's name for people: keys made before names were required may have none. */
export function keyLabel(key: Pick<Key, 'key_id' | 'name'>): string {
  return key.name ?? `Key ${key.key_id}`
}

export function KeysScreen() {
  const { client, announce, confirm, settings } = usePortal()
  const keys = useResource(() => client.get<List<Key>>('/keys'), [client])
  const flow = useCreateFlow()
  const { creating, revealed } = flow
  // The form's picker, and the table's summaries ("All scopes" for a key holding every scope by name).
  const scopes = useResource(() => client.get<List<ScopeGroup>>('/scopes'), [client])
  const rowAction = useAction()

  function replaceKey(next: Key) {
    keys.update((list) => ({ data: list.data.map((key) => (key.key_id === next.key_id ? next : key)) }))
  }

  function addKey(created: CreatedKey, title: string, hint: string) {
    keys.update((list) => ({ data: [...list.data, created.data] }))
    flow.reveal({ title, value: created.key, hint, subject: created.data.key_id })
  }

  /** A key that can no longer be used (revoked) or is switched off takes its one-time plaintext with it. */
  function forgetPlaintext(key: Key): string {
    return flow.forget(key.key_id) ? ' Its plaintext is no longer shown.' : ''
  }

  async function setEnabled(key: Key, enable: boolean) {
    if (rowAction.pending) return
    const answer = await rowAction.run(() => client.send<{ data: Key }>('POST', `/keys/${key.key_id}/${enable ? 'enable' : 'disable'}`))
    if (answer === undefined) return
    replaceKey(answer.data)
    const forgotten = enable ? '' : forgetPlaintext(key)
    announce(`${keyLabel(key)} ${enable ? 'enabled' : 'disabled'}.${forgotten}`)
  }

  async function revoke(key: Key) {
    if (rowAction.pending) return
    const confirmed = await confirm({
      title: `Revoke “${keyLabel(key)}”?`,
      body: 'Requests with this key are refused from now on. A revoked key cannot be enabled again.',
      action: 'Revoke key',
      danger: true,
    })
    if (!confirmed) return
    const answer = await rowAction.run(() => client.send<{ data: Key }>('POST', `/keys/${key.key_id}/revoke`))
    if (answer === undefined) return
    replaceKey(answer.data)
    announce(`${keyLabel(key)} revoked.${forgetPlaintext(key)}`)
  }

  async function rotate(key: Key) {
    if (rowAction.pending) return
    const created = await rowAction.run(() => client.send<CreatedKey>('POST', `/keys/${key.key_id}/rotate`))
    if (created === undefined) return
    addKey(created, `Rotated “${keyLabel(key)}”`, `Store the new key and switch your integration to it; the old key keeps working until you revoke it.`)
    announce(`New key created for ${keyLabel(key)}. Copy it now.`)
  }

  return (
    <section aria-labelledby="keys-title">
      <ScreenHead id="keys-title" title="API keys" description="Keys let your other systems read and change this company’s data through the public API.">
        {!creating && (
          <CreateButton
            label="Create key"
            testId="create-key"
            onClick={flow.start}
          />
        )}
      </ScreenHead>

      {revealed !== null && (
        <OneTimeSecret
          title={revealed.title}
          label="API key"
          value={revealed.value}
          hint={revealed.hint}
          valueTestId="new-key-plaintext"
          copyTestId="copy-key"
          onDone={flow.dismiss}
        />
      )}

      {creating && (
        <CreateFormSlot options={scopes} loading="Loading scopes…">
          {(groups) => (
            <CreateKeyForm
              groups={groups.data}
              onCreated={(created) => {
                flow.close()
                addKey(created, `Key “${keyLabel(created.data)}” created`, 'Store it in your secret manager now. If it is lost, rotate the key or create a new one.')
                announce(`Key ${keyLabel(created.data)} created. Copy it now: it is shown only once.`)
              }}
              onCancel={flow.close}
            />
          )}
        </CreateFormSlot>
      )}

      <ErrorNotice error={rowAction.error} testId="keys-error" />
      <ErrorNotice error={keys.error} />
      {keys.data === undefined ? (
        keys.loading && <p class="muted">Loading keys…</p>
      ) : keys.data.data.length === 0 ? (
        <p class="empty">No API keys yet. Create one to connect another system.</p>
      ) : (
        <TableWrap labelledBy="keys-title">
          <table class="table" aria-labelledby="keys-title" aria-busy={keys.loading}>
            <TableHead columns={['Name', 'Scopes', 'Rate limit', 'State', 'Expires', 'Created', 'Last used']} actions />
            <tbody>
              {keys.data.data.map((key) => (
                <tr key={key.key_id} data-testid={`key-row-${key.key_id}`}>
                  <th scope="row">
                    <span class="strong">{keyLabel(key)}</span>
                    <span class="mono hint">{key.key_id}</span>
                  </th>
                  <td class="scopes-cell" data-testid={`key-scopes-${key.key_id}`}>
                    <ScopeSummary scopes={key.scopes} groups={scopes.data?.data} />
                  </td>
                  <td data-testid={`key-limit-${key.key_id}`}>
                    <RateLimitCell rateLimit={key.rate_limit} />
                  </td>
                  <td>
                    <Badge tone={STATE_TONES[key.state]}>{key.state}</Badge>
                  </td>
                  <td>
                    <Time value={key.expires_at} empty="Never" />
                  </td>
                  <td>
                    <Time value={key.created_at} />
                  </td>
                  <td>
                    <Time value={key.last_used_at} empty="Never" />
                  </td>
                  <td class="row-actions">
                    {key.state === 'active' && (
                      <RowButton label="Disable" target={keyLabel(key)} onClick={() => setEnabled(key, false)} testId={`disable-key-${key.key_id}`} />
                    )}
                    {key.state === 'disabled' && (
                      <RowButton label="Enable" target={keyLabel(key)} onClick={() => setEnabled(key, true)} testId={`enable-key-${key.key_id}`} />
                    )}
                    {(key.state === 'active' || key.state === 'disabled') && (
                      <RowButton label="Rotate" target={keyLabel(key)} onClick={() => rotate(key)} testId={`rotate-key-${key.key_id}`} />
                    )}
                    {key.state !== 'revoked' && (
                      <RowButton label="Revoke" target={keyLabel(key)} danger onClick={() => revoke(key)} testId={`revoke-key-${key.key_id}`} />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  )
}

function RateLimitCell({ rateLimit }: { rateLimit: number | null }) {
  const { settings } = usePortal()
  const { value, note } = keyLimit(rateLimit, settings)
  return (
    <>
      <span class={rateLimit === null ? 'muted nowrap' : 'nowrap'}>{value}</span>
      {note !== undefined && <span class="hint">{note}</span>}
    </>
  )
}
