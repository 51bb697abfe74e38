import { sql, type Kysely, type Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * Issue 21: a user's id is the company's own. A membership keeps its `user_id` as the user's
 * id in that company and gains `person_id`, the person behind it once accepted (null while
 * pending, which is how every user added through the API now starts). A person who belongs to
 * several companies keeps their id in their oldest membership; each further membership gets a
 * fresh id above every existing one, and every reference to the user inside that company
 * (employees' `user_id`, to-dos' `assigned_to` and `claimed_by`) follows. `wfa_id_counters`
 * holds the last user id given, so an id is never given twice, not even after a declined
 * invitation. The people trigger of 0006 now finds memberships by `person_id`.
 * `down` restores the columns and the trigger, not the old ids. Self-contained like every migration.
 */
export function perCompanyUserIds(t: SqlColumnTypes, schema: string | undefined): Migration {
  const q = (name: string) => (schema === undefined ? name : `"${schema.replaceAll('"', '""')}".${name}`)
  const peopleTrigger = (column: 'person_id' | 'user_id'): string[] =>
    t.dialect === 'sqlite'
      ? [
          'DROP TRIGGER IF EXISTS wfa_lv_people_update',
          `CREATE TRIGGER wfa_lv_people_update AFTER UPDATE ON wfa_users BEGIN
             UPDATE ${q('wfa_list_versions')} SET updates = updates + 1
             WHERE resource = 'users' AND company_id IN (SELECT company_id FROM ${q('wfa_memberships')} WHERE ${column} = NEW.id);
           END`,
        ]
      : [
          `CREATE OR REPLACE FUNCTION ${q('wfa_lv_people_update')}() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
             UPDATE ${q('wfa_list_versions')} SET updates = updates + 1
             WHERE resource = 'users' AND company_id IN (SELECT m.company_id FROM ${q('wfa_memberships')} AS m JOIN new_rows AS n ON n.id = m.${column});
             RETURN NULL;
           END $$`,
        ]
  const indexes: Array<[string, string[], boolean]> = [
    // A person is a member of a company once; `acceptMembership` relies on it.
    ['wfa_memberships_company_person', ['company_id', 'person_id'], true],
    // A company invites an email once (NULLs, i.e. accepted members, do not collide); the email filter.
    ['wfa_memberships_company_invited_email', ['company_id', 'invited_email_lower'], true],
    ['wfa_memberships_person', ['person_id'], false],
  ]
  const int = (value: unknown) => Number(value ?? 0)
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_memberships').addColumn('person_id', t.bigint).execute()
      await db
        .updateTable('wfa_memberships')
        .set((eb) => ({ person_id: eb.ref('user_id') }))
        .where('invitation_status', '=', 'accepted')
        .execute()

      const users = await db.selectFrom('wfa_users').select((eb) => eb.fn.max('id').as('highest')).executeTakeFirst()
      const members = await db.selectFrom('wfa_memberships').select((eb) => eb.fn.max('user_id').as('highest')).executeTakeFirst()
      let last = Math.max(int(users?.highest), int(members?.highest))
      const shared = await db
        .selectFrom('wfa_memberships')
        .select(['company_id', 'user_id'])
        .where('user_id', 'in', db.selectFrom('wfa_memberships').select('user_id').groupBy('user_id').having(sql`count(*)`, '>', 1))
        .orderBy('user_id')
        .orderBy('created_at')
        .orderBy('company_id')
        .execute()
      let previous: number | undefined
      for (const row of shared) {
        const companyId = int(row.company_id)
        const old = int(row.user_id)
        const first = old !== previous
        previous = old
        if (first) continue
        const fresh = ++last
        await db.updateTable('wfa_memberships').set({ user_id: fresh }).where('company_id', '=', companyId).where('user_id', '=', old).execute()
        await db.updateTable('wfa_employees').set({ user_id: fresh }).where('company_id', '=', companyId).where('user_id', '=', old).execute()
        for (const column of ['assigned_to', 'claimed_by']) {
          await db.updateTable('wfa_todos').set({ [column]: fresh }).where('company_id', '=', companyId).where(column, '=', old).execute()
        }
      }

      await db.schema
        .createTable('wfa_id_counters')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', t.bigint, (c) => c.notNull())
        .execute()
      await db.insertInto('wfa_id_counters').values({ name: 'users', value: last }).execute()
      for (const [name, columns, unique] of indexes) {
        const index = db.schema.createIndex(name).on('wfa_memberships').columns(columns)
        await (unique ? index.unique() : index).execute()
      }
      for (const statement of peopleTrigger('person_id')) await sql.raw(statement).execute(db)
    },
    async down(db: Kysely<any>) {
      for (const statement of peopleTrigger('user_id')) await sql.raw(statement).execute(db)
      for (const [name] of indexes) await db.schema.dropIndex(name).ifExists().execute()
      await db.schema.dropTable('wfa_id_counters').ifExists().execute()
      await db.schema.alterTable('wfa_memberships').dropColumn('person_id').execute()
    },
  }
}
