import { absences } from './absences.js'
import { ResourceCatalogue } from './catalogue.js'
import { company } from './company.js'
import { employees } from './employees.js'
import { expenses } from './expenses.js'
import { projects } from './projects.js'
import { roles } from './roles.js'
import type { ApiContext, RouteSpec } from './route-spec.js'
import { shifts } from './shifts.js'
import { todos } from './todos/index.js'
import { users } from './users/index.js'

/**
 * The contract's resources, in the order of spec 4.1: the one list. Routes, scopes, events,
 * the reference document and the conformance suite's resources are derived from it (and from
 * a host's own declarations, `ResourceCatalogue`). A new resource is a declaration added here.
 */
export const CONTRACT_RESOURCES = [users, employees, roles, company, projects, shifts, absences, expenses, todos] as const

/** The contract's catalogue: what the CLI, the docs and a plugin without `resources` of its own serve. */
export const CONTRACT = new ResourceCatalogue(CONTRACT_RESOURCES)

type ContractDeclaration = (typeof CONTRACT_RESOURCES)[number]

/** A scope of the contract (spec 5): `users:read`, `todos:write`, … A host's resources add scopes of their own (strings). */
export type Scope = ContractDeclaration extends { scope: infer S extends string } ? S : never

type EventTypeOf<D> = D extends { name: infer N extends string; events?: infer V } ? (NonNullable<V> extends { actions: readonly (infer E extends string)[] } ? `${N}.${E}` : never) : never

/** An event type of the contract (spec 6): `todos.created`, `company.updated`, …; roles have none. */
export type EventType = EventTypeOf<ContractDeclaration>

/** The stored record an event of type `T` renders: `UserRecord` for `users.*`, and so on. */
export type EventRecord<T extends EventType> = Parameters<Extract<ContractDeclaration, { name: T extends `${infer N}.${string}` ? N : never }>['render']>[0]

/** What a host publishes: the event type, the company, and the resource as stored after the change (before it, for `*.deleted`). */
export interface EventInput<T extends EventType = EventType> {
  type: T
  companyId: number
  record: EventRecord<T>
  /**
   * For an `*.updated` event: the resource as stored before the change. The payload then
   * carries `previous_attributes`, the fields that changed with their values before.
   */
  previous?: EventRecord<T>
}

/** The contract's event types (spec 6), in catalogue order: created, updated and deleted for seven resources, and `company.updated`. */
export const EVENT_TYPES = CONTRACT.eventTypes as readonly EventType[]

/** Every route of the contract for `context` (write routes only when writes are configured). */
export function apiRoutes(context: ApiContext): RouteSpec[] {
  return CONTRACT.routes(context)
}
