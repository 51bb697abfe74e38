import type { Kysely, Migration, CreateTableBuilder } from 'kysely'
import type { SqlColumnTypes } from '../codec.js'

/**
 * The foundation: companies, people and their memberships, the read resources' tables, API
 * keys and the companies' modules. Self-contained like every migration.
 */
export function initial(t: SqlColumnTypes): Migration {
  // Hosts share their database with us: every object carries the wfa_ prefix.
  const withId = <N extends string>(table: CreateTableBuilder<N, never>) =>
    t.dialect === 'sqlite'
      ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      : table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
  const timestamps = <N extends string>(table: CreateTableBuilder<N, never>) =>
    table.addColumn('created_at', t.instant, (c) => c.notNull()).addColumn('updated_at', t.instant, (c) => c.notNull())

  return {
    async up(db: Kysely<any>) {
      await timestamps(
        withId(db.schema.createTable('wfa_companies'))
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('timezone', 'text', (c) => c.notNull())
          .addColumn('country', 'text', (c) => c.notNull()),
      ).execute()

      await timestamps(
        withId(db.schema.createTable('wfa_users'))
          .addColumn('email', 'text', (c) => c.notNull())
          .addColumn('email_lower', 'text', (c) => c.notNull().unique())
          .addColumn('first_name', 'text', (c) => c.notNull())
          .addColumn('last_name', 'text', (c) => c.notNull())
          .addColumn('active', t.bool, (c) => c.notNull())
          .addColumn('password_hash', 'text', (c) => c.notNull()),
      ).execute()

      await timestamps(
        db.schema
          .createTable('wfa_memberships')
          .addColumn('company_id', t.bigint, (c) => c.notNull())
          .addColumn('user_id', t.bigint, (c) => c.notNull())
          .addColumn('role_ids', t.json, (c) => c.notNull())
          .addPrimaryKeyConstraint('wfa_memberships_pk', ['company_id', 'user_id']),
      ).execute()

      await timestamps(
        withId(db.schema.createTable('wfa_roles'))
          .addColumn('company_id', t.bigint, (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('permissions', t.json, (c) => c.notNull()),
      ).execute()

      await timestamps(
        withId(db.schema.createTable('wfa_employees'))
          .addColumn('company_id', t.bigint, (c) => c.notNull())
          .addColumn('user_id', t.bigint)
          .addColumn('employee_number', 'text', (c) => c.notNull())
          .addColumn('job_title', 'text')
          .addColumn('contract_type', 'text', (c) => c.notNull())
          .addColumn('weekly_hours', t.real, (c) => c.notNull())
          .addColumn('hire_date', t.day, (c) => c.notNull())
          .addColumn('termination_date', t.day)
          .addColumn('supervisor_id', t.bigint)
          .addColumn('salary_cents', t.bigint, (c) => c.notNull())
          .addColumn('iban', 'text', (c) => c.notNull()),
      ).execute()

      await timestamps(
        withId(db.schema.createTable('wfa_projects'))
          .addColumn('company_id', t.bigint, (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('code', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('customer_id', t.bigint)
          .addColumn('starts_on', t.day)
          .addColumn('ends_on', t.day)
          .addColumn('offer_number', 'text')
          .addColumn('internal_notes', 'text'),
      ).execute()

      await timestamps(
        withId(db.schema.createTable('wfa_shifts'))
          .addColumn('company_id', t.bigint, (c) => c.notNull())
          .addColumn('employee_id', t.bigint, (c) => c.notNull())
          .addColumn('project_id', t.bigint)
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('starts_at', t.instant, (c) => c.notNull())
          .addColumn('ends_at', t.instant, (c) => c.notNull())
          .addColumn('break_minutes', 'integer', (c) => c.notNull())
          .addColumn('internal_notes', 'text'),
      ).execute()

      await timestamps(
        withId(db.schema.createTable('wfa_absences'))
          .addColumn('company_id', t.bigint, (c) => c.notNull())
          .addColumn('employee_id', t.bigint, (c) => c.notNull())
          .addColumn('date', t.day, (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('hours', t.real, (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('reason', 'text'),
      ).execute()

      await timestamps(
        withId(db.schema.createTable('wfa_expenses'))
          .addColumn('company_id', t.bigint, (c) => c.notNull())
          .addColumn('employee_id', t.bigint, (c) => c.notNull())
          .addColumn('project_id', t.bigint)
          .addColumn('category', 'text', (c) => c.notNull())
          .addColumn('description', 'text', (c) => c.notNull())
          .addColumn('date', t.day, (c) => c.notNull())
          // Money is an integer count of hundredths, never a float.
          .addColumn('amount_cents', t.bigint, (c) => c.notNull())
          .addColumn('currency', 'text', (c) => c.notNull())
          .addColumn('km', t.real),
      ).execute()

      await withId(db.schema.createTable('wfa_todo_lists'))
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .execute()

      await timestamps(
        withId(db.schema.createTable('wfa_todos'))
          .addColumn('company_id', t.bigint, (c) => c.notNull())
          .addColumn('title', 'text', (c) => c.notNull())
          .addColumn('notes', 'text')
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('priority', 'text', (c) => c.notNull())
          .addColumn('important', t.bool, (c) => c.notNull())
          // Exactly one of due_day (all-day) and due_at (timed) is set, or neither.
          .addColumn('due_day', t.day)
          .addColumn('due_at', t.instant)
          .addColumn('due_is_all_day', t.bool, (c) => c.notNull())
          .addColumn('list_id', t.bigint, (c) => c.notNull())
          .addColumn('assigned_to', t.bigint)
          .addColumn('assignee_group_id', t.bigint)
          .addColumn('claimed_by', t.bigint)
          .addColumn('checklist', t.json, (c) => c.notNull())
          .addColumn('tag_ids', t.json, (c) => c.notNull())
          .addColumn('source', t.json),
      ).execute()

      await db.schema
        .createTable('wfa_api_keys')
        .addColumn('key_id', 'text', (c) => c.primaryKey())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('scopes', t.json, (c) => c.notNull())
        .addColumn('expires_at', t.instant)
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('created_at', t.instant, (c) => c.notNull())
        .addColumn('last_used_at', t.instant)
        .execute()

      await db.schema
        .createTable('wfa_company_modules')
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('module', 'text', (c) => c.notNull())
        .addColumn('active', t.bool, (c) => c.notNull())
        .addPrimaryKeyConstraint('wfa_company_modules_pk', ['company_id', 'module'])
        .execute()

      // Every list is scoped to a company and ordered by id; each filter gets an index
      // that leads with company_id so it is a range scan inside the tenant.
      const indexes: Array<[string, string, string[]]> = [
        ['wfa_memberships_company_user', 'wfa_memberships', ['company_id', 'user_id']],
        ['wfa_memberships_company_updated', 'wfa_memberships', ['company_id', 'updated_at']],
        ['wfa_memberships_user', 'wfa_memberships', ['user_id']],
        ['wfa_roles_company_id', 'wfa_roles', ['company_id', 'id']],
        ['wfa_employees_company_id', 'wfa_employees', ['company_id', 'id']],
        ['wfa_employees_company_updated', 'wfa_employees', ['company_id', 'updated_at']],
        ['wfa_projects_company_id', 'wfa_projects', ['company_id', 'id']],
        ['wfa_projects_company_status', 'wfa_projects', ['company_id', 'status', 'id']],
        ['wfa_projects_company_kind', 'wfa_projects', ['company_id', 'kind', 'id']],
        ['wfa_projects_company_customer', 'wfa_projects', ['company_id', 'customer_id', 'id']],
        ['wfa_projects_company_updated', 'wfa_projects', ['company_id', 'updated_at']],
        ['wfa_shifts_company_id', 'wfa_shifts', ['company_id', 'id']],
        ['wfa_shifts_company_employee', 'wfa_shifts', ['company_id', 'employee_id', 'id']],
        ['wfa_shifts_company_project', 'wfa_shifts', ['company_id', 'project_id', 'id']],
        ['wfa_shifts_company_status', 'wfa_shifts', ['company_id', 'status', 'id']],
        ['wfa_shifts_company_starts', 'wfa_shifts', ['company_id', 'starts_at']],
        ['wfa_shifts_company_updated', 'wfa_shifts', ['company_id', 'updated_at']],
        ['wfa_absences_company_id', 'wfa_absences', ['company_id', 'id']],
        ['wfa_absences_company_employee', 'wfa_absences', ['company_id', 'employee_id', 'id']],
        ['wfa_absences_company_status', 'wfa_absences', ['company_id', 'status', 'id']],
        ['wfa_absences_company_date', 'wfa_absences', ['company_id', 'date']],
        ['wfa_absences_company_updated', 'wfa_absences', ['company_id', 'updated_at']],
        ['wfa_expenses_company_id', 'wfa_expenses', ['company_id', 'id']],
        ['wfa_expenses_company_employee', 'wfa_expenses', ['company_id', 'employee_id', 'id']],
        ['wfa_expenses_company_project', 'wfa_expenses', ['company_id', 'project_id', 'id']],
        ['wfa_expenses_company_category', 'wfa_expenses', ['company_id', 'category', 'id']],
        ['wfa_expenses_company_date', 'wfa_expenses', ['company_id', 'date']],
        ['wfa_expenses_company_updated', 'wfa_expenses', ['company_id', 'updated_at']],
        ['wfa_todo_lists_company_id', 'wfa_todo_lists', ['company_id', 'id']],
        ['wfa_todos_company_id', 'wfa_todos', ['company_id', 'id']],
        ['wfa_todos_company_status', 'wfa_todos', ['company_id', 'status', 'id']],
        ['wfa_todos_company_assigned', 'wfa_todos', ['company_id', 'assigned_to', 'id']],
        ['wfa_todos_company_list', 'wfa_todos', ['company_id', 'list_id', 'id']],
        ['wfa_todos_company_due_day', 'wfa_todos', ['company_id', 'due_day']],
        ['wfa_todos_company_due_at', 'wfa_todos', ['company_id', 'due_at']],
        ['wfa_todos_company_updated', 'wfa_todos', ['company_id', 'updated_at']],
        ['wfa_api_keys_company', 'wfa_api_keys', ['company_id']],
      ]
      for (const [name, table, columns] of indexes) {
        await db.schema.createIndex(name).on(table).columns(columns).execute()
      }
    },
    async down(db: Kysely<any>) {
      for (const table of [
        'wfa_company_modules',
        'wfa_api_keys',
        'wfa_todos',
        'wfa_todo_lists',
        'wfa_expenses',
        'wfa_absences',
        'wfa_shifts',
        'wfa_projects',
        'wfa_employees',
        'wfa_roles',
        'wfa_memberships',
        'wfa_users',
        'wfa_companies',
      ]) {
        await db.schema.dropTable(table).ifExists().execute()
      }
    },
  }
}
