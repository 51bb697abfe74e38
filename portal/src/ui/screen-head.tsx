import type { ComponentChildren } from 'preact'
import { Heading } from './heading'

interface ScreenHeadProps {
  /** The heading's id; the screen's section and tables are labelled by it. */
  id: string
  title: string
  /** One line under the title. */
  description: ComponentChildren
  /** The screen's main action (a create or refresh button), on the right. */
  children?: ComponentChildren
}

/** A screen's title, its one-line description and its main action. */
export function ScreenHead({ id, title, description, children }: ScreenHeadProps) {
  return (
    <div class="screen-head">
      <div>
        <Heading depth={1} id={id}>
          {title}
        </Heading>
        <p class="muted">{description}</p>
      </div>
      {children}
    </div>
  )
}
