import { Type } from '@sinclair/typebox'
import { INVITATION_STATUSES, type UserRecord } from '../../ports/records.js'
import { Id, StringEnum, Timestamp, timestamp } from '../wire.js'

/** The user as this company sees them (docs/decisions.md: users shared between companies). */
export const User = Type.Object({
  id: Id,
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  active: Type.Boolean(),
  role_ids: Type.Array(Id),
  /**
   * `pending` until a person who already had a login accepts this company's invitation; until
   * then the user shows only what this company sent, with `active: false` (decisions.md).
   */
  invitation_status: StringEnum(INVITATION_STATUSES),
  created_at: Timestamp,
  updated_at: Timestamp,
})

export function renderUser(user: UserRecord) {
  return {
    id: user.id,
    email: user.email,
    first_name: user.first_name,
    last_name: user.last_name,
    active: user.active,
    role_ids: user.role_ids,
    invitation_status: user.invitation_status,
    created_at: timestamp(user.created_at),
    updated_at: timestamp(user.updated_at),
  }
}

export const MAX_ROLES_PER_USER = 50

/** Spec 4.1: the assignment to the company (the person), optional roles, optional invite. */
export const CreateUserBody = Type.Object(
  {
    // Dot-separated labels that cannot contain dots: matched in linear time (no ReDoS).
    email: Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@.]+(\\.[^\\s@.]+)+$' }),
    first_name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
    last_name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
    role_ids: Type.Optional(Type.Array(Id, { maxItems: MAX_ROLES_PER_USER, uniqueItems: true })),
    send_invite: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
