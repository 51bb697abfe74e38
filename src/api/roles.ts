import { Type } from '@sinclair/typebox'
import { Id, Timestamp, timestamp } from './wire.js'
import type { RoleFilter } from '../ports/storage.js'
import type { RoleRecord } from '../ports/records.js'
import { readOnlyResource, type ReadResource } from './read-routes.js'

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

const readRoles: ReadResource<RoleRecord, RoleFilter, typeof filters, typeof Role> = {
  name: 'roles',
  singular: 'role',
  scope: 'roles:read',
  item: Role,
  filters,
  reader: (storage) => storage.roles,
  toFilter: () => ({}),
  render: renderRole,
}

export const roles = readOnlyResource(readRoles)
