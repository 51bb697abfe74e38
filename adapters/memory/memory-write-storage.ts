import type { StoredResponse } from '../../src/ports/idempotency-store.js'
import {
  WriteConflict,
  type ChangeEvent,
  type NewPerson,
  type TodoFields,
  type WriteStorage,
  type WriteTransaction,
} from '../../src/ports/write-storage.js'
import type { InvitedPerson, MembershipRow } from '../../src/ports/dataset.js'
import type { InvitationStatus, TodoRecord, UserRecord } from '../../src/ports/records.js'
import type { MemoryIdempotencyStore } from './memory-idempotency-store.js'
import type { MemoryStorage } from './memory-storage.js'
import type { MemoryWebhookStore } from './memory-webhook-store.js'

const nextId = (rows: ReadonlyArray<{ id: number }>) => rows.reduce((max, row) => Math.max(max, row.id), 0) + 1

/**
 * The reference `WriteStorage`. Transactions run one at a time (the storage's gate also holds
 * reads back meanwhile); each change pushes its undo, and a failed transaction undoes them
 * in reverse, so nothing is half-written.
 */
export class MemoryWriteStorage implements WriteStorage {
  constructor(
    private readonly storage: MemoryStorage,
    private readonly idempotency: MemoryIdempotencyStore,
    /** Where events fan out to webhook deliveries. */
    private readonly webhooks: MemoryWebhookStore,
    /** Change events, in order. Pushed inside the transaction and removed on rollback, so a reader waits for `storage.gate` first. */
    readonly events: ChangeEvent[] = [],
  ) {}

  async transaction<T>(work: (tx: WriteTransaction) => Promise<T>): Promise<T> {
    let deliveries = 0
    const result = await this.storage.gate.exclusive(async () => {
      const undo: Array<() => void> = []
      const fanOut = (event: ChangeEvent) => {
        deliveries += this.webhooks.fanOut(event, undo)
      }
      try {
        return await work(new MemoryWriteTransaction(this.storage, this.idempotency, this.events, undo, fanOut))
      } catch (error) {
        for (const step of undo.reverse()) step()
        deliveries = 0
        throw error
      }
    })
    if (deliveries > 0) this.webhooks.wake()
    return result
  }
}

class MemoryWriteTransaction implements WriteTransaction {
  constructor(
    private readonly storage: MemoryStorage,
    private readonly idempotency: MemoryIdempotencyStore,
    private readonly events: ChangeEvent[],
    private readonly undo: Array<() => void>,
    private readonly fanOut: (event: ChangeEvent) => void,
  ) {}

  get #data() {
    return this.storage.data
  }

  async findMemberIdByEmail(companyId: number, emailLower: string): Promise<number | null> {
    return this.storage.usersOf(companyId).find((user) => user.email.toLowerCase() === emailLower)?.id ?? null
  }

  async personCompanies(companyId: number, userId: number): Promise<number[]> {
    const personId = this.#membership(companyId, userId)?.person_id ?? null
    if (personId === null) return []
    return this.#data.memberships
      .filter((m) => m.person_id === personId && m.invitation_status === 'accepted')
      .map((m) => m.company_id)
  }

  async existingRoleIds(companyId: number, roleIds: readonly number[]): Promise<number[]> {
    const wanted = new Set(roleIds)
    return this.#data.roles.filter((role) => role.company_id === companyId && wanted.has(role.id)).map((role) => role.id)
  }

  async todoListExists(companyId: number, listId: number): Promise<boolean> {
    return this.#data.todoLists.some((list) => list.company_id === companyId && list.id === listId)
  }

  async addPendingMembership(companyId: number, roleIds: readonly number[], invited: InvitedPerson, now: Date): Promise<number> {
    if ((await this.findMemberIdByEmail(companyId, invited.email.toLowerCase())) !== null) {
      throw new WriteConflict(`Company ${companyId} already has a user with email ${invited.email}`)
    }
    const membership: MembershipRow = {
      company_id: companyId,
      user_id: this.storage.nextUserId(),
      person_id: null,
      role_ids: [...roleIds],
      invitation_status: 'pending',
      invited: { ...invited },
      created_at: now,
      updated_at: now,
    }
    this.#push(this.#data.memberships, membership)
    return membership.user_id
  }

  async findPersonIdByEmail(emailLower: string): Promise<number | null> {
    return this.#data.people.find((person) => person.email.toLowerCase() === emailLower)?.id ?? null
  }

  async createPerson(person: NewPerson, now: Date): Promise<number> {
    if ((await this.findPersonIdByEmail(person.email.toLowerCase())) !== null) {
      throw new WriteConflict(`A person with email ${person.email} already exists`)
    }
    const id = nextId(this.#data.people)
    this.#push(this.#data.people, { id, ...person, active: true, password_hash: '', created_at: now, updated_at: now })
    return id
  }

  async acceptMembership(companyId: number, userId: number, personId: number, now: Date): Promise<boolean> {
    const membership = this.#membership(companyId, userId)
    if (membership?.invitation_status !== 'pending') return false
    if (this.#data.memberships.some((m) => m.company_id === companyId && m.person_id === personId)) {
      throw new WriteConflict(`Person ${personId} is already a member of company ${companyId}`)
    }
    this.#assign(membership, { invitation_status: 'accepted', person_id: personId, invited: null, updated_at: now })
    return true
  }

  async removePendingMembership(companyId: number, userId: number): Promise<boolean> {
    const membership = this.#membership(companyId, userId)
    if (membership?.invitation_status !== 'pending') return false
    const rows = this.#data.memberships
    const index = rows.indexOf(membership)
    rows.splice(index, 1)
    this.undo.push(() => rows.splice(index, 0, membership))
    return true
  }

  async setUserActive(companyId: number, userId: number, active: boolean, now: Date): Promise<void> {
    const membership = this.#membership(companyId, userId)
    if (membership?.invitation_status !== 'accepted' || membership.person_id === null) return
    const personId = membership.person_id
    const person = this.#data.people.find((candidate) => candidate.id === personId)
    if (person === undefined) return
    this.#assign(person, { active, updated_at: now })
    for (const other of this.#data.memberships) {
      // A pending membership's company must not see the person's changes (dataset.ts).
      if (other.person_id === personId && other.invitation_status === 'accepted') this.#assign(other, { updated_at: now })
    }
  }

  async getUser(companyId: number, userId: number): Promise<UserRecord | null> {
    return this.storage.usersOf(companyId).find((user) => user.id === userId) ?? null
  }

  async getTodoForUpdate(companyId: number, id: number): Promise<TodoRecord | null> {
    const row = this.#todo(companyId, id)
    return row === undefined ? null : this.#todoRecord(row)
  }

  async insertTodo(companyId: number, fields: TodoFields, now: Date): Promise<TodoRecord> {
    const row = {
      id: nextId(this.#data.todos),
      company_id: companyId,
      ...fields,
      claimed_by: null,
      checklist: [],
      tag_ids: [],
      source: null,
      created_at: now,
      updated_at: now,
    }
    this.#push(this.#data.todos, row)
    return this.#todoRecord(row)
  }

  async updateTodo(companyId: number, id: number, changes: Partial<TodoFields>, now: Date): Promise<TodoRecord> {
    const row = this.#todo(companyId, id)
    if (row === undefined) throw new Error(`To-do ${id} of company ${companyId} does not exist`)
    // Like the SQL adapters: a key present with `undefined` is not a change.
    const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined))
    this.#assign(row, { ...given, updated_at: now })
    return this.#todoRecord(row)
  }

  async recordEvent(event: ChangeEvent): Promise<void> {
    this.#push(this.events, { ...event })
    this.fanOut(event)
  }

  async completeIdempotency(slot: string, token: string, response: StoredResponse): Promise<boolean> {
    const before = this.idempotency.completeNow(slot, token, response)
    if (before === null) return false
    this.undo.push(() => this.idempotency.records.set(slot, before))
    return true
  }

  #membership(companyId: number, userId: number): MembershipRow | undefined {
    return this.#data.memberships.find((m) => m.company_id === companyId && m.user_id === userId)
  }

  #todo(companyId: number, id: number) {
    return this.#data.todos.find((todo) => todo.company_id === companyId && todo.id === id)
  }

  #todoRecord(row: TodoRecord & { company_id: number }): TodoRecord {
    const { company_id: _company, ...record } = row
    return structuredClone(record)
  }

  #push<T>(rows: T[], row: T): void {
    rows.push(row)
    this.undo.push(() => {
      const index = rows.lastIndexOf(row)
      if (index >= 0) rows.splice(index, 1)
    })
  }

  #assign<T extends object>(target: T, changes: Partial<T>): void {
    const before = Object.fromEntries(Object.keys(changes).map((key) => [key, target[key as keyof T]])) as Partial<T>
    Object.assign(target, changes)
    this.undo.push(() => Object.assign(target, before))
  }
}
