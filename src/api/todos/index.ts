import type { TodoFilter } from '../../ports/storage.js'
import type { TodoRecord } from '../../ports/records.js'
import { changeDocs, createDocs, defineResource, exactKeys, EVENT_ACTIONS } from '../resource.js'
import { todosList } from './read.js'
import { renderTodo, Todo } from './schema.js'
import { todoWriteRoutes } from './write.js'

/** To-dos: read, created and updated (spec 2.2, 4.1). */
export const todos = defineResource({
  name: 'todos',
  singular: 'to-do',
  plural: 'to-dos',
  component: 'Todo',
  module: 'todo',
  scope: 'todos:read',
  item: Todo,
  render: renderTodo,
  list: todosList,
  write: { scope: 'todos:write', routes: todoWriteRoutes },
  events: { actions: EVENT_ACTIONS, position: 7 },
  conformance: {
    recordKeys: exactKeys<TodoRecord>()([
      'id', 'title', 'notes', 'status', 'priority', 'important', 'due_day', 'due_at', 'due_is_all_day', 'list_id',
      'assigned_to', 'assignee_group_id', 'claimed_by', 'checklist', 'tag_ids', 'source', 'created_at', 'updated_at',
    ]),
    filterKeys: exactKeys<TodoFilter>()(['status', 'assignedTo', 'listId', 'important', 'dueFrom', 'dueTo', 'updatedSince']),
    fieldKinds: {
      instants: ['due_at', 'created_at', 'updated_at'],
      days: ['due_day'],
      integers: ['id', 'list_id', 'assigned_to', 'assignee_group_id', 'claimed_by'],
      booleans: ['important', 'due_is_all_day'],
      structures: ['checklist', 'tag_ids', 'source'],
      texts: ['title', 'notes', 'status', 'priority'],
      fractions: [],
    },
  },
  docs: {
    description: "To-dos in your company's lists: read, create and change them.",
    fields: {
      notes: 'Free text; `null` when empty.',
      due_date:
        'A day (`YYYY-MM-DD`) when `due_is_all_day`, otherwise an instant (UTC); `null` when not due. A timed to-do counts on the company-calendar day of its instant.',
      due_is_all_day: 'Whether `due_date` is a whole day rather than an instant.',
      list_id: "The company's to-do list holding it.",
      assigned_to: 'The user it is assigned to.',
      assignee_group_id: 'The role it is offered to; anyone holding the role may claim it.',
      claimed_by: 'The user who claimed a to-do offered to a role.',
      checklist: 'Sub-items, in order.',
      tag_ids: 'Ids of its tags.',
      source: 'What created it, when it came from another record (`{type, id}`).',
    },
    parameters: {
      due_from: "First due day, inclusive. A to-do due at a time counts on your company's calendar day.",
      due_to: 'Last due day, inclusive.',
      assigned_to: 'Only to-dos assigned to this user.',
      list_id: 'Only to-dos in this list.',
      important: 'Only to-dos flagged important (`true`) or not (`false`).',
    },
    operations: {
      createTodo: createDocs(
        'Creates a to-do in one of your lists, assigned to a member of your company (`assigned_to`) and/or offered to a role (`assignee_group_id`). Send an `Idempotency-Key` with `Authorization: Bearer`: a retry without one can create a second to-do.',
        'The new to-do',
      ),
      updateTodo: changeDocs('Writes only the fields you send; `null` clears `notes` or `due_date`. At least one field.', 'The to-do after the change.'),
    },
    examples: (seed) => {
      const todo = seed.first(seed.data.todos)
      return {
        listTodos: { method: 'GET', path: '/v1/todos', query: { per_page: 2, status: todo.status } },
        getTodo: { method: 'GET', path: `/v1/todos/${todo.id}` },
        createTodo: {
          method: 'POST',
          path: '/v1/todos',
          body: {
            title: 'Renew the forklift certificate',
            list_id: seed.first(seed.data.todoLists).id,
            assigned_to: seed.member().user_id,
            notes: 'The certificate expires at the end of the month.',
            priority: 'high',
            important: true,
            due_date: '2026-10-30',
            due_is_all_day: true,
          },
        },
        updateTodo: { method: 'PATCH', path: `/v1/todos/${todo.id}`, body: { status: 'done' } },
      }
    },
  },
})
