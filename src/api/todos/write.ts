import type { Static } from '@sinclair/typebox'
import { NotFoundError, ValidationError, type ErrorDetail } from '../../errors.js'
import type { TodoRecord, TodoStatus } from '../../ports/records.js'
import type { TodoFields, WriteTransaction } from '../../ports/write-storage.js'
import { isCalendarDay, parseInstant } from '../../time/calendar.js'
import type { RouteSpec, WriteContext } from '../route-spec.js'
import type { IdParams } from '../wire.js'
import { recordChange, writeRoute, type WriteScope } from '../write-routes.js'
import { CreateTodoBody, PatchTodoBody, renderTodo, Todo } from './schema.js'

/**
 * To-do status transitions (spec 3.1 leaves them open; docs/decisions.md records them).
 * Finished states (done, cancelled) only reopen to `open`.
 */
export const TODO_TRANSITIONS: Readonly<Record<TodoStatus, readonly TodoStatus[]>> = {
  waiting: ['open', 'in_progress', 'done', 'cancelled'],
  open: ['waiting', 'in_progress', 'done', 'cancelled'],
  in_progress: ['waiting', 'open', 'done', 'cancelled'],
  done: ['open'],
  cancelled: ['open'],
}

type DueFields = Pick<TodoFields, 'due_day' | 'due_at' | 'due_is_all_day'>

/** Reads `due_date` as a day or an instant, per `due_is_all_day`; records a detail if it is neither. */
function parseDue(dueDate: string | null, allDay: boolean, details: ErrorDetail[]): DueFields {
  if (dueDate === null) return { due_day: null, due_at: null, due_is_all_day: allDay }
  if (allDay) {
    if (isCalendarDay(dueDate)) return { due_day: dueDate, due_at: null, due_is_all_day: true }
    details.push({ field: 'due_date', message: 'must be an existing calendar day (YYYY-MM-DD) when due_is_all_day is true' })
  } else {
    const instant = parseInstant(dueDate)
    if (instant !== null) return { due_day: null, due_at: instant, due_is_all_day: false }
    details.push({ field: 'due_date', message: 'must be an ISO 8601 timestamp with Z or an offset when due_is_all_day is false' })
  }
  return { due_day: null, due_at: null, due_is_all_day: allDay }
}

/** Checks that every referenced id belongs to this company; records one detail per foreign id. */
async function checkReferences(
  tx: WriteTransaction,
  companyId: number,
  refs: { list_id?: number; assigned_to?: number; assignee_group_id?: number },
  details: ErrorDetail[],
): Promise<void> {
  if (refs.list_id !== undefined && !(await tx.todoListExists(companyId, refs.list_id))) {
    details.push({ field: 'list_id', message: 'is not a to-do list of this company' })
  }
  if (refs.assigned_to !== undefined && (await tx.getUser(companyId, refs.assigned_to)) === null) {
    details.push({ field: 'assigned_to', message: 'is not a member of this company' })
  }
  if (refs.assignee_group_id !== undefined && (await tx.existingRoleIds(companyId, [refs.assignee_group_id])).length === 0) {
    details.push({ field: 'assignee_group_id', message: 'is not a role of this company' })
  }
}

/** Creates a to-do in one of the company's lists, assigned to a member and/or offered to a role. */
export async function createTodo(scope: WriteScope, input: Static<typeof CreateTodoBody>): Promise<TodoRecord> {
  const { tx, companyId, now } = scope
  const details: ErrorDetail[] = []
  if (input.assigned_to === undefined && input.assignee_group_id === undefined) {
    details.push({ field: 'assigned_to', message: 'assigned_to or assignee_group_id is required' })
  }
  const due = parseDue(input.due_date ?? null, input.due_is_all_day ?? false, details)
  await checkReferences(tx, companyId, input, details)
  if (details.length > 0) throw new ValidationError(details)
  const todo = await tx.insertTodo(
    companyId,
    {
      title: input.title,
      notes: input.notes ?? null,
      status: 'open',
      priority: input.priority ?? 'normal',
      important: input.important ?? false,
      list_id: input.list_id,
      assigned_to: input.assigned_to ?? null,
      assignee_group_id: input.assignee_group_id ?? null,
      ...due,
    },
    now,
  )
  await recordChange(scope, 'todos.created', todo)
  return todo
}

/**
 * Writes only the fields provided. A patch that changes nothing is not a write: no new
 * `updated_at`, no event. Changing `due_is_all_day` while a due date is kept needs a new
 * `due_date` (a day cannot be turned into an instant, or back, without one).
 */
export async function updateTodo(scope: WriteScope, id: number, patch: Static<typeof PatchTodoBody>): Promise<TodoRecord> {
  const { tx, companyId, now } = scope
  const current = await tx.getTodoForUpdate(companyId, id)
  if (current === null) throw new NotFoundError('Resource not found')
  const details: ErrorDetail[] = []
  const changes: Partial<TodoFields> = {}
  for (const field of ['title', 'notes', 'priority', 'important', 'list_id', 'assigned_to', 'assignee_group_id'] as const) {
    if (patch[field] !== undefined) Object.assign(changes, { [field]: patch[field] })
  }
  if (patch.status !== undefined && patch.status !== current.status) {
    if (TODO_TRANSITIONS[current.status].includes(patch.status)) changes.status = patch.status
    else details.push({ field: 'status', message: `cannot change from ${current.status} to ${patch.status}; allowed: ${TODO_TRANSITIONS[current.status].join(', ')}` })
  }
  const allDay = patch.due_is_all_day ?? current.due_is_all_day
  if (patch.due_date !== undefined) {
    Object.assign(changes, parseDue(patch.due_date, allDay, details))
  } else if (allDay !== current.due_is_all_day) {
    if (current.due_day !== null || current.due_at !== null) {
      details.push({ field: 'due_date', message: 'is required when due_is_all_day changes on a to-do that has a due date' })
    }
    changes.due_is_all_day = allDay
  }
  await checkReferences(tx, companyId, patch, details)
  if (details.length > 0) throw new ValidationError(details)

  const effective = Object.entries(changes).filter(([key, value]) => !sameValue(current[key as keyof TodoFields], value))
  if (effective.length === 0) return current
  const updated = await tx.updateTodo(companyId, id, Object.fromEntries(effective), now)
  await recordChange(scope, 'todos.updated', updated, current)
  return updated
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime()
  return a === b
}

/** `POST /v1/todos` and `PATCH /v1/todos/:id`. */
export function todoWriteRoutes(context: WriteContext): RouteSpec[] {
  return [
    writeRoute(context, {
      method: 'POST',
      url: '/v1/todos',
      operationId: 'createTodo',
      summary: 'Create a to-do',
      tag: 'todos',
      scope: 'todos:write',
      body: CreateTodoBody,
      status: 201,
      item: Todo,
      async run(request, scope) {
        const todo = await createTodo(scope, request.body as Static<typeof CreateTodoBody>)
        return { body: { data: renderTodo(todo) }, headers: { location: context.locationOf(`/v1/todos/${todo.id}`) } }
      },
    }),
    writeRoute(context, {
      method: 'PATCH',
      url: '/v1/todos/:id',
      operationId: 'updateTodo',
      summary: 'Change some fields of a to-do',
      tag: 'todos',
      scope: 'todos:write',
      byId: true,
      body: PatchTodoBody,
      status: 200,
      item: Todo,
      async run(request, scope) {
        const { id } = request.params as Static<typeof IdParams>
        return { body: { data: renderTodo(await updateTodo(scope, id, request.body as Static<typeof PatchTodoBody>)) } }
      },
    }),
  ]
}
