import type { ComponentChildren } from 'preact'

interface TableWrapProps {
  /** The id of the heading that names the table (and so this scrolling region). */
  labelledBy: string
  children: ComponentChildren
}

/**
 * A table's own scrolling box: on a narrow screen the table scrolls sideways inside it (with a
 * shadow at the edge that hides more), never the page. It is a focusable region, so keyboard
 * users can scroll it too (a table without buttons has nothing else to focus).
 */
export function TableWrap({ labelledBy, children }: TableWrapProps) {
  return (
    <div class="table-wrap" role="region" aria-labelledby={labelledBy} tabIndex={0}>
      {children}
    </div>
  )
}
