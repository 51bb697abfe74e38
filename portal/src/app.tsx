import { useCallback, useMemo, useRef, useState } from 'preact/hooks'
import { createAdminClient } from './api/admin-client'
import type { Session, Settings } from './api/types'
import { AuditScreen } from './audit/audit-screen'
import { DeliveriesScreen } from './deliveries/deliveries-screen'
import { KeysScreen } from './keys/keys-screen'
import { ConfirmDialog } from './ui/confirm-dialog'
import { Heading } from './ui/heading'
import { PortalContext, type ConfirmRequest, type Portal } from './ui/portal-context'
import { Tabs, type Tab } from './ui/tabs'
import { useResource } from './ui/use-resource'
import { UsageScreen } from './usage/usage-screen'
import { WebhooksScreen } from './webhooks/webhooks-screen'

type TabId = 'keys' | 'webhooks' | 'deliveries' | 'audit' | 'usage'

const TABS: ReadonlyArray<Tab<TabId>> = [
  { id: 'keys', label: 'API keys' },
  { id: 'webhooks', label: 'Webhooks' },
  { id: 'deliveries', label: 'Delivery log' },
  { id: 'audit', label: 'Audit trail' },
  { id: 'usage', label: 'Usage' },
]

export interface AppProps {
  apiBase: string
  headers: Record<string, string>
  headingLevel: number
  /** Tells the host page (an event on the element), which may send the user to its sign-in. */
  onSignedOut: () => void
}

export function App({ apiBase, headers, headingLevel, onSignedOut }: AppProps) {
  const [signedOut, setSignedOut] = useState(false)
  const client = useMemo(
    () =>
      createAdminClient({
        base: apiBase,
        headers,
        onSignedOut: () => {
          setSignedOut(true)
          onSignedOut()
        },
      }),
    [apiBase, headers],
  )
  const session = useResource(() => client.get<Session>('/session'), [client])
  const settings = useResource(() => client.get<Settings>('/settings'), [client])
  const [tab, setTab] = useState<TabId>('keys')
  const [endpointId, setEndpointId] = useState<string | null>(null)
  const [status, setStatus] = useState('')
  const [pending, setPending] = useState<{ request: ConfirmRequest; resolve: (confirmed: boolean) => void } | null>(null)
  const statusTimer = useRef<number | undefined>(undefined)

  const announce = useCallback((message: string) => {
    // Emptied first, so that the same message twice in a row is read twice.
    setStatus('')
    window.clearTimeout(statusTimer.current)
    statusTimer.current = window.setTimeout(() => setStatus(message), 50)
  }, [])

  const portal = useMemo<Portal>(
    () => ({
      client,
      announce,
      confirm: (request) => new Promise<boolean>((resolve) => setPending({ request, resolve })),
      showDeliveries: (id) => {
        setEndpointId(id)
        setTab('deliveries')
      },
      headingLevel,
      settings: settings.data,
    }),
    [client, announce, headingLevel, settings.data],
  )

  return (
    <PortalContext.Provider value={portal}>
      <div class="portal">
        <header class="portal-head">
          <Heading depth={0} class="portal-title">
            API and webhooks
          </Heading>
          {session.data !== undefined && !signedOut && (
            <p class="muted" data-testid="session">
              Signed in as <span class="strong">{session.data.actor.name}</span>
            </p>
          )}
        </header>
        <p class="status" role="status" aria-live="polite" aria-atomic="true" data-testid="status">
          {status}
        </p>
        {signedOut ? (
          <div class="card signed-out" data-testid="signed-out">
            <Heading depth={1} class="signed-out-title">
              You are signed out
            </Heading>
            <p>Your session has ended, so these settings cannot be shown or changed. Sign in again, then reload this page.</p>
            <div class="actions">
              <button type="button" class="button button-primary" onClick={() => location.reload()} data-testid="reload">
                Reload
              </button>
            </div>
          </div>
        ) : (
          <Tabs
            label="Integration settings"
            tabs={TABS}
            selected={tab}
            onSelect={(next) => {
              setStatus('')
              setTab(next)
            }}
          >
            {tab === 'keys' && <KeysScreen />}
            {tab === 'webhooks' && <WebhooksScreen />}
            {tab === 'deliveries' && <DeliveriesScreen endpointId={endpointId} onEndpointChange={setEndpointId} />}
            {tab === 'audit' && <AuditScreen />}
            {tab === 'usage' && <UsageScreen />}
          </Tabs>
        )}
        <ConfirmDialog
          request={pending?.request ?? null}
          onAnswer={(confirmed) => {
            pending?.resolve(confirmed)
            setPending(null)
          }}
        />
      </div>
    </PortalContext.Provider>
  )
}
