import { companyRows, dayOrNull, eq, nullableDay, STAMPS, timestamps, updatedSince, type FixtureTable, type ResourceTable } from './table.js'

const rows: FixtureTable<'projects'> = {
  dataset: 'projects',
  table: 'wfa_projects',
  columns: ['id', 'company_id', 'name', 'code', 'status', 'kind', 'customer_id', 'starts_on', 'ends_on', 'offer_number', 'internal_notes', ...STAMPS],
  values: (c, r) => [
    r.id,
    r.company_id,
    r.name,
    r.code,
    r.status,
    r.kind,
    r.customer_id,
    dayOrNull(c, r.starts_on),
    dayOrNull(c, r.ends_on),
    r.offer_number,
    r.internal_notes,
    c.instant(r.created_at),
    c.instant(r.updated_at),
  ],
}

export const projects: ResourceTable<'projects'> = {
  name: 'projects',
  ...companyRows<'projects'>(rows, 'p', {
    select: (q) =>
      q.select(['p.id', 'p.name', 'p.code', 'p.status', 'p.kind', 'p.customer_id', 'p.starts_on', 'p.ends_on', 'p.created_at', 'p.updated_at']),
    filters: {
      status: eq('p.status', 'status'),
      kind: eq('p.kind', 'kind'),
      customerId: eq('p.customer_id', 'customer_id'),
      updatedSince: updatedSince('p.updated_at'),
    },
    decode: (row, codec) => ({
      id: row.id,
      name: row.name,
      code: row.code,
      status: row.status,
      kind: row.kind,
      customer_id: row.customer_id,
      starts_on: nullableDay(row.starts_on, codec),
      ends_on: nullableDay(row.ends_on, codec),
      ...timestamps(row, codec),
    }),
  }),
}
