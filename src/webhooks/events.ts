import { randomBytes } from 'node:crypto'
import type { TSchema } from '@sinclair/typebox'
import fastJsonStringify from 'fast-json-stringify'
import { Absence, renderAbsence } from '../api/absences.js'
import { Company, renderCompany } from '../api/company.js'
import { Employee, renderEmployee } from '../api/employees.js'
import { Expense, renderExpense } from '../api/expenses.js'
import { Project, renderProject } from '../api/projects.js'
import { renderShift, Shift } from '../api/shifts.js'
import { renderTodo, Todo } from '../api/todos/schema.js'
import { renderUser, User } from '../api/users/schema.js'
import { timestamp } from '../api/wire.js'
import type { ChangeEvent } from '../ports/write-storage.js'
import { isEventType, type EventType } from './event-types.js'

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

/** `prefix` + 24 lower-case base32 characters (120 random bits). */
export function randomId(prefix: string): string {
  const bytes = randomBytes(15)
  let bits = 0
  let value = 0
  let out = prefix
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  return out
}

/** A new event id, `evt_…`: the payload's `id` and every attempt's `webhook-id`. */
export const newEventId = (): string => randomId('evt_')

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
