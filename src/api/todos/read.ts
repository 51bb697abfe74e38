import { Type } from '@sinclair/typebox'
import { TODO_STATUSES, type TodoRecord } from '../../ports/records.js'
import type { TodoFilter } from '../../ports/storage.js'
import { companyDayWindow, UPDATED_SINCE, updatedSince } from '../filters.js'
import type { ListDeclaration } from '../resource.js'
import { Day, Id, StringEnum } from '../wire.js'

const filters = {
  status: Type.Optional(StringEnum(TODO_STATUSES)),
  assigned_to: Type.Optional(Id),
  list_id: Type.Optional(Id),
  important: Type.Optional(Type.Boolean()),
  due_from: Type.Optional(Day),
  due_to: Type.Optional(Day),
  ...UPDATED_SINCE,
}

/** How `GET /v1/todos` filters and reads. */
export const todosList: ListDeclaration<TodoRecord, TodoFilter, typeof filters> = {
  filters,
  reader: (storage) => storage.todos,
  async toFilter(query, context) {
    const filter: TodoFilter = {
      status: query.status,
      assignedTo: query.assigned_to,
      listId: query.list_id,
      important: query.important,
      updatedSince: updatedSince(query.updated_since),
    }
    // An all-day due date is the day as entered; a timed one counts on the company's
    // calendar day (spec 4.3.4: 00:30 local on the 20th is due on the 20th).
    const { start, end } = await companyDayWindow(context, 'due_from', query.due_from, 'due_to', query.due_to)
    if (query.due_from !== undefined && start !== undefined) filter.dueFrom = { day: query.due_from, instant: start }
    if (query.due_to !== undefined && end !== undefined) filter.dueTo = { day: query.due_to, instant: end }
    return filter
  },
}
