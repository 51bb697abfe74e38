import { Type } from '@sinclair/typebox'
import type { UserRecord } from '../../ports/records.js'
import type { UserFilter } from '../../ports/storage.js'
import { UPDATED_SINCE, updatedSince } from '../filters.js'
import type { ListDeclaration } from '../resource.js'

const filters = {
  active: Type.Optional(Type.Boolean()),
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
  ...UPDATED_SINCE,
}

/** How `GET /v1/users` filters and reads. */
export const usersList: ListDeclaration<UserRecord, UserFilter, typeof filters> = {
  filters,
  reader: (storage) => storage.users,
  toFilter: (query) => ({
    active: query.active,
    // Emails match exactly but case-insensitively; adapters compare with the lower-cased form.
    email: query.email?.toLowerCase(),
    updatedSince: updatedSince(query.updated_since),
  }),
}
