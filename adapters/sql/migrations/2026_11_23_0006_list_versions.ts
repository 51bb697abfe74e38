import { sql, type Kysely, type Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * Issue 13: per company and list resource, three counters that every change of a listed row
 * bumps in its own transaction, kept by triggers so a host's direct SQL writes count too.
 * `appends`: a row inserted after every existing row of its company (spec 4.2.1: new records
 * append). `updates`: a row changed in place. `removals`: a row deleted, moved to another
 * company or id, or inserted before an existing row. Lists cache totals and page boundaries
 * by these counters (docs/decisions.md): a version read is one primary-key lookup.
 */
export function listVersions(t: SqlColumnTypes, schema: string | undefined): Migration {
  // Raw SQL is not rewritten by Kysely's withSchema, and a trigger runs with the search_path of
  // whoever writes: every name is qualified with the schema the tables live in.
  const q = (name: string) => (schema === undefined ? name : `"${schema.replaceAll('"', '""')}".${name}`)
  // [resource, table, id column]: the rows each list resource reads, by the column it orders by.
  const LISTED: ReadonlyArray<readonly [string, string, string]> = [
    ['users', 'wfa_memberships', 'user_id'],
    ['employees', 'wfa_employees', 'id'],
    ['roles', 'wfa_roles', 'id'],
    ['projects', 'wfa_projects', 'id'],
    ['shifts', 'wfa_shifts', 'id'],
    ['absences', 'wfa_absences', 'id'],
    ['expenses', 'wfa_expenses', 'id'],
    ['todos', 'wfa_todos', 'id'],
  ]
  const bump = (company: string, resource: string, appends: string, updates: string, removals: string) =>
    `INSERT INTO ${q('wfa_list_versions')} (company_id, resource, appends, updates, removals) VALUES (${company}, '${resource}', ${appends}, ${updates}, ${removals})
     ON CONFLICT (company_id, resource) DO UPDATE SET appends = wfa_list_versions.appends + excluded.appends,
       updates = wfa_list_versions.updates + excluded.updates, removals = wfa_list_versions.removals + excluded.removals`

  const sqliteTriggers = (resource: string, table: string, id: string): string[] => [
    `CREATE TRIGGER wfa_lv_${resource}_insert AFTER INSERT ON ${table} BEGIN
       ${bump('NEW.company_id', resource, '1', '0', `(CASE WHEN EXISTS (SELECT 1 FROM ${q(table)} AS later WHERE later.company_id = NEW.company_id AND later.${id} > NEW.${id}) THEN 1 ELSE 0 END)`)};
     END`,
    `CREATE TRIGGER wfa_lv_${resource}_update AFTER UPDATE ON ${table} BEGIN
       ${bump('NEW.company_id', resource, '0', '1', `(CASE WHEN OLD.company_id IS NOT NEW.company_id OR OLD.${id} IS NOT NEW.${id} THEN 1 ELSE 0 END)`)};
       ${bump('OLD.company_id', resource, '0', '0', `(CASE WHEN OLD.company_id IS NOT NEW.company_id THEN 1 ELSE 0 END)`)};
     END`,
    `CREATE TRIGGER wfa_lv_${resource}_delete AFTER DELETE ON ${table} BEGIN
       ${bump('OLD.company_id', resource, '0', '0', '1')};
     END`,
  ]

  // Postgres: one statement-level trigger per operation, over the statement's transition
  // tables, so a bulk insert of a million rows bumps each company's counter once, not per row.
  const postgresTriggers = (resource: string, table: string, id: string): string[] => {
    const fn = `wfa_lv_${resource}`
    return [
      `CREATE FUNCTION ${q(fn)}_insert() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${q('wfa_list_versions')} (company_id, resource, appends, updates, removals)
         SELECT n.company_id, '${resource}', count(*),  0,
                CASE WHEN EXISTS (SELECT 1 FROM ${q(table)} AS t WHERE t.company_id = n.company_id AND t.${id} > min(n.${id})
                                  AND NOT EXISTS (SELECT 1 FROM new_rows AS m WHERE m.company_id = t.company_id AND m.${id} = t.${id}))
                     THEN 1 ELSE 0 END
         FROM new_rows AS n GROUP BY n.company_id
         ON CONFLICT (company_id, resource) DO UPDATE SET appends = wfa_list_versions.appends + excluded.appends,
           updates = wfa_list_versions.updates + excluded.updates, removals = wfa_list_versions.removals + excluded.removals;
         RETURN NULL;
       END $$`,
      `CREATE TRIGGER ${fn}_insert AFTER INSERT ON ${q(table)} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${q(fn)}_insert()`,
      `CREATE FUNCTION ${q(fn)}_update() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${q('wfa_list_versions')} (company_id, resource, appends, updates, removals)
         SELECT c.company_id, '${resource}', 0, 1,
                CASE WHEN EXISTS (SELECT company_id, ${id} FROM new_rows WHERE company_id = c.company_id
                                  EXCEPT SELECT company_id, ${id} FROM old_rows WHERE company_id = c.company_id)
                       OR EXISTS (SELECT company_id, ${id} FROM old_rows WHERE company_id = c.company_id
                                  EXCEPT SELECT company_id, ${id} FROM new_rows WHERE company_id = c.company_id)
                     THEN 1 ELSE 0 END
         FROM (SELECT company_id FROM new_rows UNION SELECT company_id FROM old_rows) AS c
         ON CONFLICT (company_id, resource) DO UPDATE SET appends = wfa_list_versions.appends + excluded.appends,
           updates = wfa_list_versions.updates + excluded.updates, removals = wfa_list_versions.removals + excluded.removals;
         RETURN NULL;
       END $$`,
      `CREATE TRIGGER ${fn}_update AFTER UPDATE ON ${q(table)} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${q(fn)}_update()`,
      `CREATE FUNCTION ${q(fn)}_delete() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${q('wfa_list_versions')} (company_id, resource, appends, updates, removals)
         SELECT DISTINCT o.company_id, '${resource}', 0, 0, 1 FROM old_rows AS o
         ON CONFLICT (company_id, resource) DO UPDATE SET removals = wfa_list_versions.removals + 1;
         RETURN NULL;
       END $$`,
      `CREATE TRIGGER ${fn}_delete AFTER DELETE ON ${q(table)} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${q(fn)}_delete()`,
    ]
  }

  // A person's login, email or name is part of every company's user list they are a member of.
  const peopleSqlite = `CREATE TRIGGER wfa_lv_people_update AFTER UPDATE ON wfa_users BEGIN
       UPDATE ${q('wfa_list_versions')} SET updates = updates + 1
       WHERE resource = 'users' AND company_id IN (SELECT company_id FROM ${q('wfa_memberships')} WHERE user_id = NEW.id);
     END`
  const peoplePostgres = [
    `CREATE FUNCTION ${q('wfa_lv_people_update')}() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       UPDATE ${q('wfa_list_versions')} SET updates = updates + 1
       WHERE resource = 'users' AND company_id IN (SELECT m.company_id FROM ${q('wfa_memberships')} AS m JOIN new_rows AS n ON n.id = m.user_id);
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER wfa_lv_people_update AFTER UPDATE ON ${q('wfa_users')} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${q('wfa_lv_people_update')}()`,
  ]

  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('wfa_list_versions')
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('appends', t.bigint, (c) => c.notNull())
        .addColumn('updates', t.bigint, (c) => c.notNull())
        .addColumn('removals', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('wfa_list_versions_pkey', ['company_id', 'resource'])
        .execute()
      const statements =
        t.dialect === 'sqlite'
          ? [...LISTED.flatMap(([resource, table, id]) => sqliteTriggers(resource, table, id)), peopleSqlite]
          : [...LISTED.flatMap(([resource, table, id]) => postgresTriggers(resource, table, id)), ...peoplePostgres]
      for (const statement of statements) await sql.raw(statement).execute(db)
    },
    async down(db: Kysely<any>) {
      if (t.dialect === 'sqlite') {
        for (const [resource] of LISTED) for (const op of ['insert', 'update', 'delete']) await sql.raw(`DROP TRIGGER IF EXISTS wfa_lv_${resource}_${op}`).execute(db)
        await sql.raw('DROP TRIGGER IF EXISTS wfa_lv_people_update').execute(db)
      } else {
        for (const [resource, table] of LISTED) {
          for (const op of ['insert', 'update', 'delete']) {
            await sql.raw(`DROP TRIGGER IF EXISTS wfa_lv_${resource}_${op} ON ${q(table)}`).execute(db)
            await sql.raw(`DROP FUNCTION IF EXISTS ${q(`wfa_lv_${resource}_${op}`)}()`).execute(db)
          }
        }
        await sql.raw(`DROP TRIGGER IF EXISTS wfa_lv_people_update ON ${q('wfa_users')}`).execute(db)
        await sql.raw(`DROP FUNCTION IF EXISTS ${q('wfa_lv_people_update')}()`).execute(db)
      }
      await db.schema.dropTable('wfa_list_versions').ifExists().execute()
    },
  }
}
