import { param } from '../prepared.js'
import { companyRows, dayOrNull, eq, nullableDay, STAMPS, timestamps, updatedSince, type FixtureTable, type ResourceTable } from './table.js'

/** A company's to-do lists: what a to-do's `list_id` refers to. */
const lists: FixtureTable<'todoLists'> = {
  dataset: 'todoLists',
  table: 'wfa_todo_lists',
  columns: ['id', 'company_id', 'name'],
  values: (_c, r) => [r.id, r.company_id, r.name],
}

const rows: FixtureTable<'todos'> = {
  dataset: 'todos',
  table: 'wfa_todos',
  columns: [
    'id',
    'company_id',
    'title',
    'notes',
    'status',
    'priority',
    'important',
    'due_day',
    'due_at',
    'due_is_all_day',
    'list_id',
    'assigned_to',
    'assignee_group_id',
    'claimed_by',
    'checklist',
    'tag_ids',
    'source',
    ...STAMPS,
  ],
  values: (c, r) => [
    r.id,
    r.company_id,
    r.title,
    r.notes,
    r.status,
    r.priority,
    c.bool(r.important),
    dayOrNull(c, r.due_day),
    r.due_at === null ? null : c.instant(r.due_at),
    c.bool(r.due_is_all_day),
    r.list_id,
    r.assigned_to,
    r.assignee_group_id,
    r.claimed_by,
    c.json(r.checklist),
    c.json(r.tag_ids),
    r.source === null ? null : c.json(r.source),
    c.instant(r.created_at),
    c.instant(r.updated_at),
  ],
}

export const todos: ResourceTable<'todos'> = {
  name: 'todos',
  ...companyRows<'todos'>(rows, 't', {
    select: (q) =>
      q.select([
        't.id',
        't.title',
        't.notes',
        't.status',
        't.priority',
        't.important',
        't.due_day',
        't.due_at',
        't.due_is_all_day',
        't.list_id',
        't.assigned_to',
        't.assignee_group_id',
        't.claimed_by',
        't.checklist',
        't.tag_ids',
        't.source',
        't.created_at',
        't.updated_at',
      ]),
    filters: {
      status: eq('t.status', 'status'),
      assignedTo: eq('t.assigned_to', 'assigned_to'),
      listId: eq('t.list_id', 'list_id'),
      important: {
        where: (q) => q.where('t.important', '=', param('important')),
        bind: (value, codec) => ({ important: codec.bool(value) }),
      },
      // All-day to-dos match on their day, timed ones on their instant; a row has only one set.
      dueFrom: {
        range: true,
        where: (q) =>
          q.where((eb) => eb.or([eb('t.due_day', '>=', param('due_from_day')), eb('t.due_at', '>=', param('due_from_at'))])),
        bind: (value, codec) => ({ due_from_day: codec.day(value.day), due_from_at: codec.instant(value.instant) }),
      },
      dueTo: {
        range: true,
        where: (q) =>
          q.where((eb) => eb.or([eb('t.due_day', '<=', param('due_to_day')), eb('t.due_at', '<', param('due_to_at'))])),
        bind: (value, codec) => ({ due_to_day: codec.day(value.day), due_to_at: codec.instant(value.instant) }),
      },
      updatedSince: updatedSince('t.updated_at'),
    },
    decode: (row, codec) => ({
      id: row.id,
      title: row.title,
      notes: row.notes,
      status: row.status,
      priority: row.priority,
      important: codec.readBool(row.important),
      due_day: nullableDay(row.due_day, codec),
      due_at: row.due_at === null ? null : codec.readInstant(row.due_at),
      due_is_all_day: codec.readBool(row.due_is_all_day),
      list_id: row.list_id,
      assigned_to: row.assigned_to,
      assignee_group_id: row.assignee_group_id,
      claimed_by: row.claimed_by,
      checklist: codec.readJson(row.checklist),
      tag_ids: codec.readJson(row.tag_ids),
      source: row.source === null ? null : codec.readJson(row.source),
      ...timestamps(row, codec),
    }),
  }),
  // Its lists too: a to-do's `list_id` refers to one.
  tables: [lists, rows],
}
