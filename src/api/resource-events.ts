import type { TSchema } from '@sinclair/typebox'
import fastJsonStringify from 'fast-json-stringify'
import { newEventId } from '../events/event-id.js'
import { isEventType, type EventType } from '../events/event-types.js'
import type { ChangeEvent } from '../ports/write-storage.js'
import { Absence, renderAbsence } from './absences.js'
import { Company, renderCompany } from './company.js'
import { Employee, renderEmployee } from './employees.js'
import { Expense, renderExpense } from './expenses.js'
import { Project, renderProject } from './projects.js'
import { renderShift, Shift } from './shifts.js'
import { renderTodo, Todo } from './todos/schema.js'
import { renderUser, User } from './users/schema.js'
import { timestamp } from './wire.js'

// What an event is for a resource lives with the resources: the write routes record their
// events here without knowing how they are delivered, and src/webhooks (the publisher, the
// delivery) imports this file, never the other way (test/architecture/import-boundaries.test.ts).

/**
 * Each resource's wire schema and renderer: the same pair its GET uses, so an event's `data`
 * is the resource exactly as GET returns it (spec 6.4).
 */
const RESOURCE_RENDERERS = {
  users: { schema: User, render: renderUser },
  projects: { schema: Project, render: renderProject },
  shifts: { schema: Shift, render: renderShift },
  employees: { schema: Employee, render: renderEmployee },
  absences: { schema: Absence, render: renderAbsence },
  expenses: { schema: Expense, render: renderExpense },
  todos: { schema: Todo, render: renderTodo },
  company: { schema: Company, render: renderCompany },
} as const

type Renderers = typeof RESOURCE_RENDERERS
type ResourceOf<T extends EventType> = T extends `${infer R extends keyof Renderers}.${string}` ? R : never

/** The stored record an event of type `T` renders: `UserRecord` for `users.*`, and so on. */
export type EventRecord<T extends EventType> = Parameters<Renderers[ResourceOf<T>]['render']>[0]

/** What a host publishes: the event type, the company, and the resource as stored after the change (before it, for `*.deleted`). */
export interface EventInput<T extends EventType = EventType> {
  type: T
  companyId: number
  record: EventRecord<T>
}

/** The schema compiler Fastify uses for response bodies: the same bytes as GET. */
const serializers = new Map<string, (value: unknown) => string>()

function serializerOf(resource: keyof Renderers): (value: unknown) => string {
  let serialize = serializers.get(resource)
  if (serialize === undefined) {
    serialize = fastJsonStringify(RESOURCE_RENDERERS[resource].schema as TSchema) as (value: unknown) => string
    serializers.set(resource, serialize)
  }
  return serialize
}

/** Thrown for an event that cannot be rendered: an unknown type, or a record without an id. */
export class EventInputError extends TypeError {
  constructor(message: string) {
    super(message)
    this.name = 'EventInputError'
  }
}

/**
 * Renders an event inside the transaction of its change: the payload
 * `{"id","type","created_at","company_id","data"}`, with `data` serialized from `record` by
 * the resource's GET schema.
 */
export function renderEvent<T extends EventType>(input: EventInput<T>, now: Date): ChangeEvent {
  const { type, companyId, record } = input
  if (typeof type !== 'string' || !isEventType(type)) throw new EventInputError(`unknown event type ${JSON.stringify(type)}`)
  if (!Number.isSafeInteger(companyId) || companyId < 1) throw new EventInputError('companyId must be a positive integer')
  const resource = type.slice(0, type.indexOf('.')) as keyof Renderers
  const render = RESOURCE_RENDERERS[resource].render as (value: unknown) => { id: number }
  const rendered = render(record)
  if (!Number.isSafeInteger(rendered.id)) throw new EventInputError(`the ${resource} record of a ${type} event needs its id`)
  const id = newEventId()
  const createdAt = timestamp(now)
  const data = serializerOf(resource)(rendered)
  return {
    id,
    company_id: companyId,
    type,
    resource_id: rendered.id,
    occurred_at: now,
    payload: `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"created_at":${JSON.stringify(createdAt)},"company_id":${companyId},"data":${data}}`,
  }
}
