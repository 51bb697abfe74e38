import type { ComponentChildren } from 'preact'
import { usePortal } from './portal-context'

interface HeadingProps {
  /** 0 for the portal's title, 1 for a screen's, 2 for a part of a screen. */
  depth: 0 | 1 | 2
  id?: string
  class?: string
  children: ComponentChildren
}

/** A heading that fits the host page's outline: the host picks the portal's level (`heading-level`). */
export function Heading({ depth, id, class: className, children }: HeadingProps) {
  const level = Math.min(6, usePortal().headingLevel + depth)
  const Tag = `h${level}` as 'h2'
  return (
    <Tag id={id} class={className}>
      {children}
    </Tag>
  )
}
