import { Type } from '@sinclair/typebox'
import { Day, Id, Nullable, StringEnum, Timestamp } from '../http/schema.js'
import type { TodoFilter } from '../ports/storage.js'
import { TODO_PRIORITIES, TODO_STATUSES, type TodoRecord } from '../records.js'
import { nextDay, startOfCompanyDay } from '../time/calendar.js'
import { checkDayRange, timestamp, updatedSince, type ReadResource } from './read-routes.js'

/** Spec 2.2. Comments and attachments are never exposed. */
export const Todo = Type.Object({
  id: Id,
  title: Type.String(),
  notes: Nullable(Type.String()),
  status: StringEnum(TODO_STATUSES),
  priority: StringEnum(TODO_PRIORITIES),
  important: Type.Boolean(),
  /** A `YYYY-MM-DD` day when `due_is_all_day`, otherwise a UTC timestamp; `null` when not due. */
  due_date: Nullable(Type.String()),
  due_is_all_day: Type.Boolean(),
  list_id: Id,
  assigned_to: Nullable(Id),
  assignee_group_id: Nullable(Id),
  claimed_by: Nullable(Id),
  checklist: Type.Array(Type.Object({ id: Id, title: Type.String(), done: Type.Boolean() })),
  tag_ids: Type.Array(Id),
  source: Type.Union([Type.Object({ type: Type.String(), id: Id }), Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
})

const filters = {
  status: Type.Optional(StringEnum(TODO_STATUSES)),
  assigned_to: Type.Optional(Id),
  list_id: Type.Optional(Id),
  important: Type.Optional(Type.Boolean()),
  due_from: Type.Optional(Day),
  due_to: Type.Optional(Day),
  updated_since: Type.Optional(Timestamp),
}

export function renderTodo(todo: TodoRecord) {
  return {
    id: todo.id,
    title: todo.title,
    notes: todo.notes,
    status: todo.status,
    priority: todo.priority,
    important: todo.important,
    due_date: todo.due_is_all_day ? todo.due_day : todo.due_at === null ? null : timestamp(todo.due_at),
    due_is_all_day: todo.due_is_all_day,
    list_id: todo.list_id,
    assigned_to: todo.assigned_to,
    assignee_group_id: todo.assignee_group_id,
    claimed_by: todo.claimed_by,
    checklist: todo.checklist,
    tag_ids: todo.tag_ids,
    source: todo.source,
    created_at: timestamp(todo.created_at),
    updated_at: timestamp(todo.updated_at),
  }
}

export const todos: ReadResource<TodoRecord, TodoFilter, typeof filters, typeof Todo> = {
  name: 'todos',
  scope: 'todos:read',
  item: Todo,
  filters,
  reader: (storage) => storage.todos,
  async toFilter(query, context) {
    checkDayRange('due_from', query.due_from, 'due_to', query.due_to)
    const filter: TodoFilter = {
      status: query.status,
      assignedTo: query.assigned_to,
      listId: query.list_id,
      important: query.important,
      updatedSince: updatedSince(query.updated_since),
    }
    // An all-day due date is the day as entered; a timed one counts on the company's
    // calendar day (spec 4.3.4: 00:30 local on the 20th is due on the 20th).
    if (query.due_from !== undefined || query.due_to !== undefined) {
      const zone = await context.companyTimeZone()
      if (query.due_from !== undefined) {
        filter.dueFrom = { day: query.due_from, instant: startOfCompanyDay(query.due_from, zone) }
      }
      if (query.due_to !== undefined) {
        filter.dueTo = { day: query.due_to, instant: startOfCompanyDay(nextDay(query.due_to), zone) }
      }
    }
    return filter
  },
  render: renderTodo,
}
