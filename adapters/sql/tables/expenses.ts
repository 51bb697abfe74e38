import { companyRows, dayFrom, dayTo, eq, STAMPS, timestamps, updatedSince, type FixtureTable, type ResourceTable } from './table.js'

const rows: FixtureTable<'expenses'> = {
  dataset: 'expenses',
  table: 'wfa_expenses',
  columns: ['id', 'company_id', 'employee_id', 'project_id', 'category', 'description', 'date', 'amount_cents', 'currency', 'km', ...STAMPS],
  values: (c, r) => [
    r.id,
    r.company_id,
    r.employee_id,
    r.project_id,
    r.category,
    r.description,
    c.day(r.date),
    r.amount_cents,
    r.currency,
    r.km,
    c.instant(r.created_at),
    c.instant(r.updated_at),
  ],
}

export const expenses: ResourceTable<'expenses'> = {
  name: 'expenses',
  ...companyRows<'expenses'>(rows, 'x', {
    select: (q) =>
      q.select([
        'x.id',
        'x.employee_id',
        'x.project_id',
        'x.category',
        'x.description',
        'x.date',
        'x.amount_cents',
        'x.currency',
        'x.created_at',
        'x.updated_at',
      ]),
    filters: {
      employeeId: eq('x.employee_id', 'employee_id'),
      projectId: eq('x.project_id', 'project_id'),
      category: eq('x.category', 'category'),
      dateFrom: dayFrom('x.date'),
      dateTo: dayTo('x.date'),
      updatedSince: updatedSince('x.updated_at'),
    },
    decode: (row, codec) => ({
      id: row.id,
      employee_id: row.employee_id,
      project_id: row.project_id,
      category: row.category,
      description: row.description,
      date: codec.readDay(row.date),
      amount_cents: codec.readInt(row.amount_cents),
      currency: row.currency,
      ...timestamps(row, codec),
    }),
  }),
}
