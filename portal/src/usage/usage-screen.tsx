import type { Key, List, Usage } from '../api/types'
import { keyLabel } from '../keys/keys-screen'
import { ErrorNotice } from '../ui/error-notice'
import { usePortal } from '../ui/portal-context'
import { ScreenHead } from '../ui/screen-head'
import { TableWrap } from '../ui/table-wrap'
import { Time } from '../ui/time'
import { useResource } from '../ui/use-resource'
import { USAGE_DAYS, summarizeUsage, type KeyUsage } from './usage-summary'

const DAY_MS = 86_400_000
const DAY_LABEL = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short' })
const COUNT = new Intl.NumberFormat()

export function UsageScreen() {
  const { client } = usePortal()
  const usage = useResource(() => Promise.all([client.get<Usage>('/usage'), client.get<List<Key>>('/keys')]), [client])

  const [answer, keys] = usage.data ?? []
  const rows = answer === undefined ? [] : summarizeUsage(answer.data, answer.since)
  const names = new Map(keys?.data.map((key) => [key.key_id, keyLabel(key)]))
  const busiestDay = Math.max(1, ...rows.flatMap((row) => row.daily))
  const days = answer === undefined ? [] : Array.from({ length: USAGE_DAYS }, (_, day) => DAY_LABEL.format(new Date(Date.parse(answer.since) + day * DAY_MS)))

  return (
    <section aria-labelledby="usage-title">
      <ScreenHead
        id="usage-title"
        title="Usage"
        description={
          <>
            Requests per API key over the last {USAGE_DAYS} days
            {answer !== undefined && (
              <>
                {' '}
                (since <Time value={answer.since} />)
              </>
            )}
            .
          </>
        }
      >
        <button type="button" class="button button-small" onClick={usage.reload} data-testid="refresh-usage">
          Refresh
        </button>
      </ScreenHead>
      <ErrorNotice error={usage.error} />
      {usage.data === undefined ? (
        usage.loading && <p class="muted">Loading usage…</p>
      ) : rows.length === 0 ? (
        <p class="empty">No requests in the last {USAGE_DAYS} days.</p>
      ) : (
        <TableWrap labelledBy="usage-title">
          <table class="table" aria-labelledby="usage-title">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Per day</th>
                <th scope="col" class="number">
                  Requests
                </th>
                <th scope="col" class="number">
                  304
                </th>
                <th scope="col" class="number">
                  4xx
                </th>
                <th scope="col" class="number">
                  5xx
                </th>
                <th scope="col" class="number">
                  429
                </th>
                <th scope="col">Last 429</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.key_id} data-testid={`usage-row-${row.key_id}`}>
                  <th scope="row">
                    <span class="strong">{names.get(row.key_id) ?? 'Deleted key'}</span>
                    <span class="mono hint">{row.key_id}</span>
                  </th>
                  <td>
                    <DailyBars row={row} days={days} busiestDay={busiestDay} />
                  </td>
                  <td class="number">{COUNT.format(row.requests)}</td>
                  <td class="number">{COUNT.format(row.not_modified)}</td>
                  <td class="number">{COUNT.format(row.client_errors)}</td>
                  <td class={`number${row.server_errors > 0 ? ' text-danger' : ''}`}>{COUNT.format(row.server_errors)}</td>
                  <td class="number">{COUNT.format(row.rate_limited)}</td>
                  <td>
                    <Time value={row.last_rate_limited_at} empty="Never" />
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

/** Seven bars on one scale for every key; read out as the numbers they draw. */
function DailyBars({ row, days, busiestDay }: { row: KeyUsage; days: string[]; busiestDay: number }) {
  const spoken = row.daily.map((count, day) => `${days[day]}: ${COUNT.format(count)}`).join(', ')
  return (
    <span class="bars" role="img" aria-label={`Requests per day: ${spoken}`}>
      {row.daily.map((count, day) => (
        <span class="bar" key={day} title={`${days[day]}: ${COUNT.format(count)} requests`} style={{ height: `${Math.max(count === 0 ? 0 : 6, (count / busiestDay) * 100)}%` }} />
      ))}
    </span>
  )
}
