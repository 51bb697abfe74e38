import { param } from '../prepared.js'
import { companyRows, eq, STAMPS, timestamps, updatedSince, type FixtureTable, type ResourceTable } from './table.js'

const rows: FixtureTable<'shifts'> = {
  dataset: 'shifts',
  table: 'wfa_shifts',
  columns: ['id', 'company_id', 'employee_id', 'project_id', 'status', 'starts_at', 'ends_at', 'break_minutes', 'internal_notes', ...STAMPS],
  values: (c, r) => [
    r.id,
    r.company_id,
    r.employee_id,
    r.project_id,
    r.status,
    c.instant(r.starts_at),
    c.instant(r.ends_at),
    r.break_minutes,
    r.internal_notes,
    c.instant(r.created_at),
    c.instant(r.updated_at),
  ],
}

export const shifts: ResourceTable<'shifts'> = {
  name: 'shifts',
  ...companyRows<'shifts'>(rows, 's', {
    select: (q) =>
      q.select(['s.id', 's.employee_id', 's.project_id', 's.status', 's.starts_at', 's.ends_at', 's.break_minutes', 's.created_at', 's.updated_at']),
    filters: {
      employeeId: eq('s.employee_id', 'employee_id'),
      projectId: eq('s.project_id', 'project_id'),
      status: eq('s.status', 'status'),
      startsFrom: {
        range: true,
        where: (q) => q.where('s.starts_at', '>=', param('starts_from')),
        bind: (value, codec) => ({ starts_from: codec.instant(value) }),
      },
      startsBefore: {
        range: true,
        where: (q) => q.where('s.starts_at', '<', param('starts_before')),
        bind: (value, codec) => ({ starts_before: codec.instant(value) }),
      },
      updatedSince: updatedSince('s.updated_at'),
    },
    decode: (row, codec) => ({
      id: row.id,
      employee_id: row.employee_id,
      project_id: row.project_id,
      status: row.status,
      starts_at: codec.readInstant(row.starts_at),
      ends_at: codec.readInstant(row.ends_at),
      break_minutes: row.break_minutes,
      ...timestamps(row, codec),
    }),
  }),
}
