import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { ChangeEvent } from '../../ports/write-storage.js'
import type { ConformanceGroup } from '../group.js'
import { changeEvent } from '../webhook-facts.js'
import { WRITE_NOW } from '../write-facts.js'
import { DeliberateRollback, outcomeOf } from '../write-outcomes.js'
import { typed } from './value-fidelity.js'

/** Events with the runtime type of every field, so an int8 string or an ISO string never passes. */
function typedEvents(events: readonly ChangeEvent[]): string[] {
  return events.map(
    (event) =>
      `id ${typed(event.id)}, company_id ${typed(event.company_id)}, type ${typed(event.type)}, resource_id ${typed(event.resource_id)}, ` +
      `occurred_at ${typed(event.occurred_at)}, payload ${typed(event.payload)}`,
  )
}

/**
 * `WriteTransaction.recordEvent`: a change event commits with its transaction or not at all.
 * The port cannot read events back, so this group reads them through the subject's
 * `readEvents()` hook (declare `supports: { events: false }` to leave it out).
 */
export const changeEvents: ConformanceGroup = {
  title: 'change events',
  requires: ['writes', 'events'],
  define(ctx) {
    it('events recorded in committed transactions are kept exactly, in the order recorded', async () => {
      const before = await ctx.readEvents()
      const recorded: ChangeEvent[] = [
        changeEvent('kept 1', 1, 'todos.created', ctx.edges.unicodeTodo, 0),
        changeEvent('kept 2', 2, 'users.updated', 4_294_967_297, 1),
        changeEvent('kept 3', 1, 'todos.updated', ctx.edges.unicodeTodo, -1_000),
      ]
      const [first, second, third] = recorded as [ChangeEvent, ChangeEvent, ChangeEvent]
      await ctx.writes().transaction(async (tx) => {
        await tx.recordEvent(first)
        await tx.recordEvent(second)
      })
      await ctx.writes().transaction((tx) => tx.recordEvent(third))
      const after = await ctx.readEvents()
      expect(after, 'readEvents() after two committed transactions').toEqual([...before, ...recorded])
      expect(typedEvents(after.slice(before.length)), 'the new events, with their runtime types').toEqual(typedEvents(recorded))
    })

    it('an event recorded in a transaction that rolls back is not kept, nor is its write', async () => {
      const before = await ctx.readEvents()
      const id = ctx.edges.unicodeTodo
      const original = await ctx.storage().todos.get(1, id)
      const outcome = await outcomeOf(
        ctx.writes().transaction(async (tx) => {
          await tx.updateTodo(1, id, { title: 'Never committed' }, WRITE_NOW)
          await tx.recordEvent(changeEvent('rolled back', 1, 'todos.updated', id))
          throw new DeliberateRollback()
        }),
      )
      expect(outcome, 'the transaction: updateTodo, recordEvent, then a throw').toBe('DeliberateRollback')
      expect(await ctx.readEvents(), 'readEvents() after the rollback').toEqual(before)
      expect(await ctx.storage().todos.get(1, id), `todos.get(1, ${id}) after the rollback`).toEqual(original)

      const kept = changeEvent('kept after the rollback', 1, 'todos.updated', id, 1_000)
      await ctx.writes().transaction((tx) => tx.recordEvent(kept))
      expect(await ctx.readEvents(), 'readEvents() after a committed transaction that follows').toEqual([...before, kept])
    })
  },
}
