import { Type } from '@sinclair/typebox'
import { Id, Timestamp } from '../http/schema.js'
import type { UserFilter } from '../ports/storage.js'
import type { UserRecord } from '../records.js'
import { timestamp, updatedSince, type ReadResource } from './read-routes.js'

export const User = Type.Object({
  id: Id,
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  active: Type.Boolean(),
  role_ids: Type.Array(Id),
  created_at: Timestamp,
  updated_at: Timestamp,
})

const filters = {
  active: Type.Optional(Type.Boolean()),
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
  updated_since: Type.Optional(Timestamp),
}

export function renderUser(user: UserRecord) {
  return {
    id: user.id,
    email: user.email,
    first_name: user.first_name,
    last_name: user.last_name,
    active: user.active,
    role_ids: user.role_ids,
    created_at: timestamp(user.created_at),
    updated_at: timestamp(user.updated_at),
  }
}

export const users: ReadResource<UserRecord, UserFilter, typeof filters, typeof User> = {
  name: 'users',
  scope: 'users:read',
  item: User,
  filters,
  reader: (storage) => storage.users,
  toFilter: (query) => ({
    active: query.active,
    // Emails match exactly but case-insensitively; adapters compare with the lower-cased form.
    email: query.email?.toLowerCase(),
    updatedSince: updatedSince(query.updated_since),
  }),
  render: renderUser,
}
