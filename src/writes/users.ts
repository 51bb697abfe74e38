import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { ConflictError, NotFoundError, ValidationError } from '../errors.js'
import { ItemEnvelope } from '../http/pagination.js'
import { Id, IdParams, NoQuery } from '../http/schema.js'
import type { InviteSender } from '../ports/invite-sender.js'
import { WriteConflict, type WriteTransaction } from '../ports/write-storage.js'
import type { UserRecord } from '../records.js'
import type { RouteAccess } from '../resources/read-routes.js'
import { renderUser, User } from '../resources/users.js'
import { commitWrite, MAX_BODY_BYTES, type WriteRouteContext } from './commit-write.js'

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

export function registerUserWrites(app: FastifyInstance, context: WriteRouteContext, invites: InviteSender): void {
  const { writes, clock, companyOf } = context
  const config: RouteAccess = { scope: 'users:write' }

  app.post(
    '/v1/users',
    { schema: { querystring: NoQuery, body: CreateUserBody, response: { 201: ItemEnvelope(User) } }, config, bodyLimit: MAX_BODY_BYTES },
    async (request, reply) => {
      const input = request.body as Static<typeof CreateUserBody>
      const companyId = companyOf(request)
      return commitWrite(request, reply, writes, clock, async (tx, now) => {
        const user = await provisionUser(tx, companyId, input, now).catch(conflictOnDuplicate)
        return {
          status: 201,
          body: { data: renderUser(user) },
          headers: { location: context.locationOf(`/v1/users/${user.id}`) },
          afterCommit: input.send_invite
            ? () => invites.sendInvite({ companyId, userId: user.id, email: user.email, firstName: user.first_name, lastName: user.last_name })
            : undefined,
        }
      })
    },
  )

  for (const [action, active] of [['activate', true], ['deactivate', false]] as const) {
    app.post(
      `/v1/users/:id/${action}`,
      { schema: { querystring: NoQuery, params: IdParams, response: { 200: ItemEnvelope(User) } }, config, bodyLimit: MAX_BODY_BYTES },
      async (request, reply) => {
        const { id } = request.params as Static<typeof IdParams>
        const companyId = companyOf(request)
        return commitWrite(request, reply, writes, clock, async (tx, now) => ({
          status: 200,
          body: { data: renderUser(await setUserLogin(tx, companyId, id, active, now)) },
        }))
      },
    )
  }
}

/** Two requests adding the same email at once: the loser's insert hits the unique index. */
function conflictOnDuplicate(error: unknown): never {
  if (error instanceof WriteConflict) throw new ConflictError('A user with this email is already a member of this company')
  throw error
}
