/**
 * An invitation to a user who was just added to a company: sent for `send_invite: true`, and
 * always for a person who already had a login (their membership stays pending until they
 * accept, so without an invitation it could never be accepted).
 */
export interface Invitation {
  companyId: number
  userId: number
  /** The email as the company sent it (for an existing person, their address but for letter case). */
  email: string
  /** The names as the company sent them, for an existing person too: never another company's data. */
  firstName: string
  lastName: string
  /**
   * `true` when the person already had a login: the invitation asks them to join the company,
   * and the host calls `app.workforceApi.invitations.accept({ companyId, userId })` once they
   * do (or `decline`). `false` for a new person, who is a member already.
   */
  requiresAcceptance: boolean
}

/**
 * Sends invitation emails. The host owns email: implement this with its mailer.
 * Called after the user's transaction has committed; a failure is logged and does not
 * undo the user (the response is still 201).
 */
export interface InviteSender {
  sendInvite(invitation: Invitation): Promise<void>
}
