import { Type } from '@sinclair/typebox'
import { TODO_PRIORITIES, TODO_STATUSES, type TodoRecord } from '../../ports/records.js'
import { Id, Nullable, StringEnum, Timestamp, timestamp } from '../wire.js'

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

export const MAX_TITLE_LENGTH = 500
export const MAX_NOTES_LENGTH = 10_000

const Title = Type.String({ minLength: 1, maxLength: MAX_TITLE_LENGTH, pattern: '\\S' })
const Notes = Nullable(Type.String({ maxLength: MAX_NOTES_LENGTH }))
/** A day (all-day) or an instant (timed); which one is checked against `due_is_all_day`. */
const DueDate = Nullable(Type.String({ maxLength: 64 }))

export const CreateTodoBody = Type.Object(
  {
    title: Title,
    list_id: Id,
    assigned_to: Type.Optional(Id),
    assignee_group_id: Type.Optional(Id),
    notes: Type.Optional(Notes),
    priority: Type.Optional(StringEnum(TODO_PRIORITIES)),
    important: Type.Optional(Type.Boolean()),
    due_date: Type.Optional(DueDate),
    due_is_all_day: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

/** Every field optional, at least one; `null` only for `notes` and `due_date` (spec 4.1 rules 2–3). */
export const PatchTodoBody = Type.Object(
  {
    title: Type.Optional(Title),
    notes: Type.Optional(Notes),
    status: Type.Optional(StringEnum(TODO_STATUSES)),
    priority: Type.Optional(StringEnum(TODO_PRIORITIES)),
    important: Type.Optional(Type.Boolean()),
    due_date: Type.Optional(DueDate),
    due_is_all_day: Type.Optional(Type.Boolean()),
    list_id: Type.Optional(Id),
    assigned_to: Type.Optional(Id),
    assignee_group_id: Type.Optional(Id),
  },
  { additionalProperties: false, minProperties: 1 },
)
