import { Type } from '@sinclair/typebox'
import { Day, Id, Nullable, StringEnum, Timestamp, timestamp } from './wire.js'
import type { ExpenseFilter } from '../ports/storage.js'
import { EXPENSE_CATEGORIES, type ExpenseRecord } from '../ports/records.js'
import { formatCents } from '../money.js'
import { defineResource, exactKeys, EVENT_ACTIONS } from './resource.js'
import { DAY_RANGE, dayRange, UPDATED_SINCE, updatedSince } from './filters.js'

/** A project expense. Pricing internals, km and per-diem detail and attachments are never exposed. */
export const Expense = Type.Object({
  id: Id,
  employee_id: Id,
  project_id: Nullable(Id),
  category: StringEnum(EXPENSE_CATEGORIES),
  description: Type.String(),
  date: Day,
  /** Exact decimal string with two fractional digits, e.g. `"12.30"` (spec 2.3). */
  amount: Type.String({ pattern: '^-?\\d+\\.\\d{2}$' }),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  created_at: Timestamp,
  updated_at: Timestamp,
})

const filters = {
  employee_id: Type.Optional(Id),
  project_id: Type.Optional(Id),
  category: Type.Optional(StringEnum(EXPENSE_CATEGORIES)),
  ...DAY_RANGE,
  ...UPDATED_SINCE,
}

export function renderExpense(expense: ExpenseRecord) {
  return {
    id: expense.id,
    employee_id: expense.employee_id,
    project_id: expense.project_id,
    category: expense.category,
    description: expense.description,
    date: expense.date,
    amount: formatCents(expense.amount_cents),
    currency: expense.currency,
    created_at: timestamp(expense.created_at),
    updated_at: timestamp(expense.updated_at),
  }
}

export const expenses = defineResource({
  name: 'expenses',
  singular: 'expense',
  component: 'Expense',
  module: 'projects',
  scope: 'expenses:read',
  item: Expense,
  render: renderExpense,
  list: {
    filters,
    reader: (storage) => storage.expenses,
    toFilter: (query) => ({
      employeeId: query.employee_id,
      projectId: query.project_id,
      category: query.category,
      ...dayRange(query),
      updatedSince: updatedSince(query.updated_since),
    }),
  },
  events: { actions: EVENT_ACTIONS, position: 6 },
  conformance: {
    recordKeys: exactKeys<ExpenseRecord>()([
      'id', 'employee_id', 'project_id', 'category', 'description', 'date', 'amount_cents', 'currency', 'created_at', 'updated_at',
    ]),
    filterKeys: exactKeys<ExpenseFilter>()(['employeeId', 'projectId', 'category', 'dateFrom', 'dateTo', 'updatedSince']),
    fieldKinds: {
      instants: ['created_at', 'updated_at'],
      days: ['date'],
      integers: ['id', 'employee_id', 'project_id', 'amount_cents'],
      booleans: [],
      structures: [],
      texts: ['category', 'description', 'currency'],
      fractions: [],
    },
  },
  docs: {
    description: 'Expenses employees submitted, with exact decimal amounts.',
    fields: {
      date: 'The day of the expense, as entered, in every time zone.',
      amount: 'Exact decimal with two fractional digits, as a string (`"12.30"`): never a float.',
      currency: 'ISO 4217 currency code.',
    },
    parameters: { category: 'Only expenses in this category.' },
    list: 'An expense date is the day entered, in every time zone.',
    examples: (seed) => ({
      listExpenses: { method: 'GET', path: '/v1/expenses', query: { per_page: 2 } },
      getExpense: { method: 'GET', path: `/v1/expenses/${seed.first(seed.data.expenses).id}` },
    }),
  },
})
