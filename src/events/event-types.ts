// src/events/ holds what the producers of events (the resources' write routes, a host's
// `events.publish`) and their delivery (src/webhooks) share: the names and the ids. It imports
// nothing of the plugin, so both sides may import it (test/architecture/import-boundaries.test.ts).
// The event types themselves are derived from the resource declarations (`ResourceCatalogue`).

/** Every event type, present and future. An endpoint subscribes to some types, or to `*`. */
export const ALL_EVENTS = '*'

/** An endpoint's subscriptions, as given by a host or the CLI, refused with the unknown types named. */
export class EventSubscriptionError extends Error {
  constructor(
    readonly unknown: readonly string[],
    known: readonly string[],
  ) {
    super(unknown.length === 0 ? 'subscribe to at least one event type, or *' : `unknown event types: ${unknown.join(', ')}; expected ${ALL_EVENTS} or: ${known.join(', ')}`)
    this.name = 'EventSubscriptionError'
  }
}

/** Whether an endpoint with `subscriptions` receives `type`. */
export function subscribes(subscriptions: readonly string[], type: string): boolean {
  return subscriptions.includes(ALL_EVENTS) || subscriptions.includes(type)
}
