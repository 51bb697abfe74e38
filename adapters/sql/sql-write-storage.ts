import { CompiledQuery } from 'kysely'
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
import { bind, param, prepare, type PreparedQuery, type QueryDb } from './prepared.js'
import { todoQuery, userQuery } from './resource-queries.js'
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
    const todo = todoQuery.select(todoQuery.from(db)).where(todoQuery.id, '=', param('id'))
    // Compiled against `db`, so a schema set with `withSchema` is part of the SQL.
    this.#statements = {
      user: prepare(userQuery.select(userQuery.from(db)).where(userQuery.id, '=', param('id'))),
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

  async findUserIdByEmail(emailLower: string): Promise<number | null> {
    const row = await this.trx.selectFrom('wfa_users').select('id').where('email_lower', '=', emailLower).executeTakeFirst()
    return row === undefined ? null : this.codec.readInt(row.id)
  }

  async membershipCompanies(userId: number, status?: InvitationStatus): Promise<number[]> {
    let query = this.trx.selectFrom('wfa_memberships').select('company_id').where('user_id', '=', userId)
    if (status !== undefined) query = query.where('invitation_status', '=', status)
    const rows = await query.orderBy('company_id').execute()
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

  addMembership(companyId: number, userId: number, roleIds: readonly number[], now: Date): Promise<void> {
    return this.#addMembership(companyId, userId, roleIds, null, now)
  }

  addPendingMembership(companyId: number, userId: number, roleIds: readonly number[], invited: InvitedPerson, now: Date): Promise<void> {
    return this.#addMembership(companyId, userId, roleIds, invited, now)
  }

  async acceptMembership(companyId: number, userId: number, now: Date): Promise<boolean> {
    const result = await this.trx
      .updateTable('wfa_memberships')
      .set({
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
      .executeTakeFirst()
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

  async #addMembership(companyId: number, userId: number, roleIds: readonly number[], invited: InvitedPerson | null, now: Date): Promise<void> {
    const conflict = `User ${userId} is already a member of company ${companyId}`
    // Checked first so the usual duplicate never reaches the constraint (on Postgres a
    // violated constraint aborts the whole transaction); the constraint still settles races.
    const existing = await this.trx
      .selectFrom('wfa_memberships')
      .select('user_id')
      .where('company_id', '=', companyId)
      .where('user_id', '=', userId)
      .executeTakeFirst()
    if (existing !== undefined) throw new WriteConflict(conflict)
    const c = this.codec
    await this.#unique(conflict, () =>
      this.trx
        .insertInto('wfa_memberships')
        .values({
          company_id: companyId,
          user_id: userId,
          role_ids: c.json([...roleIds]),
          invitation_status: invited === null ? 'accepted' : 'pending',
          invited_email: invited?.email ?? null,
          invited_email_lower: invited?.email.toLowerCase() ?? null,
          invited_first_name: invited?.first_name ?? null,
          invited_last_name: invited?.last_name ?? null,
          created_at: c.instant(now),
          updated_at: c.instant(now),
        })
        .execute(),
    )
  }

  async setUserActive(userId: number, active: boolean, now: Date): Promise<void> {
    const c = this.codec
    await this.trx.updateTable('wfa_users').set({ active: c.bool(active), updated_at: c.instant(now) }).where('id', '=', userId).execute()
    // A company's view of a user is dated by the membership (see `userQuery`), so every
    // company the person belongs to sees the change in its `updated_since` sync. A company
    // whose invitation is pending must not: it would learn of another company's change.
    await this.trx
      .updateTable('wfa_memberships')
      .set({ updated_at: c.instant(now) })
      .where('user_id', '=', userId)
      .where('invitation_status', '=', 'accepted')
      .execute()
  }

  async getUser(companyId: number, userId: number): Promise<UserRecord | null> {
    const [row] = await this.#run(this.statements.user, { company_id: companyId, id: userId })
    return row === undefined ? null : userQuery.decode(row, this.codec)
  }

  async getTodoForUpdate(companyId: number, id: number): Promise<TodoRecord | null> {
    const [row] = await this.#run(this.statements.todo, { company_id: companyId, id })
    return row === undefined ? null : todoQuery.decode(row, this.codec)
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
    return todoQuery.decode(row, c)
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
    return todoQuery.decode(row, this.codec)
  }

  async recordEvent(event: ChangeEvent): Promise<void> {
    await recordOutboxEvents(this.trx, this.codec, [event], this.outbox)
  }

  completeIdempotency(slot: string, token: string, response: StoredResponse, now: Date): Promise<boolean> {
    return completeIdempotencySlot(this.trx, this.codec, slot, token, response, now)
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

  #run(query: PreparedQuery, values: Record<string, unknown>): Promise<Record<string, any>[]> {
    return this.trx.executeQuery<Record<string, any>>(CompiledQuery.raw(query.sql, bind(query, values))).then((result) => result.rows)
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
