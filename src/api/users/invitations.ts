import { WorkforceRefusal } from '../../errors.js'
import type { UserRecord } from '../../ports/records.js'
import { WriteConflict } from '../../ports/write-storage.js'
import { recordChange, type WriteScope } from '../write-routes.js'

// The user's side of an invitation, inside the host's transaction: what accepting and declining
// change and which `users.*` event each records. `app.workforceApi.invitations`
// (src/invitations/) checks the input and runs these in a transaction of the `writes` port.

/** Thrown for a refused invitation operation. Tests and hosts match on `reason`, not the message. */
export class InvitationError extends WorkforceRefusal<'not_found' | 'not_pending' | 'already_member' | 'invalid_input' | 'unavailable'> {
  constructor(
    message: string,
    /**
     * `not_found`: the company has no such user (never invited, or declined);
     * `not_pending`: the membership is accepted, so there is no invitation to decline;
     * `already_member`: the email's person is already an accepted member of the company under
     *   another user id (decline this invitation);
     * `invalid_input`: the ids are not positive integers;
     * `unavailable`: the plugin was registered without `writes`, so nothing can be invited.
     */
    reason: 'not_found' | 'not_pending' | 'already_member' | 'invalid_input' | 'unavailable',
  ) {
    super(message, reason)
    this.name = 'InvitationError'
  }
}

/**
 * The person accepts: the invitation's email is resolved to the person with that login, or a
 * new person is created; the membership is linked to them and turns accepted, keeping its id,
 * with a `users.updated` event. An accepted membership is returned unchanged.
 */
export async function acceptInvitation(scope: WriteScope, userId: number): Promise<UserRecord> {
  const { tx, companyId, now } = scope
  const user = await tx.getUser(companyId, userId)
  if (user === null) throw notFound(companyId, userId)
  if (user.invitation_status === 'accepted') return user
  const emailLower = user.email.toLowerCase()
  const personId =
    (await tx.findPersonIdByEmail(emailLower)) ??
    (await tx.createPerson({ email: user.email, first_name: user.first_name, last_name: user.last_name }, now))
  // Re-checked by the adapter: of two racing accepts only one changes the row and records an event.
  const accepted = await tx.acceptMembership(companyId, userId, personId, now).catch((error: unknown) => {
    if (error instanceof WriteConflict) {
      throw new InvitationError(`The person invited as user ${userId} is already a member of company ${companyId}`, 'already_member')
    }
    throw error
  })
  const member = (await tx.getUser(companyId, userId)) as UserRecord
  if (accepted) await recordChange(scope, 'users.updated', member, user)
  return member
}

/**
 * The person declines, or the host withdraws the invitation: the pending membership and what
 * the company sent are deleted, with a `users.deleted` event carrying the company's last sight
 * of the user (what it sent, still pending).
 */
export async function declineInvitation(scope: WriteScope, userId: number): Promise<void> {
  const { tx, companyId } = scope
  const user = await tx.getUser(companyId, userId)
  if (user === null) throw notFound(companyId, userId)
  if (user.invitation_status === 'accepted') {
    throw new InvitationError(`User ${userId} is an accepted member of company ${companyId}: there is no invitation to decline`, 'not_pending')
  }
  if (await tx.removePendingMembership(companyId, userId)) {
    await recordChange(scope, 'users.deleted', user)
  }
}

function notFound(companyId: number, userId: number): InvitationError {
  return new InvitationError(`User ${userId} has no invitation to company ${companyId}`, 'not_found')
}
