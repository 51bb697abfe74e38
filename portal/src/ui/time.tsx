const THIS_YEAR = { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' } as const
const DATE_TIME = new Intl.DateTimeFormat(undefined, { ...THIS_YEAR, year: 'numeric' })
const DATE_TIME_THIS_YEAR = new Intl.DateTimeFormat(undefined, THIS_YEAR)

/** An instant in the reader's locale and zone, without the year when it is this year's (tables stay narrow). */
export function formatDateTime(iso: string): string {
  const date = new Date(iso)
  return (date.getFullYear() === new Date().getFullYear() ? DATE_TIME_THIS_YEAR : DATE_TIME).format(date)
}

/** An instant for people; the exact UTC value on hover and for machines. */
export function Time({ value, empty = '—' }: { value: string | null; empty?: string }) {
  if (value === null) return <span class="muted">{empty}</span>
  return (
    <time dateTime={value} title={value}>
      {formatDateTime(value)}
    </time>
  )
}
