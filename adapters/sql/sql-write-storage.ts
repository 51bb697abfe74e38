import type { StoredResponse } from '../../src/ports/idempotency-store.js'
import {
  WriteConflict,
  type ChangeEvent,
  type NewPerson,
  type TodoFields,
  type WriteStorage,
  type WriteTransaction,
} from '../../src/ports/write-storage.js'
import type { InvitedPerson } from '../../src/ports/dataset.js'
import type { InvitationStatus, TodoRecord, UserRecord } from '../../src/ports/records.js'
import type { SqlCodec } from './codec.js'
import { completeIdempotencySlot } from './idempotency-slot.js'
import { prepare, runPrepared, type PreparedQuery, type QueryDb } from './prepared.js'
import { todos, USER_ID_COUNTER, users } from './tables/index.js'
import { byId } from './tables/table.js'
import { sqlTransactor, type SqlTransactor, type SqlWriteOptions } from './sql-transactor.js'
import { recordOutboxEvents, type SqlOutboxOptions } from './webhook-outbox.js'

/**
 * Whether `error` is a unique-constraint violation: Postgres SQLSTATE 23505, or better-sqlite3's
 * extended result codes. Known here so every dialect maps it to `WriteConflict` alike.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}

/**
 * The login of people created through the API. The column is NOT NULL; no password hashes
 * to this value, so such a person cannot sign in with a password until the host sets one.
 */
const NO_PASSWORD = ''

/** Statements compiled once per storage, shared by its transactions. */
interface WriteStatements {
  user: PreparedQuery
  todo: PreparedQuery
}

/**
 * The `WriteStorage` port over the shared SQL schema. Each `transaction` is one database
 * transaction; every operation of its `WriteTransaction` runs on it.
 *
 * @example
 * // Postgres: concurrent transactions, so rows read for update are locked.
 * const writes = new SqlWriteStorage(db, postgresCodec, { lockRows: true })
 * const todo = await writes.transaction((tx) => tx.insertTodo(companyId, fields, now))
 */
export class SqlWriteStorage implements WriteStorage {
  readonly #transact: SqlTransactor
  readonly #statements: WriteStatements
  readonly #outbox: SqlOutboxOptions

  constructor(
    db: QueryDb,
    private readonly codec: SqlCodec,
    options: SqlWriteOptions = {},
  ) {
    this.#transact = sqlTransactor(db, options)
    this.#outbox = { lockRows: options.lockRows ?? false, ...(options.notifyDue === undefined ? {} : { notify: options.notifyDue }) }
    const todo = byId(todos.query, db)
    // Compiled against `db`, so a schema set with `withSchema` is part of the SQL.
    this.#statements = {
      user: prepare(byId(users.query, db)),
      todo: prepare(options.lockRows === true ? todo.forUpdate() : todo),
    }
  }

  transaction<T>(work: (tx: WriteTransaction) => Promise<T>): Promise<T> {
    return this.#transact((trx) => work(new SqlWriteTransaction(trx, this.codec, this.#statements, this.#outbox)))
  }
}

class SqlWriteTransaction implements WriteTransaction {
  constructor(
    private readonly trx: QueryDb,
    private readonly codec: SqlCodec,
    private readonly statements: WriteStatements,
    private readonly outbox: SqlOutboxOptions,
  ) {}

  async findMemberIdByEmail(companyId: number, emailLower: string): Promise<number | null> {
    // One query, the same plan whatever the email: a pending user by what the company sent,
    // an accepted one through the person (never a person who is not a member here).
    // Two unique-index probes of the company's memberships (see the email filter of the users' table, `tables/users.ts`).
    const row = await this.trx
      .selectFrom('wfa_memberships as m')
      .select('m.user_id')
      .where('m.company_id', '=', companyId)
      .where((eb) =>
        eb.or([
          eb('m.invited_email_lower', '=', emailLower),
          eb.and([
            eb('m.person_id', '=', eb.selectFrom('wfa_users').select('wfa_users.id').where('wfa_users.email_lower', '=', emailLower)),
            eb('m.invitation_status', '=', 'accepted'),
          ]),
        ]),
      )
      .executeTakeFirst()
    return row === undefined ? null : this.codec.readInt(row.user_id)
  }

  async personCompanies(companyId: number, userId: number): Promise<number[]> {
    const rows = await this.trx
      .selectFrom('wfa_memberships as m')
      .innerJoin('wfa_memberships as other', 'other.person_id', 'm.person_id')
      .select('other.company_id')
      .where('m.company_id', '=', companyId)
      .where('m.user_id', '=', userId)
      .where('other.invitation_status', '=', 'accepted')
      .orderBy('other.company_id')
      .execute()
    return rows.map((row) => this.codec.readInt(row.company_id))
  }

  async existingRoleIds(companyId: number, roleIds: readonly number[]): Promise<number[]> {
    if (roleIds.length === 0) return []
    const rows = await this.trx
      .selectFrom('wfa_roles')
      .select('id')
      .where('company_id', '=', companyId)
      .where('id', 'in', [...new Set(roleIds)])
      .orderBy('id')
      .execute()
    return rows.map((row) => this.codec.readInt(row.id))
  }

  async todoListExists(companyId: number, listId: number): Promise<boolean> {
    const row = await this.trx
      .selectFrom('wfa_todo_lists')
      .select('id')
      .where('company_id', '=', companyId)
      .where('id', '=', listId)
      .executeTakeFirst()
    return row !== undefined
  }

  async addPendingMembership(companyId: number, roleIds: readonly number[], invited: InvitedPerson, now: Date): Promise<number> {
    const conflict = `Company ${companyId} already has a user with email ${invited.email}`
    // Checked first so the usual duplicate never reaches the constraint (on Postgres a
    // violated constraint aborts the whole transaction); the unique index still settles races.
    if ((await this.findMemberIdByEmail(companyId, invited.email.toLowerCase())) !== null) throw new WriteConflict(conflict)
    const userId = await this.#nextUserId()
    const c = this.codec
    await this.#unique(conflict, () =>
      this.trx
        .insertInto('wfa_memberships')
        .values({
          company_id: companyId,
          user_id: userId,
          person_id: null,
          role_ids: c.json([...roleIds]),
          invitation_status: 'pending',
          invited_email: invited.email,
          invited_email_lower: invited.email.toLowerCase(),
          invited_first_name: invited.first_name,
          invited_last_name: invited.last_name,
          created_at: c.instant(now),
          updated_at: c.instant(now),
        })
        .execute(),
    )
    return userId
  }

  async findPersonIdByEmail(emailLower: string): Promise<number | null> {
    const row = await this.trx.selectFrom('wfa_users').select('id').where('email_lower', '=', emailLower).executeTakeFirst()
    return row === undefined ? null : this.codec.readInt(row.id)
  }

  async createPerson(person: NewPerson, now: Date): Promise<number> {
    const c = this.codec
    const row = await this.#unique(`A person with email ${person.email} already exists`, () =>
      this.trx
        .insertInto('wfa_users')
        .values({
          email: person.email,
          email_lower: person.email.toLowerCase(),
          first_name: person.first_name,
          last_name: person.last_name,
          active: c.bool(true),
          password_hash: NO_PASSWORD,
          created_at: c.instant(now),
          updated_at: c.instant(now),
        })
        .returning('id')
        .executeTakeFirstOrThrow(),
    )
    return c.readInt(row.id)
  }

  async acceptMembership(companyId: number, userId: number, personId: number, now: Date): Promise<boolean> {
    const conflict = `Person ${personId} is already a member of company ${companyId}`
    const pending = await this.#membership(companyId, userId, 'pending')
    if (pending === undefined) return false
    const member = await this.trx
      .selectFrom('wfa_memberships')
      .select('user_id')
      .where('company_id', '=', companyId)
      .where('person_id', '=', personId)
      .executeTakeFirst()
    if (member !== undefined) throw new WriteConflict(conflict)
    const result = await this.#unique(conflict, () =>
      this.trx
        .updateTable('wfa_memberships')
        .set({
          person_id: personId,
          invitation_status: 'accepted',
          invited_email: null,
          invited_email_lower: null,
          invited_first_name: null,
          invited_last_name: null,
          updated_at: this.codec.instant(now),
        })
        .where('company_id', '=', companyId)
        .where('user_id', '=', userId)
        .where('invitation_status', '=', 'pending')
        .executeTakeFirst(),
    )
    return Number(result.numUpdatedRows) > 0
  }

  async removePendingMembership(companyId: number, userId: number): Promise<boolean> {
    const result = await this.trx
      .deleteFrom('wfa_memberships')
      .where('company_id', '=', companyId)
      .where('user_id', '=', userId)
      .where('invitation_status', '=', 'pending')
      .executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  async setUserActive(companyId: number, userId: number, active: boolean, now: Date): Promise<void> {
    const c = this.codec
    const member = await this.#membership(companyId, userId, 'accepted')
    if (member === undefined || member.person_id === null) return
    const personId = c.readInt(member.person_id)
    await this.trx.updateTable('wfa_users').set({ active: c.bool(active), updated_at: c.instant(now) }).where('id', '=', personId).execute()
    // A company's view of a user is dated by the membership (see `tables/users.ts`), so every
    // company the person belongs to sees the change in its `updated_since` sync. A company
    // whose invitation is pending has no person linked, so it never learns of the change.
    await this.trx
      .updateTable('wfa_memberships')
      .set({ updated_at: c.instant(now) })
      .where('person_id', '=', personId)
      .where('invitation_status', '=', 'accepted')
      .execute()
  }

  async getUser(companyId: number, userId: number): Promise<UserRecord | null> {
    const [row] = await runPrepared(this.trx, this.statements.user, { company_id: companyId, id: userId })
    return row === undefined ? null : users.query.decode(row, this.codec)
  }

  async getTodoForUpdate(companyId: number, id: number): Promise<TodoRecord | null> {
    const [row] = await runPrepared(this.trx, this.statements.todo, { company_id: companyId, id })
    return row === undefined ? null : todos.query.decode(row, this.codec)
  }

  async insertTodo(companyId: number, fields: TodoFields, now: Date): Promise<TodoRecord> {
    const c = this.codec
    const row = await this.trx
      .insertInto('wfa_todos')
      .values({
        company_id: companyId,
        ...this.#todoColumns(fields),
        claimed_by: null,
        checklist: c.json([]),
        tag_ids: c.json([]),
        source: null,
        created_at: c.instant(now),
        updated_at: c.instant(now),
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    return todos.query.decode(row, c)
  }

  async updateTodo(companyId: number, id: number, changes: Partial<TodoFields>, now: Date): Promise<TodoRecord> {
    const row = await this.trx
      .updateTable('wfa_todos')
      .set({ ...this.#todoColumns(changes), updated_at: this.codec.instant(now) })
      .where('company_id', '=', companyId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    if (row === undefined) throw new Error(`To-do ${id} of company ${companyId} does not exist`)
    return todos.query.decode(row, this.codec)
  }

  async recordEvent(event: ChangeEvent): Promise<void> {
    await recordOutboxEvents(this.trx, this.codec, [event], this.outbox)
  }

  completeIdempotency(slot: string, token: string, response: StoredResponse, now: Date): Promise<boolean> {
    return completeIdempotencySlot(this.trx, this.codec, slot, token, response, now)
  }

  /** The user's membership of the company if its invitation is in `status`, else undefined. */
  #membership(companyId: number, userId: number, status: InvitationStatus) {
    return this.trx
      .selectFrom('wfa_memberships')
      .select(['user_id', 'person_id'])
      .where('company_id', '=', companyId)
      .where('user_id', '=', userId)
      .where('invitation_status', '=', status)
      .executeTakeFirst()
  }

  /** The columns of the given to-do fields; a key that is absent (or `undefined`) is not written. */
  #todoColumns(fields: Partial<TodoFields>): Record<string, unknown> {
    const c = this.codec
    const encode: { [K in keyof TodoFields]-?: (value: TodoFields[K]) => unknown } = {
      title: (value) => value,
      notes: (value) => value,
      status: (value) => value,
      priority: (value) => value,
      important: (value) => c.bool(value),
      due_day: (value) => (value === null ? null : c.day(value)),
      due_at: (value) => (value === null ? null : c.instant(value)),
      due_is_all_day: (value) => c.bool(value),
      list_id: (value) => value,
      assigned_to: (value) => value,
      assignee_group_id: (value) => value,
    }
    const columns: Record<string, unknown> = {}
    for (const key of Object.keys(encode) as Array<keyof TodoFields>) {
      const value = fields[key]
      if (value !== undefined) columns[key] = (encode[key] as (value: unknown) => unknown)(value)
    }
    return columns
  }

  /**
   * The next user id, from `wfa_id_counters` (migration 0009): the counter's row lock orders
   * concurrent additions on Postgres, and the largest stored id lifts it past rows a loader or
   * the host inserted with their own ids. Never reused, not even after a declined invitation.
   */
  async #nextUserId(): Promise<number> {
    const bumped = await this.trx
      .updateTable('wfa_id_counters')
      .set((eb) => ({ value: eb('value', '+', 1) }))
      .where('name', '=', USER_ID_COUNTER)
      .returning('value')
      .executeTakeFirst()
    const stored = await this.trx.selectFrom('wfa_memberships').select((eb) => eb.fn.max('user_id').as('highest')).executeTakeFirst()
    const highest = stored?.highest === null || stored?.highest === undefined ? 0 : this.codec.readInt(stored.highest)
    if (bumped !== undefined && this.codec.readInt(bumped.value) > highest) return this.codec.readInt(bumped.value)
    const next = highest + 1
    if (bumped === undefined) {
      await this.#unique('Another transaction created the user id counter; retry', () =>
        this.trx.insertInto('wfa_id_counters').values({ name: USER_ID_COUNTER, value: next }).execute(),
      )
    } else {
      await this.trx.updateTable('wfa_id_counters').set({ value: next }).where('name', '=', USER_ID_COUNTER).execute()
    }
    return next
  }

  /**
   * Maps a unique violation to `WriteConflict`. On Postgres the transaction is aborted by
   * then: the caller must let the conflict end it, not carry on with `tx`.
   */
  async #unique<T>(message: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } catch (error) {
      if (isUniqueViolation(error)) throw new WriteConflict(message)
      throw error
    }
  }
}
