import { companyRows, dayFrom, dayTo, eq, STAMPS, timestamps, updatedSince, type FixtureTable, type ResourceTable } from './table.js'

const rows: FixtureTable<'absences'> = {
  dataset: 'absences',
  table: 'wfa_absences',
  columns: ['id', 'company_id', 'employee_id', 'date', 'type', 'hours', 'status', 'reason', ...STAMPS],
  values: (c, r) => [
    r.id,
    r.company_id,
    r.employee_id,
    c.day(r.date),
    r.type,
    r.hours,
    r.status,
    r.reason,
    c.instant(r.created_at),
    c.instant(r.updated_at),
  ],
}

export const absences: ResourceTable<'absences'> = {
  name: 'absences',
  ...companyRows<'absences'>(rows, 'a', {
    select: (q) => q.select(['a.id', 'a.employee_id', 'a.date', 'a.type', 'a.hours', 'a.status', 'a.created_at', 'a.updated_at']),
    filters: {
      employeeId: eq('a.employee_id', 'employee_id'),
      status: eq('a.status', 'status'),
      dateFrom: dayFrom('a.date'),
      dateTo: dayTo('a.date'),
      updatedSince: updatedSince('a.updated_at'),
    },
    decode: (row, codec) => ({
      id: row.id,
      employee_id: row.employee_id,
      date: codec.readDay(row.date),
      type: row.type,
      hours: row.hours,
      status: row.status,
      ...timestamps(row, codec),
    }),
  }),
}
