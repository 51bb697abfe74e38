import type { Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js'
import type { UserRecord } from '../../ports/records.js'
import { WriteConflict, type WriteTransaction } from '../../ports/write-storage.js'
import type { RouteSpec, WriteContext } from '../route-spec.js'
import type { IdParams } from '../wire.js'
import { writeRoute } from '../write-routes.js'
import { CreateUserBody, renderUser, User } from './schema.js'
import { renderEvent } from '../../webhooks/events.js'

const ALREADY_MEMBER = 'A user with this email is already a member of this company'

/** What `provisionUser` did: the user as the company now sees them, and whether they must accept first. */
export interface ProvisionedUser {
  user: UserRecord
  /** The person already had a login: the membership is pending until they accept the invitation. */
  pending: boolean
}

/**
 * Adds a person to the company (spec 4.1). A new email creates the person, a member at once.
 * An email that already has a login gets a *pending* membership instead, which shows only what
 * this company sent and joins the person only once they accept the invitation: knowing an
 * email must give a company neither another company's data about the person nor a say over
 * their login (docs/decisions.md, "Invitations").
 */
export async function provisionUser(
  tx: WriteTransaction,
  companyId: number,
  input: Static<typeof CreateUserBody>,
  now: Date,
): Promise<ProvisionedUser> {
  const roleIds = input.role_ids ?? []
  const found = new Set(await tx.existingRoleIds(companyId, roleIds))
  const foreign = roleIds.filter((id) => !found.has(id))
  if (foreign.length > 0) {
    throw new ValidationError([{ field: 'role_ids', message: `not roles of this company: ${foreign.join(', ')}` }])
  }
  const sent = { email: input.email, first_name: input.first_name, last_name: input.last_name }
  let userId = await tx.findUserIdByEmail(input.email.toLowerCase())
  const pending = userId !== null
  if (userId === null) {
    userId = await tx.createPerson(sent, now)
    await tx.addMembership(companyId, userId, roleIds, now)
  } else {
    if ((await tx.membershipCompanies(userId)).includes(companyId)) throw new ConflictError(ALREADY_MEMBER)
    await tx.addPendingMembership(companyId, userId, roleIds, sent, now)
  }
  const user = (await tx.getUser(companyId, userId)) as UserRecord
  await tx.recordEvent(renderEvent({ type: 'users.created', companyId, record: user }, now))
  return { user, pending }
}

/**
 * Enables or disables a user's login (spec 3.3). Only for a user of this company alone: one
 * whose invitation is still pending, or who has accepted another company's, is a 409 and
 * nothing changes. Pending memberships elsewhere do not count. Repeating is a no-op.
 */
export async function setUserLogin(
  tx: WriteTransaction,
  companyId: number,
  userId: number,
  active: boolean,
  now: Date,
): Promise<UserRecord> {
  const user = await tx.getUser(companyId, userId)
  if (user === null) throw new NotFoundError('Resource not found')
  if (user.invitation_status === 'pending') {
    throw new ConflictError("This user's invitation to your company is pending; their login is not yours to change until they accept it")
  }
  if ((await tx.membershipCompanies(userId, 'accepted')).length > 1) {
    throw new ConflictError('This user also belongs to another company; only a user exclusive to this company can be activated or deactivated')
  }
  if (user.active === active) return user
  await tx.setUserActive(userId, active, now)
  const changed = (await tx.getUser(companyId, userId)) as UserRecord
  await tx.recordEvent(renderEvent({ type: 'users.updated', companyId, record: changed }, now))
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
    async run(request, companyId, tx, now) {
      const input = request.body as Static<typeof CreateUserBody>
      const { user, pending } = await provisionUser(tx, companyId, input, now).catch(conflictOnDuplicate)
      // A pending membership can only be accepted through its invitation: it is always sent.
      const invite = pending || input.send_invite === true
      return {
        body: { data: renderUser(user) },
        headers: { location: context.locationOf(`/v1/users/${user.id}`) },
        afterCommit: invite
          ? () =>
              invites.sendInvite({
                companyId,
                userId: user.id,
                email: input.email,
                firstName: input.first_name,
                lastName: input.last_name,
                requiresAcceptance: pending,
              })
          : undefined,
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
      async run(request, companyId, tx, now) {
        const { id } = request.params as Static<typeof IdParams>
        return { body: { data: renderUser(await setUserLogin(tx, companyId, id, active, now)) } }
      },
    })
  return [provision, login('activate', true), login('deactivate', false)]
}

/** Two requests adding the same email at once: the loser's insert hits the unique index. */
function conflictOnDuplicate(error: unknown): never {
  if (error instanceof WriteConflict) throw new ConflictError(ALREADY_MEMBER)
  throw error
}
