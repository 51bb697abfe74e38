/** An invitation to a user who was just added to a company with `send_invite: true`. */
export interface Invitation {
  companyId: number
  userId: number
  email: string
  firstName: string
  lastName: string
}

/**
 * Sends invitation emails. The host owns email: implement this with its mailer.
 * Called after the user's transaction has committed; a failure is logged and does not
 * undo the user (the response is still 201).
 */
export interface InviteSender {
  sendInvite(invitation: Invitation): Promise<void>
}
