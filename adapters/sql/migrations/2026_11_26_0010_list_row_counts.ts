import { sql, type Kysely, type Migration } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/** Ids per block of `wfa_list_blocks` (migration 0010); frozen with it. */
const LIST_BLOCK_IDS = 1024

/**
 * Issue 22: any page of a list costs about what its first page costs, cold.
 * - `wfa_list_versions.row_count`: each company's rows per list resource, kept by the same
 *   triggers as the counters of 0006 in each change's own transaction, so the total of an
 *   unfiltered list is one primary-key lookup instead of a COUNT over every row of the company.
 * - `wfa_list_blocks`: the same count per block of 1,024 consecutive ids (`id / 1024`), kept by
 *   the same triggers: the row at any position of an unfiltered list is found by summing a
 *   company's blocks (one row per 1,024 ids) and skipping inside one block, not by walking
 *   every row before it.
 * - Indexes that let a page's first row be found on an index alone (no table rows, no joins):
 *   the company-and-id index of each list table also holds its time-range columns, so a walk in
 *   id order can test a range on the index; and each time-range index also holds the id, so the
 *   rows of a narrow range are sorted by id without reading the table. Same names as before.
 * `down` restores 0006's triggers and the old indexes. Self-contained like every migration.
 */
export function listRowCounts(t: SqlColumnTypes, schema: string | undefined): Migration {
  const q = (name: string) => (schema === undefined ? name : `"${schema.replaceAll('"', '""')}".${name}`)
  // [resource, table, id column, the index on (company_id, id), its time-range columns with their index names]
  const LISTED: ReadonlyArray<readonly [string, string, string, string | null, ReadonlyArray<readonly [string, string]>]> = [
    ['users', 'wfa_memberships', 'user_id', 'wfa_memberships_company_user', [['updated_at', 'wfa_memberships_company_updated']]],
    ['employees', 'wfa_employees', 'id', 'wfa_employees_company_id', [['updated_at', 'wfa_employees_company_updated']]],
    ['roles', 'wfa_roles', 'id', null, []],
    ['projects', 'wfa_projects', 'id', 'wfa_projects_company_id', [['updated_at', 'wfa_projects_company_updated']]],
    ['shifts', 'wfa_shifts', 'id', 'wfa_shifts_company_id', [['starts_at', 'wfa_shifts_company_starts'], ['updated_at', 'wfa_shifts_company_updated']]],
    ['absences', 'wfa_absences', 'id', 'wfa_absences_company_id', [['date', 'wfa_absences_company_date'], ['updated_at', 'wfa_absences_company_updated']]],
    ['expenses', 'wfa_expenses', 'id', 'wfa_expenses_company_id', [['date', 'wfa_expenses_company_date'], ['updated_at', 'wfa_expenses_company_updated']]],
    [
      'todos',
      'wfa_todos',
      'id',
      'wfa_todos_company_id',
      [['due_day', 'wfa_todos_company_due_day'], ['due_at', 'wfa_todos_company_due_at'], ['updated_at', 'wfa_todos_company_updated']],
    ],
  ]
  const upsert = (counters: string) =>
    `ON CONFLICT (company_id, resource) DO UPDATE SET appends = wfa_list_versions.appends + excluded.appends,
       updates = wfa_list_versions.updates + excluded.updates, removals = wfa_list_versions.removals + excluded.removals${counters}`
  const countedRows = ', row_count = wfa_list_versions.row_count + excluded.row_count'

  /** SQLite: row-level triggers; with `rows`, each also moves `row_count`. */
  const sqliteTriggers = (resource: string, table: string, id: string, rows: boolean): string[] => {
    const bump = (company: string, appends: string, updates: string, removals: string, delta: string) =>
      rows
        ? `INSERT INTO ${q('wfa_list_versions')} (company_id, resource, appends, updates, removals, row_count) VALUES (${company}, '${resource}', ${appends}, ${updates}, ${removals}, ${delta})
           ${upsert(countedRows)}`
        : `INSERT INTO ${q('wfa_list_versions')} (company_id, resource, appends, updates, removals) VALUES (${company}, '${resource}', ${appends}, ${updates}, ${removals})
           ${upsert('')}`
    const moved = 'OLD.company_id IS NOT NEW.company_id'
    const blocks = q('wfa_list_blocks')
    const block = (row: 'NEW' | 'OLD', delta: string, when = '') =>
      `INSERT INTO ${blocks} (company_id, resource, block, row_count) SELECT ${row}.company_id, '${resource}', ${row}.${id} / ${LIST_BLOCK_IDS}, ${delta} WHERE true${when}
       ON CONFLICT (company_id, resource, block) DO UPDATE SET row_count = wfa_list_blocks.row_count + excluded.row_count;`
    const rekeyed = ` AND (${moved} OR OLD.${id} IS NOT NEW.${id})`
    return [
      `DROP TRIGGER IF EXISTS wfa_lv_${resource}_insert`,
      `DROP TRIGGER IF EXISTS wfa_lv_${resource}_update`,
      `DROP TRIGGER IF EXISTS wfa_lv_${resource}_delete`,
      `CREATE TRIGGER wfa_lv_${resource}_insert AFTER INSERT ON ${table} BEGIN
         ${bump('NEW.company_id', '1', '0', `(CASE WHEN EXISTS (SELECT 1 FROM ${q(table)} AS later WHERE later.company_id = NEW.company_id AND later.${id} > NEW.${id}) THEN 1 ELSE 0 END)`, '1')};
         ${rows ? block('NEW', '1') : ''}
       END`,
      `CREATE TRIGGER wfa_lv_${resource}_update AFTER UPDATE ON ${table} BEGIN
         ${bump('NEW.company_id', '0', '1', `(CASE WHEN ${moved} OR OLD.${id} IS NOT NEW.${id} THEN 1 ELSE 0 END)`, `(CASE WHEN ${moved} THEN 1 ELSE 0 END)`)};
         ${bump('OLD.company_id', '0', '0', `(CASE WHEN ${moved} THEN 1 ELSE 0 END)`, `(CASE WHEN ${moved} THEN -1 ELSE 0 END)`)};
         ${rows ? `${block('OLD', '-1', rekeyed)} ${block('NEW', '1', rekeyed)}` : ''}
       END`,
      `CREATE TRIGGER wfa_lv_${resource}_delete AFTER DELETE ON ${table} BEGIN
         ${bump('OLD.company_id', '0', '0', '1', '-1')};
         ${rows ? block('OLD', '-1') : ''}
       END`,
    ]
  }

  /** Postgres: the statement-level functions of 0006, replaced; with `rows`, each also moves `row_count`. */
  const postgresFunctions = (resource: string, table: string, id: string, rows: boolean): string[] => {
    const fn = q(`wfa_lv_${resource}`)
    const columns = `company_id, resource, appends, updates, removals${rows ? ', row_count' : ''}`
    const counters = rows ? countedRows : ''
    // Each block's change: +1 per new row, -1 per old one, netted (an update in place nets 0).
    const blocks = (deltas: string) =>
      rows
        ? `INSERT INTO ${q('wfa_list_blocks')} (company_id, resource, block, row_count)
         SELECT d.company_id, '${resource}', d.block, sum(d.delta) FROM (${deltas}) AS d
         GROUP BY d.company_id, d.block HAVING sum(d.delta) <> 0
         ON CONFLICT (company_id, resource, block) DO UPDATE SET row_count = wfa_list_blocks.row_count + excluded.row_count;`
        : ''
    const added = `SELECT company_id, ${id} / ${LIST_BLOCK_IDS} AS block, 1 AS delta FROM new_rows`
    const removed = `SELECT company_id, ${id} / ${LIST_BLOCK_IDS} AS block, -1 AS delta FROM old_rows`
    return [
      `CREATE OR REPLACE FUNCTION ${fn}_insert() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${q('wfa_list_versions')} (${columns})
         SELECT n.company_id, '${resource}', count(*),  0,
                CASE WHEN EXISTS (SELECT 1 FROM ${q(table)} AS t WHERE t.company_id = n.company_id AND t.${id} > min(n.${id})
                                  AND NOT EXISTS (SELECT 1 FROM new_rows AS m WHERE m.company_id = t.company_id AND m.${id} = t.${id}))
                     THEN 1 ELSE 0 END${rows ? ', count(*)' : ''}
         FROM new_rows AS n GROUP BY n.company_id
         ${upsert(counters)};
         ${blocks(added)}
         RETURN NULL;
       END $$`,
      `CREATE OR REPLACE FUNCTION ${fn}_update() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${q('wfa_list_versions')} (${columns})
         SELECT c.company_id, '${resource}', 0, 1,
                CASE WHEN EXISTS (SELECT company_id, ${id} FROM new_rows WHERE company_id = c.company_id
                                  EXCEPT SELECT company_id, ${id} FROM old_rows WHERE company_id = c.company_id)
                       OR EXISTS (SELECT company_id, ${id} FROM old_rows WHERE company_id = c.company_id
                                  EXCEPT SELECT company_id, ${id} FROM new_rows WHERE company_id = c.company_id)
                     THEN 1 ELSE 0 END${
                       rows
                         ? `,
                (SELECT count(*) FROM new_rows WHERE company_id = c.company_id) - (SELECT count(*) FROM old_rows WHERE company_id = c.company_id)`
                         : ''
                     }
         FROM (SELECT company_id FROM new_rows UNION SELECT company_id FROM old_rows) AS c
         ${upsert(counters)};
         ${blocks(`${added} UNION ALL ${removed}`)}
         RETURN NULL;
       END $$`,
      rows
        ? `CREATE OR REPLACE FUNCTION ${fn}_delete() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${q('wfa_list_versions')} (${columns})
         SELECT o.company_id, '${resource}', 0, 0, 1, -count(*) FROM old_rows AS o GROUP BY o.company_id
         ON CONFLICT (company_id, resource) DO UPDATE SET removals = wfa_list_versions.removals + 1,
           row_count = wfa_list_versions.row_count + excluded.row_count;
         ${blocks(removed)}
         RETURN NULL;
       END $$`
        : `CREATE OR REPLACE FUNCTION ${fn}_delete() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ${q('wfa_list_versions')} (${columns})
         SELECT DISTINCT o.company_id, '${resource}', 0, 0, 1 FROM old_rows AS o
         ON CONFLICT (company_id, resource) DO UPDATE SET removals = wfa_list_versions.removals + 1;
         RETURN NULL;
       END $$`,
    ]
  }
  const triggers = (rows: boolean) =>
    LISTED.flatMap(([resource, table, id]) => (t.dialect === 'sqlite' ? sqliteTriggers(resource, table, id, rows) : postgresFunctions(resource, table, id, rows)))

  /** Every index this migration replaces, as [name, table, columns] before and after. */
  const replaced = LISTED.flatMap(([, table, id, walk, ranges]) => {
    const columns = ranges.map(([column]) => column)
    const walkIndex: Array<readonly [string, string, string[], string[]]> =
      walk === null || columns.length === 0 ? [] : [[walk, table, ['company_id', id], ['company_id', id, ...columns]]]
    return [...walkIndex, ...ranges.map(([column, name]) => [name, table, ['company_id', column], ['company_id', column, id]] as const)]
  })
  const rebuild = async (db: Kysely<any>, pick: 2 | 3) => {
    for (const index of replaced) {
      await db.schema.dropIndex(index[0]).ifExists().execute()
      await db.schema.createIndex(index[0]).on(index[1]).columns([...index[pick]]).execute()
    }
  }

  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_list_versions').addColumn('row_count', t.bigint, (c) => c.notNull().defaultTo(0)).execute()
      await db.schema
        .createTable('wfa_list_blocks')
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('block', t.bigint, (c) => c.notNull())
        .addColumn('row_count', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('wfa_list_blocks_pkey', ['company_id', 'resource', 'block'])
        .execute()
      for (const [resource, table, id] of LISTED) {
        // `WHERE true`: SQLite reads ON CONFLICT after a bare SELECT … GROUP BY as part of the SELECT.
        await sql
          .raw(
            `INSERT INTO ${q('wfa_list_versions')} (company_id, resource, appends, updates, removals, row_count)
             SELECT company_id, '${resource}', 0, 0, 0, count(*) FROM ${q(table)} WHERE true GROUP BY company_id
             ON CONFLICT (company_id, resource) DO UPDATE SET row_count = excluded.row_count`,
          )
          .execute(db)
        await sql
          .raw(
            `INSERT INTO ${q('wfa_list_blocks')} (company_id, resource, block, row_count)
             SELECT company_id, '${resource}', ${id} / ${LIST_BLOCK_IDS}, count(*) FROM ${q(table)} GROUP BY company_id, ${id} / ${LIST_BLOCK_IDS}`,
          )
          .execute(db)
      }
      for (const statement of triggers(true)) await sql.raw(statement).execute(db)
      await rebuild(db, 3)
    },
    async down(db: Kysely<any>) {
      await rebuild(db, 2)
      for (const statement of triggers(false)) await sql.raw(statement).execute(db)
      await db.schema.dropTable('wfa_list_blocks').ifExists().execute()
      await db.schema.alterTable('wfa_list_versions').dropColumn('row_count').execute()
    },
  }
}
