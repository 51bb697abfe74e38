import { describe, expect, it } from 'vitest'
import { CONTRACT, EVENT_TYPES } from '../../src/api/index.js'
import { EventSubscriptionError, subscribes } from '../../src/events/event-types.js'

const normaliseSubscriptions = (events: readonly string[]) => CONTRACT.normaliseSubscriptions(events)

/** Spec section 6's event table, written out from the spec (not from our code). */
const SPEC_EVENTS = [
  'users.created', 'users.updated', 'users.deleted',
  'projects.created', 'projects.updated', 'projects.deleted',
  'shifts.created', 'shifts.updated', 'shifts.deleted',
  'employees.created', 'employees.updated', 'employees.deleted',
  'absences.created', 'absences.updated', 'absences.deleted',
  'expenses.created', 'expenses.updated', 'expenses.deleted',
  'todos.created', 'todos.updated', 'todos.deleted',
  'company.updated',
]

describe('webhook event types and subscriptions', () => {
  it('are exactly the 22 types of spec section 6 (none for roles)', () => {
    expect([...EVENT_TYPES].sort()).toEqual([...SPEC_EVENTS].sort())
    expect(EVENT_TYPES.some((type) => type.startsWith('roles.'))).toBe(false)
  })

  it('normalises subscriptions: known types de-duplicated in catalogue order, or * alone', () => {
    expect(normaliseSubscriptions(['todos.updated', 'users.created', 'todos.updated'])).toEqual(['users.created', 'todos.updated'])
    expect(normaliseSubscriptions(['users.created', '*'])).toEqual(['*'])
  })

  it('refuses unknown types, naming each, and an empty list', () => {
    expect(() => normaliseSubscriptions(['users.created', 'roles.updated', 'todo.created'])).toThrow(EventSubscriptionError)
    const refusal = (() => {
      try {
        normaliseSubscriptions(['roles.updated', 'todo.created', 'roles.updated'])
        return undefined
      } catch (error) {
        return error as EventSubscriptionError
      }
    })()
    expect(refusal?.unknown).toEqual(['roles.updated', 'todo.created'])
    expect(refusal?.message).toContain('unknown event types: roles.updated, todo.created')
    expect(() => normaliseSubscriptions([])).toThrow(/at least one event type/)
  })

  it('an endpoint receives what it subscribed to, and * receives everything', () => {
    expect(subscribes(['todos.updated'], 'todos.updated')).toBe(true)
    expect(subscribes(['todos.updated'], 'todos.created')).toBe(false)
    for (const type of EVENT_TYPES) expect(subscribes(['*'], type)).toBe(true)
  })
})
