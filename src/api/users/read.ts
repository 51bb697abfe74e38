import { Type } from '@sinclair/typebox'
import type { UserRecord } from '../../ports/records.js'
import type { UserFilter } from '../../ports/storage.js'
import { updatedSince } from '../filters.js'
import type { ReadResource } from '../read-routes.js'
import { Timestamp } from '../wire.js'
import { renderUser, User } from './schema.js'

const filters = {
  active: Type.Optional(Type.Boolean()),
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
  updated_since: Type.Optional(Timestamp),
}

/** `GET /v1/users` and `GET /v1/users/:id`. */
export const readUsers: ReadResource<UserRecord, UserFilter, typeof filters, typeof User> = {
  name: 'users',
  singular: 'user',
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
