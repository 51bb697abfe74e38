import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { AdminClient } from '../api/admin-client'
import type { Settings } from '../api/types'

export interface ConfirmRequest {
  title: string
  body: string
  /** The confirm button's text, e.g. "Revoke key". */
  action: string
  /** Red confirm button: the step cannot be undone or breaks a running integration. */
  danger?: boolean
}

/** What every screen shares: the API, the live region, the confirmation dialog, the tab switcher. */
export interface Portal {
  client: AdminClient
  /** Says `message` in the status line, which screen readers read politely. */
  announce: (message: string) => void
  /** Opens the confirmation dialog; true when the user confirmed. */
  confirm: (request: ConfirmRequest) => Promise<boolean>
  /** Opens the delivery log of one endpoint. */
  showDeliveries: (endpointId: string) => void
  /** The level of the portal's own title (`heading-level`, default 2); screens' titles are one below. */
  headingLevel: number
  /** `GET /settings` once it has loaded: what screens say about rate limits and webhook URLs. */
  settings: Settings | undefined
}

export const PortalContext = createContext<Portal | null>(null)

export function usePortal(): Portal {
  const portal = useContext(PortalContext)
  if (portal === null) throw new Error('usePortal() outside <PortalContext.Provider>')
  return portal
}
