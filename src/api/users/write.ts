import type { Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js'
import type { UserRecord } from '../../ports/records.js'
import { WriteConflict, type WriteTransaction } from '../../ports/write-storage.js'
import type { RouteSpec, WriteContext } from '../route-spec.js'
import type { IdParams } from '../wire.js'
import { writeRoute } from '../write-routes.js'
import { CreateUserBody, renderUser, User } from './schema.js'

/**
 * Adds a person to the company (spec 4.1): creates the person if no one has the email;
 * otherwise adds the existing person, whose profile is left as it is.
 */
export async function provisionUser(
  tx: WriteTransaction,
  companyId: number,
  input: Static<typeof CreateUserBody>,
  now: Date,
): Promise<UserRecord> {
  const roleIds = input.role_ids ?? []
  const found = new Set(await tx.existingRoleIds(companyId, roleIds))
  const foreign = roleIds.filter((id) => !found.has(id))
  if (foreign.length > 0) {
    throw new ValidationError([{ field: 'role_ids', message: `not roles of this company: ${foreign.join(', ')}` }])
  }
  let userId = await tx.findUserIdByEmail(input.email.toLowerCase())
  if (userId === null) {
    userId = await tx.createPerson({ email: input.email, first_name: input.first_name, last_name: input.last_name }, now)
  } else if ((await tx.membershipCompanies(userId)).includes(companyId)) {
    throw new ConflictError('A user with this email is already a member of this company')
  }
  await tx.addMembership(companyId, userId, roleIds, now)
  await tx.recordEvent({ company_id: companyId, type: 'users.created', resource_id: userId, occurred_at: now })
  return (await tx.getUser(companyId, userId)) as UserRecord
}

/**
 * Enables or disables a user's login (spec 3.3). Only for a user of this company alone:
 * one shared with another company is a 409 and nothing changes. Repeating is a no-op.
 */
export async function setUserLogin(
  tx: WriteTransaction,
  companyId: number,
  userId: number,
  active: boolean,
  now: Date,
): Promise<UserRecord> {
  const companies = await tx.membershipCompanies(userId)
  if (!companies.includes(companyId)) throw new NotFoundError('Resource not found')
  if (companies.length > 1) {
    throw new ConflictError('This user also belongs to another company; only a user exclusive to this company can be activated or deactivated')
  }
  const user = (await tx.getUser(companyId, userId)) as UserRecord
  if (user.active === active) return user
  await tx.setUserActive(userId, active, now)
  await tx.recordEvent({ company_id: companyId, type: 'users.updated', resource_id: userId, occurred_at: now })
  return (await tx.getUser(companyId, userId)) as UserRecord
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
      const user = await provisionUser(tx, companyId, input, now).catch(conflictOnDuplicate)
      return {
        body: { data: renderUser(user) },
        headers: { location: context.locationOf(`/v1/users/${user.id}`) },
        afterCommit: input.send_invite
          ? () => invites.sendInvite({ companyId, userId: user.id, email: user.email, firstName: user.first_name, lastName: user.last_name })
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
  if (error instanceof WriteConflict) throw new ConflictError('A user with this email is already a member of this company')
  throw error
}
