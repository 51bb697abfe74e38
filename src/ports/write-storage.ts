import type { InvitedPerson } from './dataset.js'
import type { StoredResponse } from './idempotency-store.js'
import type { InvitationStatus, TodoRecord, UserRecord } from './records.js'

/**
 * A change to a resource, recorded in the same transaction as the change itself: the
 * transactional outbox from which webhooks are delivered (spec 6).
 */
export interface ChangeEvent {
  /** `evt_` + 24 lower-case base32 characters: the payload's `id` and every attempt's `webhook-id`. */
  id: string
  company_id: number
  /** e.g. `users.created`, `todos.updated` (spec section 6). */
  type: string
  resource_id: number
  occurred_at: Date
  /**
   * The delivery body, rendered inside the transaction: `{"id","type","created_at","company_id","data"}`
   * where `data` is the resource exactly as its GET returned it at that moment.
   */
  payload: string
}

export interface NewPerson {
  email: string
  first_name: string
  last_name: string
}

/** The writable fields of a to-do, as stored (see `TodoRecord` for `due_day`/`due_at`). */
export type TodoFields = Pick<
  TodoRecord,
  | 'title'
  | 'notes'
  | 'status'
  | 'priority'
  | 'important'
  | 'due_day'
  | 'due_at'
  | 'due_is_all_day'
  | 'list_id'
  | 'assigned_to'
  | 'assignee_group_id'
>

/**
 * One database transaction of a write. Everything done through it commits together or not
 * at all — the mutation, its change event and its idempotency record.
 *
 * The plugin does the domain checks (ownership, transitions) through the lookups here, so
 * the adapter only stores. `now` is the plugin's clock; adapters never read the time.
 */
export interface WriteTransaction {
  /** The id of the person with this (lower-cased) email, or `null`. */
  findUserIdByEmail(emailLower: string): Promise<number | null>
  /**
   * Ids of the companies the person is a member of, in any order. Without `status`, every
   * membership, pending or accepted (a company may not add the person twice); with it, only
   * memberships in that state (`'accepted'` decides whether a user is exclusive to a company).
   */
  membershipCompanies(userId: number, status?: InvitationStatus): Promise<number[]>
  /** Which of `roleIds` are roles of the company. */
  existingRoleIds(companyId: number, roleIds: readonly number[]): Promise<number[]>
  todoListExists(companyId: number, listId: number): Promise<boolean>

  /** Creates a person with an enabled login; returns its id (greater than every existing one). */
  createPerson(person: NewPerson, now: Date): Promise<number>
  /** Adds the person to the company, accepted. Throws `WriteConflict` if already a member (pending or accepted). */
  addMembership(companyId: number, userId: number, roleIds: readonly number[], now: Date): Promise<void>
  /**
   * Adds the person to the company as a `pending` membership that stores `invited` (what the
   * company sent) for `getUser` and the read port to show instead of the person. Throws
   * `WriteConflict` if already a member (pending or accepted).
   */
  addPendingMembership(companyId: number, userId: number, roleIds: readonly number[], invited: InvitedPerson, now: Date): Promise<void>
  /**
   * Turns the company's pending membership of the person accepted: forgets `invited` and sets
   * the membership's `updated_at = now`; roles and `created_at` stay.
   * @returns false (and changes nothing) if there is no pending membership to accept
   */
  acceptMembership(companyId: number, userId: number, now: Date): Promise<boolean>
  /**
   * Deletes the company's pending membership of the person (a declined or withdrawn invitation).
   * @returns false (and changes nothing) if there is no pending membership; an accepted one is never deleted
   */
  removePendingMembership(companyId: number, userId: number): Promise<boolean>
  /**
   * Sets the login flag and bumps `updated_at` of the person and of every *accepted* membership.
   * A pending membership is left alone: its company must not learn of the person's changes.
   */
  setUserActive(userId: number, active: boolean, now: Date): Promise<void>
  /** The user as the company sees them (a pending one from the membership alone), read inside this transaction. */
  getUser(companyId: number, userId: number): Promise<UserRecord | null>

  /** The to-do, locked for the rest of the transaction where the database can lock rows. */
  getTodoForUpdate(companyId: number, id: number): Promise<TodoRecord | null>
  /** Inserts a to-do (empty checklist and tags, no claim, no source) and returns it. */
  insertTodo(companyId: number, fields: TodoFields, now: Date): Promise<TodoRecord>
  /** Writes only the given fields, sets `updated_at = now`, returns the to-do after the change. */
  updateTodo(companyId: number, id: number, changes: Partial<TodoFields>, now: Date): Promise<TodoRecord>

  /**
   * Records the event and, where the adapter stores webhooks, fans it out to a pending delivery
   * for each enabled endpoint of the company subscribed to its type — all in this transaction.
   */
  recordEvent(event: ChangeEvent): Promise<void>
  /**
   * Completes an idempotency slot in this transaction (see `IdempotencyStore.complete`).
   * @returns false if `token` no longer holds the slot — the plugin then rolls back.
   */
  completeIdempotency(slot: string, token: string, response: StoredResponse, now: Date): Promise<boolean>
}

/**
 * Write access to the host's data: users (provisioning, login) and to-dos.
 *
 * @example
 * const todo = await writes.transaction(async (tx) => tx.insertTodo(companyId, fields, now))
 */
export interface WriteStorage {
  /** Runs `work` in one transaction; commits if it resolves, rolls back if it throws. */
  transaction<T>(work: (tx: WriteTransaction) => Promise<T>): Promise<T>
}

/** Thrown when a write would break uniqueness; the class lives with the other port errors. */
export { WriteConflict } from './errors.js'
