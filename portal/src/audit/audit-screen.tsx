import type { AuditEntry, Page } from '../api/types'
import { detailValue } from './detail-value'
import { ErrorNotice } from '../ui/error-notice'
import { usePortal } from '../ui/portal-context'
import { ScreenHead } from '../ui/screen-head'
import { TableWrap } from '../ui/table-wrap'
import { TableHead } from '../ui/table-head'
import { Time } from '../ui/time'
import { useOlderPages } from '../ui/use-older-pages'

const PAGE_SIZE = 50
const TARGET_NAMES: Record<AuditEntry['target_type'], string> = { api_key: 'API key', webhook_endpoint: 'Webhook endpoint' }

/** `webhook_endpoint.secret_rotated` → "Webhook endpoint: secret rotated". */
export function describeAction(action: string): string {
  const [subject = '', verb = ''] = action.split('.')
  const words = (text: string) => text.replaceAll('_', ' ')
  const subjectText = words(subject)
  return `${subjectText.charAt(0).toUpperCase()}${subjectText.slice(1)}: ${words(verb)}`
}

export function AuditScreen() {
  const { client } = usePortal()
  const pages = useOlderPages(
    (before: string | undefined) => client.get<Page<AuditEntry>>('/audit', { limit: PAGE_SIZE, before }),
    (entry) => entry.id,
    [client],
  )

  return (
    <section aria-labelledby="audit-title">
      <ScreenHead id="audit-title" title="Audit trail" description="Who changed this company’s keys and webhooks, newest first.">
        <button type="button" class="button button-small" onClick={pages.reload} data-testid="refresh-audit">
          Refresh
        </button>
      </ScreenHead>
      {pages.items.length === 0 && !pages.loading && pages.error === undefined ? (
        <p class="empty">No changes recorded yet.</p>
      ) : (
        <TableWrap labelledBy="audit-title">
          <table class="table" aria-labelledby="audit-title" aria-busy={pages.loading}>
            <TableHead columns={['When', 'Who', 'Action', 'Target', 'IP address', 'Details']} />
            <tbody>
              {pages.items.map((entry) => (
                <tr key={entry.id} data-testid="audit-row">
                  <td>
                    <Time value={entry.at} />
                  </td>
                  <td>
                    {entry.actor.name}
                    <span class="hint">{entry.actor.id}</span>
                  </td>
                  <td>
                    {describeAction(entry.action)}
                    <span class="mono hint">{entry.action}</span>
                  </td>
                  <td>
                    {TARGET_NAMES[entry.target_type] ?? entry.target_type}
                    <span class="mono hint">{entry.target_id}</span>
                  </td>
                  <td class="mono">{entry.ip ?? '—'}</td>
                  <td>
                    {Object.keys(entry.details).length === 0 ? (
                      <span class="muted">—</span>
                    ) : (
                      <dl class="details-list">
                        {Object.entries(entry.details).map(([name, value]) => (
                          <div key={name}>
                            <dt>{name.replaceAll('_', ' ')}</dt>
                            <dd>{detailValue(name, value)}</dd>
                          </div>
                        ))}
                      </dl>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <ErrorNotice error={pages.error} />
      {pages.loading && <p class="muted">Loading the audit trail…</p>}
      {pages.hasMore && !pages.loading && (
        <button type="button" class="button" onClick={pages.loadOlder} data-testid="load-older-audit">
          Load older entries
        </button>
      )}
    </section>
  )
}
