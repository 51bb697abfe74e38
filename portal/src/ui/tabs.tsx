import type { ComponentChildren } from 'preact'
import { useRef } from 'preact/hooks'

export interface Tab<Id extends string> {
  id: Id
  label: string
}

interface TabsProps<Id extends string> {
  label: string
  tabs: ReadonlyArray<Tab<Id>>
  selected: Id
  onSelect: (id: Id) => void
  children: ComponentChildren
}

/**
 * The WAI-ARIA tabs pattern: one tab stop for the list, arrow keys, Home and End move between
 * tabs and select them; the panel follows and is itself focusable.
 */
export function Tabs<Id extends string>({ label, tabs, selected, onSelect, children }: TabsProps<Id>) {
  const list = useRef<HTMLDivElement>(null)

  function onKeyDown(event: KeyboardEvent) {
    const index = tabs.findIndex((tab) => tab.id === selected)
    const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[event.key]
    if (next === undefined) return
    event.preventDefault()
    const tab = tabs[(next + tabs.length) % tabs.length]!
    onSelect(tab.id)
    list.current?.querySelector<HTMLElement>(`#tab-${tab.id}`)?.focus()
  }

  return (
    <>
      <div class="tabs" role="tablist" aria-label={label} ref={list} onKeyDown={onKeyDown}>
        {tabs.map((tab) => (
          <button
            key={tab.id}
            id={`tab-${tab.id}`}
            type="button"
            role="tab"
            class="tab"
            aria-selected={tab.id === selected}
            // Only the shown panel exists.
            aria-controls={tab.id === selected ? `panel-${tab.id}` : undefined}
            tabIndex={tab.id === selected ? 0 : -1}
            onClick={() => onSelect(tab.id)}
            data-testid={`tab-${tab.id}`}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <div class="panel" role="tabpanel" id={`panel-${selected}`} aria-labelledby={`tab-${selected}`} tabIndex={0}>
        {children}
      </div>
    </>
  )
}
