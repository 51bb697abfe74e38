import type { InvitedPerson } from './dataset.js'
import type { StoredResponse } from './idempotency-store.js'
import type { TodoRecord, UserRecord } from './records.js'

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
  /**
   * This company's user (pending or accepted) whose email is `emailLower`, or `null`. Looks at
   * this company's memberships only, never at other companies' people: what `POST /v1/users`
   * does must not depend on them (docs/decisions.md, "Every addition is an invitation").
   */
  findMemberIdByEmail(companyId: number, emailLower: string): Promise<number | null>
  /**
   * Ids of the companies in which the person behind this company's user is an *accepted*
   * member, this company included, in any order. `[]` for a pending user (no person yet) or an
   * unknown one. Decides whether a user is exclusive to a company (spec 3.3).
   */
  personCompanies(companyId: number, userId: number): Promise<number[]>
  /** Which of `roleIds` are roles of the company. */
  existingRoleIds(companyId: number, roleIds: readonly number[]): Promise<number[]>
  todoListExists(companyId: number, listId: number): Promise<boolean>

  /**
   * Adds a `pending` user to the company: a membership that stores `invited` (what the company
   * sent) and no person yet. Returns its id, the user's id in this company: greater than every
   * user id the storage has ever given, in any company, and never reused.
   * Throws `WriteConflict` if the company already has a user with this email (pending or accepted).
   */
  addPendingMembership(companyId: number, roleIds: readonly number[], invited: InvitedPerson, now: Date): Promise<number>
  /** The person (login) with this lower-cased email, or `null`. Only invitations' acceptance asks this. */
  findPersonIdByEmail(emailLower: string): Promise<number | null>
  /**
   * Creates a person with an enabled login; returns the person's id (internal: never on the wire).
   * Throws `WriteConflict` if a person has this email (compared case-insensitively).
   */
  createPerson(person: NewPerson, now: Date): Promise<number>
  /**
   * Links the company's pending user to the person and turns the membership accepted: forgets
   * `invited` and sets the membership's `updated_at = now`; the user's id, roles and `created_at` stay.
   * @returns false (and changes nothing) if there is no pending membership to accept
   * Throws `WriteConflict` if the person is already an accepted member of the company (under another user id).
   */
  acceptMembership(companyId: number, userId: number, personId: number, now: Date): Promise<boolean>
  /**
   * Deletes the company's pending membership (a declined or withdrawn invitation). Its id is never given again.
   * @returns false (and changes nothing) if there is no pending membership; an accepted one is never deleted
   */
  removePendingMembership(companyId: number, userId: number): Promise<boolean>
  /**
   * Sets the login flag of the person behind this company's accepted user, and bumps
   * `updated_at` of the person and of each of the person's *accepted* memberships, in every
   * company. Does nothing for a pending or unknown user.
   */
  setUserActive(companyId: number, userId: number, active: boolean, now: Date): Promise<void>
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
