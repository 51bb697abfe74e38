import { Migrator, type Kysely } from 'kysely'
import { expect } from 'vitest'
import type { SqlCodec, SqlColumnTypes } from '../../adapters/sql/codec.js'
import { createMigrations } from '../../adapters/sql/migrations/index.js'
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE } from '../../adapters/sql/schema.js'
import type { ReferenceAdapterPorts } from '../../src/ports/index.js'

/** The migration under test and the one before it (issue 21). */
export const PER_COMPANY_IDS = '2026_11_26_0009_per_company_user_ids'

/** Runs every migration before `PER_COMPANY_IDS` on `db` (already schema-bound where the dialect has schemas). */
export async function migrateToBefore(db: Kysely<any>, types: SqlColumnTypes, schema?: string): Promise<void> {
  const migrations = createMigrations(types, schema)
  const names = Object.keys(migrations)
  const index = names.indexOf(PER_COMPANY_IDS)
  expect(index, `${PER_COMPANY_IDS} is listed`).toBeGreaterThan(0)
  const before = names[index - 1] as string
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  })
  const { error } = await migrator.migrateTo(before)
  if (error !== undefined) throw error
}

const instant = (c: SqlCodec, minute: number) => c.instant(new Date(Date.UTC(2026, 0, 1, 0, minute)))

/**
 * Rows in the shape before the migration: person 5 belongs to company 1 (since minute 10), to
 * company 2 (since minute 20) and is invited to company 3 (pending, minute 30); person 9 belongs to
 * company 2 alone. Employees and to-dos of both companies name person 5.
 */
export async function insertOldShape(db: Kysely<any>, c: SqlCodec): Promise<void> {
  for (const id of [1, 2, 3]) {
    await db.insertInto('wfa_companies').values({ id, name: `Co ${id}`, timezone: 'UTC', country: 'IT', created_at: instant(c, 0), updated_at: instant(c, 0) }).execute()
  }
  for (const [id, email] of [[5, 'shared@example.com'], [9, 'alone@example.com']] as const) {
    await db
      .insertInto('wfa_users')
      .values({ id, email, email_lower: email, first_name: 'P', last_name: String(id), active: c.bool(true), password_hash: '', created_at: instant(c, 1), updated_at: instant(c, 1) })
      .execute()
  }
  const membership = (company_id: number, user_id: number, minute: number, invited = false) => ({
    company_id,
    user_id,
    role_ids: c.json([]),
    invitation_status: invited ? 'pending' : 'accepted',
    invited_email: invited ? 'SHARED@example.com' : null,
    invited_email_lower: invited ? 'shared@example.com' : null,
    invited_first_name: invited ? 'Sent' : null,
    invited_last_name: invited ? 'By Three' : null,
    created_at: instant(c, minute),
    updated_at: instant(c, minute),
  })
  // Inserted newest first: the migration must go by created_at, not by insertion order.
  await db.insertInto('wfa_memberships').values([membership(3, 5, 30, true), membership(2, 5, 20), membership(2, 9, 15), membership(1, 5, 10)]).execute()
  const employee = (id: number, company_id: number, user_id: number) => ({
    id,
    company_id,
    user_id,
    employee_number: `E${id}`,
    job_title: null,
    contract_type: 'permanent',
    weekly_hours: 40,
    hire_date: c.day('2026-01-01'),
    termination_date: null,
    supervisor_id: null,
    salary_cents: 1,
    iban: 'x',
    created_at: instant(c, 2),
    updated_at: instant(c, 2),
  })
  await db.insertInto('wfa_employees').values([employee(1, 1, 5), employee(2, 2, 5), employee(3, 2, 9)]).execute()
  await db.insertInto('wfa_todo_lists').values([{ id: 1, company_id: 1, name: 'L1' }, { id: 2, company_id: 2, name: 'L2' }]).execute()
  const todo = (id: number, company_id: number, assigned_to: number | null, claimed_by: number | null) => ({
    id,
    company_id,
    title: `T${id}`,
    notes: null,
    status: 'open',
    priority: 'normal',
    important: c.bool(false),
    due_day: null,
    due_at: null,
    due_is_all_day: c.bool(false),
    list_id: company_id,
    assigned_to,
    assignee_group_id: null,
    claimed_by,
    checklist: c.json([]),
    tag_ids: c.json([]),
    source: null,
    created_at: instant(c, 3),
    updated_at: instant(c, 3),
  })
  await db.insertInto('wfa_todos').values([todo(1, 1, 5, 5), todo(2, 2, 5, 5), todo(3, 2, 9, 5), todo(4, 2, null, 9)]).execute()
}

/** After the migration: the first membership keeps the person's id, the others get fresh ids above 9, references follow. */
export async function expectMigrated(db: Kysely<any>, c: SqlCodec, adapter: ReferenceAdapterPorts): Promise<void> {
  const int = (value: unknown) => (value === null ? null : c.readInt(value))
  const memberships = (await db.selectFrom('wfa_memberships').select(['company_id', 'user_id', 'person_id', 'invitation_status']).orderBy('company_id').orderBy('user_id').execute()).map(
    (row) => [int(row.company_id), int(row.user_id), int(row.person_id), row.invitation_status],
  )
  expect(memberships, 'memberships: [company, user id, person, status]').toEqual([
    [1, 5, 5, 'accepted'],
    [2, 9, 9, 'accepted'],
    [2, 10, 5, 'accepted'],
    [3, 11, null, 'pending'],
  ])
  const employees = (await db.selectFrom('wfa_employees').select(['id', 'user_id']).orderBy('id').execute()).map((row) => [int(row.id), int(row.user_id)])
  expect(employees, 'employees: [id, user id]').toEqual([[1, 5], [2, 10], [3, 9]])
  const todos = (await db.selectFrom('wfa_todos').select(['id', 'assigned_to', 'claimed_by']).orderBy('id').execute()).map((row) => [int(row.id), int(row.assigned_to), int(row.claimed_by)])
  expect(todos, 'to-dos: [id, assigned_to, claimed_by]').toEqual([[1, 5, 5], [2, 10, 10], [3, 9, 10], [4, null, 9]])

  // Through the ports: each company sees its own id for the person; company 3 what it sent.
  expect(await adapter.storage.users.get(1, 5)).toMatchObject({ id: 5, email: 'shared@example.com', invitation_status: 'accepted' })
  expect(await adapter.storage.users.get(2, 10)).toMatchObject({ id: 10, email: 'shared@example.com', invitation_status: 'accepted' })
  expect(await adapter.storage.users.get(2, 5), "company 2: company 1's id for the person names nobody").toBeNull()
  expect(await adapter.storage.users.get(3, 11)).toMatchObject({ id: 11, email: 'SHARED@example.com', first_name: 'Sent', active: false, invitation_status: 'pending' })
  // The person is still one login: a change through company 1 reaches company 2's user.
  const writes = adapter.writes
  if (writes === undefined) throw new Error('the adapter has no writes')
  const later = new Date(Date.UTC(2026, 1, 1))
  await writes.transaction((tx) => tx.setUserActive(1, 5, false, later))
  expect(await adapter.storage.users.get(2, 10)).toMatchObject({ active: false, updated_at: later })
  // The next user gets an id above every id there was.
  const next = await writes.transaction((tx) => tx.addPendingMembership(1, [], { email: 'new@example.com', first_name: 'N', last_name: 'U' }, later))
  expect(next).toBe(12)
}
