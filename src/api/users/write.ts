import type { Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js'
import type { UserRecord } from '../../ports/records.js'
import { WriteConflict } from '../../ports/write-storage.js'
import type { RouteSpec, WriteContext } from '../route-spec.js'
import type { IdParams } from '../wire.js'
import { recordChange, writeRoute, type WriteScope } from '../write-routes.js'
import { CreateUserBody, renderUser, User } from './schema.js'

const ALREADY_MEMBER = 'A user with this email is already a member of this company'

/**
 * Adds a user to the company (spec 4.1): every addition by email is an invitation. The user is
 * `pending`, shows only what this company sent, and gets a fresh id of this company's; the
 * email is resolved to a person (an existing login or a new one) only when the host accepts
 * the invitation (`app.workforceApi.invitations.accept`). Nothing here looks at other
 * companies' people, so the answer, its shape and the work done are the same whether or not
 * the email has a login elsewhere (docs/decisions.md, "Every addition is an invitation").
 */
export async function provisionUser(scope: WriteScope, input: Static<typeof CreateUserBody>): Promise<UserRecord> {
  const { tx, companyId, now } = scope
  const roleIds = input.role_ids ?? []
  const found = new Set(await tx.existingRoleIds(companyId, roleIds))
  const foreign = roleIds.filter((id) => !found.has(id))
  if (foreign.length > 0) {
    throw new ValidationError([{ field: 'role_ids', message: `not roles of this company: ${foreign.join(', ')}` }])
  }
  if ((await tx.findMemberIdByEmail(companyId, input.email.toLowerCase())) !== null) throw new ConflictError(ALREADY_MEMBER)
  const sent = { email: input.email, first_name: input.first_name, last_name: input.last_name }
  const userId = await tx.addPendingMembership(companyId, roleIds, sent, now)
  const user = (await tx.getUser(companyId, userId)) as UserRecord
  await recordChange(scope, 'users.created', user)
  return user
}

/**
 * Enables or disables a user's login (spec 3.3). Only for a user of this company alone: one
 * whose invitation is still pending, or whose person has accepted another company's, is a 409
 * and nothing changes. Pending memberships elsewhere do not count. Repeating is a no-op.
 */
export async function setUserLogin(scope: WriteScope, userId: number, active: boolean): Promise<UserRecord> {
  const { tx, companyId, now } = scope
  const user = await tx.getUser(companyId, userId)
  if (user === null) throw new NotFoundError('Resource not found')
  if (user.invitation_status === 'pending') {
    throw new ConflictError("This user's invitation to your company is pending; their login is not yours to change until they accept it")
  }
  if ((await tx.personCompanies(companyId, userId)).length > 1) {
    throw new ConflictError('This user also belongs to another company; only a user exclusive to this company can be activated or deactivated')
  }
  if (user.active === active) return user
  await tx.setUserActive(companyId, userId, active, now)
  const changed = (await tx.getUser(companyId, userId)) as UserRecord
  await recordChange(scope, 'users.updated', changed, user)
  return changed
}

/** `POST /v1/users`, `POST /v1/users/:id/activate` and `POST /v1/users/:id/deactivate`. */
export function userWriteRoutes(context: WriteContext): RouteSpec[] {
  const { invites } = context
  const provision = writeRoute(context, {
    method: 'POST',
    url: '/v1/users',
    operationId: 'createUser',
    summary: 'Add a user to your company',
    tag: 'users',
    scope: 'users:write',
    body: CreateUserBody,
    status: 201,
    item: User,
    async run(request, scope) {
      const { companyId } = scope
      const input = request.body as Static<typeof CreateUserBody>
      const user = await provisionUser(scope, input).catch(conflictOnDuplicate)
      // Every user is pending until accepted, and only its invitation can be accepted: always sent.
      return {
        body: { data: renderUser(user) },
        headers: { location: context.locationOf(`/v1/users/${user.id}`) },
        afterCommit: () =>
          invites.sendInvite({
            companyId,
            userId: user.id,
            email: input.email,
            firstName: input.first_name,
            lastName: input.last_name,
            requiresAcceptance: true,
          }),
      }
    },
  })
  const login = (action: 'activate' | 'deactivate', active: boolean) =>
    writeRoute(context, {
      method: 'POST',
      url: `/v1/users/:id/${action}`,
      operationId: `${action}User`,
      summary: active ? "Enable a user's login" : "Disable a user's login",
      tag: 'users',
      scope: 'users:write',
      byId: true,
      status: 200,
      item: User,
      async run(request, scope) {
        const { id } = request.params as Static<typeof IdParams>
        return { body: { data: renderUser(await setUserLogin(scope, id, active)) } }
      },
    })
  return [provision, login('activate', true), login('deactivate', false)]
}

/** Two requests adding the same email at once: the loser's insert hits the unique index. */
function conflictOnDuplicate(error: unknown): never {
  if (error instanceof WriteConflict) throw new ConflictError(ALREADY_MEMBER)
  throw error
}
