import type { Clock } from '../ports/clock.js'
import type { UserRecord } from '../ports/records.js'
import type { WriteStorage, WriteTransaction } from '../ports/write-storage.js'
import type { EventRenderer } from '../api/route-spec.js'
import { acceptInvitation, declineInvitation, InvitationError } from '../api/users/invitations.js'

export { InvitationError }

/** Which invitation: the inviting company and the user id the API showed it (an id of that company only). */
export interface InvitationRef {
  companyId: number
  userId: number
}

/**
 * The host's side of an invitation (`app.workforceApi.invitations`). Every user a company adds
 * through the API is a pending invitation; the person is asked by the `InviteSender`'s email,
 * and the host — having authenticated the person in its own UI — records their answer here.
 * Only here is the email resolved to a person: an existing login, or a new one. Each answer is one transaction with its change event, like every
 * write of the API.
 *
 * @example
 * // in the host's "join company" handler, after it authenticated the person as `userId`
 * const user = await app.workforceApi.invitations.accept({ companyId, userId })
 * // user.invitation_status === 'accepted'; the company now sees the person as stored
 */
export class InvitationManager {
  constructor(
    private readonly writes: WriteStorage | undefined,
    private readonly clock: Clock,
    /** Renders the `users.*` events of an acceptance or a decline (the plugin's resource catalogue). */
    private readonly events: EventRenderer,
  ) {}

  /**
   * The person accepts: the invitation's email is resolved to the person with that login, or a
   * new person (login enabled, the names the company sent) is created; the membership is linked
   * to them and turns accepted, keeping its id; the company sees the person as stored from now
   * on (a `users.updated` event for it). Accepting an accepted membership changes nothing and
   * returns the user.
   *
   * @returns the user as the inviting company now sees them
   * @throws InvitationError `not_found`, `already_member`, `invalid_input`, `unavailable`
   */
  accept(ref: InvitationRef): Promise<UserRecord> {
    return this.#transaction(ref, (tx, { companyId, userId }, now) => acceptInvitation({ tx, companyId, now, events: this.events }, userId))
  }

  /**
   * The person declines, or the host withdraws the invitation (e.g. the company's admin
   * cancels it in the host's UI): the pending membership and what the company sent are deleted,
   * and the company gets a `users.deleted` event; its GET of the user is a 404 from then on.
   * The company may add the email again later, which invites the person again.
   *
   * @throws InvitationError `not_found`, `not_pending` (an accepted membership is not an invitation), `invalid_input`, `unavailable`
   */
  decline(ref: InvitationRef): Promise<void> {
    return this.#transaction(ref, (tx, { companyId, userId }, now) => declineInvitation({ tx, companyId, now, events: this.events }, userId))
  }

  #transaction<T>(ref: InvitationRef, work: (tx: WriteTransaction, ref: InvitationRef, now: Date) => Promise<T>): Promise<T> {
    const writes = this.writes
    if (writes === undefined) {
      return Promise.reject(new InvitationError('Invitations need the `writes` option: without it no one can be invited', 'unavailable'))
    }
    const { companyId, userId } = ref ?? {}
    for (const [name, value] of [['companyId', companyId], ['userId', userId]] as const) {
      if (!Number.isSafeInteger(value) || (value as number) < 1) {
        return Promise.reject(new InvitationError(`${name} must be a positive integer`, 'invalid_input'))
      }
    }
    // Stamped once the transaction holds the store, as every write is (write-routes.ts).
    return writes.transaction((tx) => work(tx, { companyId, userId }, new Date(this.clock.now())))
  }
}
