interface RowButtonProps {
  label: string
  /** What the button acts on, for screen readers, which would otherwise hear a column of identical "Revoke". */
  target: string
  onClick: () => void
  danger?: boolean
  testId: string
}

/** A small action button in a list row; its accessible name is "<label> <target>". */
export function RowButton({ label, target, onClick, danger = false, testId }: RowButtonProps) {
  return (
    <button type="button" class={`button button-small${danger ? ' button-danger-quiet' : ''}`} onClick={onClick} data-testid={testId}>
      {label}
      <span class="sr-only"> {target}</span>
    </button>
  )
}
