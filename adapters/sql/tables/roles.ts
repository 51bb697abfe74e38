import { companyRows, STAMPS, timestamps, type FixtureTable, type ResourceTable } from './table.js'

const rows: FixtureTable<'roles'> = {
  dataset: 'roles',
  table: 'wfa_roles',
  columns: ['id', 'company_id', 'name', 'permissions', ...STAMPS],
  values: (c, r) => [r.id, r.company_id, r.name, c.json(r.permissions), c.instant(r.created_at), c.instant(r.updated_at)],
}

export const roles: ResourceTable<'roles'> = {
  name: 'roles',
  ...companyRows<'roles'>(rows, 'r', {
    select: (q) => q.select(['r.id', 'r.name', 'r.permissions', 'r.created_at', 'r.updated_at']),
    filters: {},
    decode: (row, codec) => ({
      id: row.id,
      name: row.name,
      permissions: codec.readJson(row.permissions),
      ...timestamps(row, codec),
    }),
  }),
}
