import { WorkforceRefusal } from '../errors.js'
import type { Clock } from '../ports/clock.js'
import type { WebhookStore } from '../ports/webhook-store.js'
import type { AnyEventInput } from '../api/catalogue.js'
import type { EventInput, EventType } from '../api/index.js'
import type { EventRenderer } from '../api/route-spec.js'

/** Why `events.publish` refused: the plugin has no webhook store (`unavailable`), or the input is wrong (`invalid_input`). */
export class EventPublishError extends WorkforceRefusal<'unavailable' | 'invalid_input'> {
  constructor(message: string, reason: 'unavailable' | 'invalid_input') {
    super(message, reason)
    this.name = 'EventPublishError'
  }
}

/**
 * `app.workforceApi.events`: how a host announces changes it makes in its own screens
 * (employees, projects, shifts, absences, expenses, the company, and users or to-dos changed
 * outside the API), inside its own transaction, so the event commits or rolls back with the change.
 *
 * @example
 * await db.transaction().execute(async (trx) => {
 *   const before = await loadShift(trx, shiftId)
 *   const shift = await moveShift(trx, shiftId, newStart)
 *   // `previous` is optional: with it, the payload lists what changed (`previous_attributes`).
 *   await app.workforceApi.events.publish(trx, { type: 'shifts.updated', companyId, record: shift, previous: before })
 * })
 */
export class EventPublisher {
  constructor(
    private readonly store: WebhookStore | undefined,
    private readonly clock: Clock,
    /** The plugin's resource catalogue: the contract's event types and those of a host's own resources. */
    private readonly events: EventRenderer,
  ) {}

  /**
   * Renders each event's `data` from `record` exactly as the resource's GET does (for a
   * `*.deleted` event, pass the record as it was before the deletion; for an `*.updated` event,
   * pass the record before the change as `previous` to add `previous_attributes`) and records the events in
   * `transaction`: a Kysely transaction for the SQL adapters, the `WriteTransaction` of
   * `writes.transaction()` for the memory adapter.
   * An event of a host's own resource (the `resources` option) is typed as `AnyEventInput`.
   * @returns the new events' ids (`evt_…`), in order
   */
  async publish<T extends EventType>(transaction: unknown, input: EventInput<T> | ReadonlyArray<EventInput<T>>): Promise<string[]>
  async publish(transaction: unknown, input: AnyEventInput | ReadonlyArray<AnyEventInput>): Promise<string[]>
  async publish(transaction: unknown, input: AnyEventInput | ReadonlyArray<AnyEventInput>): Promise<string[]> {
    if (this.store === undefined) throw new EventPublishError('Publishing events needs a webhook store (the "webhooks" port)', 'unavailable')
    if (transaction === null || typeof transaction !== 'object') throw new EventPublishError('publish needs the transaction of the change', 'invalid_input')
    const now = new Date(this.clock.now())
    const inputs: ReadonlyArray<AnyEventInput> = Array.isArray(input) ? input : [input as AnyEventInput]
    let events
    try {
      events = inputs.map((one) => this.events.renderEvent(one, now))
    } catch (error) {
      throw new EventPublishError((error as Error).message, 'invalid_input')
    }
    await this.store.publish(transaction, events)
    return events.map((event) => event.id)
  }
}
