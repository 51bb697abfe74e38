import { Type } from '@sinclair/typebox'
import { Id, Timestamp, timestamp } from './wire.js'
import type { RoleFilter } from '../ports/storage.js'
import type { RoleRecord } from '../ports/records.js'
import { defineResource, exactKeys } from './resource.js'

export const Role = Type.Object({
  id: Id,
  name: Type.String(),
  permissions: Type.Array(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
})

/** Spec 4.1: roles take only `page` and `per_page`. */
const filters = {}

export function renderRole(role: RoleRecord) {
  return {
    id: role.id,
    name: role.name,
    permissions: role.permissions,
    created_at: timestamp(role.created_at),
    updated_at: timestamp(role.updated_at),
  }
}

export const roles = defineResource({
  name: 'roles',
  singular: 'role',
  component: 'Role',
  module: 'core',
  scope: 'roles:read',
  item: Role,
  render: renderRole,
  list: {
    filters,
    reader: (storage) => storage.roles,
    toFilter: () => ({}),
  },
  conformance: {
    recordKeys: exactKeys<RoleRecord>()(['id', 'name', 'permissions', 'created_at', 'updated_at']),
    filterKeys: [],
    fieldKinds: {
      instants: ['created_at', 'updated_at'],
      days: [],
      integers: ['id'],
      booleans: [],
      structures: ['permissions'],
      texts: ['name'],
      fractions: [],
    },
  },
  docs: {
    description: 'Roles users hold in your company; to-dos can be offered to a role.',
    fields: { permissions: 'What holders of the role may do in the product.' },
    examples: (seed) => ({
      listRoles: { method: 'GET', path: '/v1/roles', query: { per_page: 2 } },
      getRole: { method: 'GET', path: `/v1/roles/${seed.first(seed.data.roles).id}` },
    }),
  },
})
