import type { UserFilter } from '../../ports/storage.js'
import type { UserRecord } from '../../ports/records.js'
import { changeDocs, createDocs, defineResource, exactKeys, EVENT_ACTIONS } from '../resource.js'
import { usersList } from './read.js'
import { renderUser, User } from './schema.js'
import { userWriteRoutes } from './write.js'

/** Users: read, provisioned, activated and deactivated (spec 1, 3.3, 4.1). */
export const users = defineResource({
  name: 'users',
  singular: 'user',
  component: 'User',
  module: 'core',
  scope: 'users:read',
  item: User,
  render: renderUser,
  list: usersList,
  write: { scope: 'users:write', routes: userWriteRoutes },
  events: { actions: EVENT_ACTIONS, position: 1 },
  conformance: {
    recordKeys: exactKeys<UserRecord>()(['id', 'email', 'first_name', 'last_name', 'active', 'role_ids', 'invitation_status', 'created_at', 'updated_at']),
    filterKeys: exactKeys<UserFilter>()(['active', 'email', 'updatedSince']),
    fieldKinds: {
      instants: ['created_at', 'updated_at'],
      days: [],
      integers: ['id'],
      booleans: ['active'],
      structures: ['role_ids'],
      texts: ['email', 'first_name', 'last_name', 'invitation_status'],
      fractions: [],
    },
  },
  docs: {
    description: "People with a login in your company. Add them, and enable or disable their login.",
    fields: {
      id: 'The user id, the same in every company the person belongs to.',
      email: 'The login email.',
      active: 'Whether the user can log in. A pending user is never active.',
      role_ids: "Ids of the company's roles the user holds.",
      invitation_status:
        '`pending` while a person who already had a login has not accepted your invitation; until then you see only what you sent. `accepted` otherwise.',
      created_at: 'When the user joined your company.',
      updated_at: 'When the user, as your company sees them, last changed.',
    },
    parameters: {
      active: 'Only users whose login is enabled (`true`) or disabled (`false`).',
      email: 'Only the user with this email address (exact, case-insensitive).',
    },
    operations: {
      createUser: createDocs(
        'Invites a person to your company, with optional roles: the user is `pending` (`active: false`), under a fresh id of your company\'s, until the person accepts the invitation, which is always sent (`send_invite` no longer changes anything). The answer is the same whether or not the email has a login in another company. Send an `Idempotency-Key` with `Authorization: Bearer`: a retry without one can answer 409 because the user now exists.',
        'The user as now part of your company',
      ),
      activateUser: changeDocs("Enables the user's login. Only for users who belong to your company alone.", 'The user, with `active: true`.'),
      deactivateUser: changeDocs("Disables the user's login; their data stays. Only for users who belong to your company alone.", 'The user, with `active: false`.'),
    },
    examples: (seed) => {
      const exclusive = seed.exclusiveMember()
      return {
        listUsers: { method: 'GET', path: '/v1/users', query: { per_page: 2 } },
        getUser: { method: 'GET', path: `/v1/users/${seed.member().user_id}` },
        createUser: {
          method: 'POST',
          path: '/v1/users',
          body: { email: 'ada.lovelace@example.com', first_name: 'Ada', last_name: 'Lovelace', role_ids: [seed.first(seed.data.roles).id], send_invite: true },
        },
        // Deactivated first, so that activating has something to do.
        deactivateUser: { method: 'POST', path: `/v1/users/${exclusive.user_id}/deactivate` },
        activateUser: { method: 'POST', path: `/v1/users/${exclusive.user_id}/activate` },
      }
    },
  },
})
