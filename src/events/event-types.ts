// src/events/ holds what the producers of events (the resources' write routes, a host's
// `events.publish`) and their delivery (src/webhooks) share: the names and the ids. It imports
// nothing of the plugin, so both sides may import it (test/architecture/import-boundaries.test.ts).

/**
 * The 22 event types of spec section 6: created, updated and deleted for seven resources, and
 * `company.updated`. Roles have none. An endpoint subscribes to some of them, or to `*`.
 */
export const EVENT_RESOURCES = ['users', 'projects', 'shifts', 'employees', 'absences', 'expenses', 'todos'] as const
export const EVENT_TYPES = [...EVENT_RESOURCES.flatMap((resource) => [`${resource}.created`, `${resource}.updated`, `${resource}.deleted`] as const), 'company.updated'] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** Every event type, present and future. */
export const ALL_EVENTS = '*'

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value)
}

/** An endpoint's subscriptions, as given by a host or the CLI, refused with the unknown types named. */
export class EventSubscriptionError extends Error {
  constructor(readonly unknown: readonly string[]) {
    super(unknown.length === 0 ? 'subscribe to at least one event type, or *' : `unknown event types: ${unknown.join(', ')}; expected ${ALL_EVENTS} or: ${EVENT_TYPES.join(', ')}`)
    this.name = 'EventSubscriptionError'
  }
}

/**
 * Validates and normalises subscriptions: `*` alone stands for everything; otherwise known
 * types, de-duplicated, in catalogue order.
 */
export function normaliseSubscriptions(events: readonly string[]): EventType[] | [typeof ALL_EVENTS] {
  if (events.length === 0) throw new EventSubscriptionError([])
  if (events.includes(ALL_EVENTS)) return [ALL_EVENTS]
  const unknown = events.filter((event) => !isEventType(event))
  if (unknown.length > 0) throw new EventSubscriptionError([...new Set(unknown)])
  return EVENT_TYPES.filter((type) => events.includes(type))
}

/** Whether an endpoint with `subscriptions` receives `type`. */
export function subscribes(subscriptions: readonly string[], type: EventType): boolean {
  return subscriptions.includes(ALL_EVENTS) || subscriptions.includes(type)
}
