import { sql, type ColumnDefinitionBuilder, type Kysely, type Migration, type CreateTableBuilder } from 'kysely'
import type { SqlColumnTypes } from './codec.js'

/**
 * The schema's migrations, frozen in time: they never import application code, so a
 * later change to the code cannot change what an old migration does. Listed explicitly,
 * in order; names sort lexically.
 */
export function createMigrations(types: SqlColumnTypes, schema?: string): Record<string, Migration> {
  return {
    '2026_11_21_0001_initial': initial(types),
    '2026_11_22_0002_writes': writes(types),
    '2026_11_23_0003_invitations': invitations(),
    '2026_11_23_0004_key_rate_limits': keyRateLimits(),
    '2026_11_23_0005_webhooks': webhooks(types),
    '2026_11_23_0006_list_versions': listVersions(types, schema),
    '2026_11_23_0007_admin': admin(types),
    '2026_11_26_0008_endpoint_health': endpointHealth(types),
    '2026_11_26_0009_per_company_user_ids': perCompanyUserIds(types, schema),
    '2026_11_26_0010_list_row_counts': listRowCounts(types, schema),
  }
}

function initial(t: SqlColumnTypes): Migration {
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

/**
 * The write path (issue 4): the change-event outbox the webhook deliverer will read, and the
 * durable idempotency records of spec 4.4. Self-contained like every migration.
 */
function writes(t: SqlColumnTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      const events = db.schema.createTable('wfa_change_events')
      await (
        t.dialect === 'sqlite'
          ? events.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          : events.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      )
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('resource_id', t.bigint, (c) => c.notNull())
        .addColumn('occurred_at', t.instant, (c) => c.notNull())
        .execute()
      // The outbox reads a company's events in id order from a cursor.
      await db.schema.createIndex('wfa_change_events_company_id').on('wfa_change_events').columns(['company_id', 'id']).execute()

      await db.schema
        .createTable('wfa_idempotency')
        // SHA-256 hex of the Authorization header and the Idempotency-Key; never the raw header.
        .addColumn('slot', 'text', (c) => c.primaryKey())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        // 'in_flight' | 'completed'
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('token', 'text', (c) => c.notNull())
        .addColumn('lease_until', t.instant, (c) => c.notNull())
        .addColumn('created_at', t.instant, (c) => c.notNull())
        .addColumn('completed_at', t.instant)
        .addColumn('response_status', 'integer')
        .addColumn('response_headers', t.json)
        .addColumn('response_body', 'text')
        .execute()
      // Purging expired records scans by age.
      await db.schema.createIndex('wfa_idempotency_created').on('wfa_idempotency').column('created_at').execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('wfa_idempotency').ifExists().execute()
      await db.schema.dropTable('wfa_change_events').ifExists().execute()
    },
  }
}

/**
 * Pending memberships (issue 8): a company that adds a person who already has a login gets a
 * membership that stays `pending` until the person accepts, and shows the company only what it
 * sent (`invited_*`, null once accepted). Existing memberships become `accepted`. One column per
 * ALTER TABLE: SQLite adds one at a time. Self-contained like every migration.
 */
function invitations(): Migration {
  const added: Array<[string, (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder]> = [
    // 'accepted' | 'pending'
    ['invitation_status', (c) => c.notNull().defaultTo('accepted')],
    ['invited_email', (c) => c],
    // The email filter of a pending member compares this (JavaScript's toLowerCase, like email_lower).
    ['invited_email_lower', (c) => c],
    ['invited_first_name', (c) => c],
    ['invited_last_name', (c) => c],
  ]
  return {
    async up(db: Kysely<any>) {
      for (const [name, build] of added) {
        await db.schema.alterTable('wfa_memberships').addColumn(name, 'text', build).execute()
      }
    },
    async down(db: Kysely<any>) {
      for (const [name] of [...added].reverse()) {
        await db.schema.alterTable('wfa_memberships').dropColumn(name).execute()
      }
    },
  }
}

/**
 * A key's own rate limit (issue 9): requests per window, overriding the plugin's default;
 * null for the default. Self-contained like every migration.
 */
function keyRateLimits(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_api_keys').addColumn('rate_limit', 'integer').execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable('wfa_api_keys').dropColumn('rate_limit').execute()
    },
  }
}

/**
 * Webhook delivery (issue 10): each change event gets its `evt_…` id and its rendered body,
 * and endpoints, deliveries (one per event and endpoint) and their attempts get tables.
 * Events recorded before this migration keep null in both columns: none has a delivery.
 * One column per ALTER TABLE: SQLite adds one at a time. Self-contained like every migration.
 */
function webhooks(t: SqlColumnTypes): Migration {
  const withId = <N extends string>(table: CreateTableBuilder<N, never>) =>
    t.dialect === 'sqlite'
      ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      : table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_change_events').addColumn('event_id', 'text').execute()
      await db.schema.alterTable('wfa_change_events').addColumn('payload', 'text').execute()
      // Redelivery finds an event by its public id; unique, and null only on older rows.
      await db.schema.createIndex('wfa_change_events_event_id').unique().on('wfa_change_events').column('event_id').execute()

      await db.schema
        .createTable('wfa_webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('events', t.json, (c) => c.notNull())
        // 'enabled' | 'disabled'
        .addColumn('status', 'text', (c) => c.notNull())
        // 'manual' | 'gone' | 'failing', set while disabled
        .addColumn('disabled_reason', 'text')
        // Sealed by the plugin: never a plain secret.
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_expires_at', t.instant)
        .addColumn('failing_since', t.instant)
        .addColumn('created_at', t.instant, (c) => c.notNull())
        .addColumn('updated_at', t.instant, (c) => c.notNull())
        .execute()

      await withId(db.schema.createTable('wfa_webhook_deliveries'))
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        // wfa_change_events.id; no foreign key, so purging can go in batches in any order.
        .addColumn('change_event_id', t.bigint, (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        // 'pending' | 'delivered' | 'failed'
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', t.instant)
        // The current claim's token; null while no dispatcher holds the delivery.
        .addColumn('lease', 'text')
        .addColumn('created_at', t.instant, (c) => c.notNull())
        .addColumn('updated_at', t.instant, (c) => c.notNull())
        .execute()

      await withId(db.schema.createTable('wfa_webhook_attempts'))
        .addColumn('delivery_id', t.bigint, (c) => c.notNull())
        .addColumn('number', 'integer', (c) => c.notNull())
        .addColumn('attempted_at', t.instant, (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('response_body', 'text')
        .addColumn('error', 'text')
        .addColumn('succeeded', t.bool, (c) => c.notNull())
        .execute()

      const indexes: Array<[string, string, string[], boolean]> = [
        // The settings screen lists a company's endpoints oldest first.
        ['wfa_webhook_endpoints_company', 'wfa_webhook_endpoints', ['company_id', 'created_at'], false],
        // The dispatcher's claim: pending rows in due order.
        ['wfa_webhook_deliveries_due', 'wfa_webhook_deliveries', ['status', 'next_attempt_at'], false],
        // An endpoint's deliveries, newest first, from a cursor.
        ['wfa_webhook_deliveries_endpoint', 'wfa_webhook_deliveries', ['endpoint_id', 'id'], false],
        // Purging finished deliveries by age.
        ['wfa_webhook_deliveries_finished', 'wfa_webhook_deliveries', ['status', 'updated_at'], false],
        // Purging events no delivery needs any more.
        ['wfa_webhook_deliveries_change_event', 'wfa_webhook_deliveries', ['change_event_id'], false],
        // One delivery per event and endpoint: a redelivery reuses it.
        ['wfa_webhook_deliveries_endpoint_event', 'wfa_webhook_deliveries', ['endpoint_id', 'event_id'], true],
        ['wfa_webhook_attempts_delivery', 'wfa_webhook_attempts', ['delivery_id', 'number'], false],
      ]
      for (const [name, table, columns, unique] of indexes) {
        const index = db.schema.createIndex(name).on(table).columns(columns)
        await (unique ? index.unique() : index).execute()
      }
    },
    async down(db: Kysely<any>) {
      for (const table of ['wfa_webhook_attempts', 'wfa_webhook_deliveries', 'wfa_webhook_endpoints']) {
        await db.schema.dropTable(table).ifExists().execute()
      }
      await db.schema.dropIndex('wfa_change_events_event_id').ifExists().execute()
      await db.schema.alterTable('wfa_change_events').dropColumn('payload').execute()
      await db.schema.alterTable('wfa_change_events').dropColumn('event_id').execute()
    },
  }
}

/**
 * Issue 13: per company and list resource, three counters that every change of a listed row
 * bumps in its own transaction, kept by triggers so a host's direct SQL writes count too.
 * `appends`: a row inserted after every existing row of its company (spec 4.2.1: new records
 * append). `updates`: a row changed in place. `removals`: a row deleted, moved to another
 * company or id, or inserted before an existing row. Lists cache totals and page boundaries
 * by these counters (docs/decisions.md): a version read is one primary-key lookup.
 */
function listVersions(t: SqlColumnTypes, schema: string | undefined): Migration {
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

/**
 * The admin API (issue 14): its audit trail, written by the key and webhook stores in the
 * transaction of the change each entry describes, and requests per key per UTC hour, added to
 * by every instance (`insert … on conflict do update`). No raw SQL: the schema builder's
 * names follow the migration's schema on Postgres. Self-contained like every migration.
 */
function admin(t: SqlColumnTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('wfa_audit_events')
        // `aud_…`, chosen by the plugin.
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('at', t.instant, (c) => c.notNull())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('actor_name', 'text', (c) => c.notNull())
        .addColumn('ip', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        // 'api_key' | 'webhook_endpoint'
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text', (c) => c.notNull())
        // JSON as text on both dialects: read back exactly as written, key order included.
        .addColumn('details', 'text', (c) => c.notNull())
        .execute()
      // A company's trail, newest first, from a cursor.
      await db.schema.createIndex('wfa_audit_events_company_at').on('wfa_audit_events').columns(['company_id', 'at desc', 'id desc']).execute()

      await db.schema
        .createTable('wfa_key_usage')
        .addColumn('company_id', t.bigint, (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        // The start of the UTC hour.
        .addColumn('hour', t.instant, (c) => c.notNull())
        .addColumn('requests', t.bigint, (c) => c.notNull())
        .addColumn('client_errors', t.bigint, (c) => c.notNull())
        .addColumn('server_errors', t.bigint, (c) => c.notNull())
        .addColumn('rate_limited', t.bigint, (c) => c.notNull())
        .addColumn('last_rate_limited_at', t.instant)
        .addPrimaryKeyConstraint('wfa_key_usage_pkey', ['key_id', 'hour'])
        .execute()
      // The usage view: a company's hours since an instant.
      await db.schema.createIndex('wfa_key_usage_company_hour').on('wfa_key_usage').columns(['company_id', 'hour']).execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('wfa_key_usage').ifExists().execute()
      await db.schema.dropTable('wfa_audit_events').ifExists().execute()
    },
  }
}

/**
 * Issue 21: each endpoint's health, shared by every instance — failed attempts in a row and
 * the circuit breaker (`paused_until`, and the pause it last used, doubled by each failed
 * probe). Two partial indexes serve the fair claim: an endpoint's due deliveries in due order,
 * and the deliveries under a lease (attempts in flight), which are few. One column per ALTER
 * TABLE: SQLite adds one at a time. Self-contained like every migration.
 */
function endpointHealth(t: SqlColumnTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('wfa_webhook_endpoints').addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0)).execute()
      await db.schema.alterTable('wfa_webhook_endpoints').addColumn('paused_until', t.instant).execute()
      await db.schema.alterTable('wfa_webhook_endpoints').addColumn('pause_ms', 'integer', (c) => c.notNull().defaultTo(0)).execute()
      await db.schema
        .createIndex('wfa_webhook_deliveries_endpoint_due')
        .on('wfa_webhook_deliveries')
        .columns(['endpoint_id', 'next_attempt_at', 'id'])
        .where(sql.ref('status'), '=', 'pending')
        .execute()
      await db.schema
        .createIndex('wfa_webhook_deliveries_leased')
        .on('wfa_webhook_deliveries')
        .columns(['endpoint_id', 'next_attempt_at'])
        .where(sql.ref('lease'), 'is not', null)
        .execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.dropIndex('wfa_webhook_deliveries_leased').ifExists().execute()
      await db.schema.dropIndex('wfa_webhook_deliveries_endpoint_due').ifExists().execute()
      for (const column of ['pause_ms', 'paused_until', 'consecutive_failures']) {
        await db.schema.alterTable('wfa_webhook_endpoints').dropColumn(column).execute()
      }
    },
  }
}

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
function perCompanyUserIds(t: SqlColumnTypes, schema: string | undefined): Migration {
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
/** Ids per block of `wfa_list_blocks` (migration 0010); frozen with it. */
const LIST_BLOCK_IDS = 1024

function listRowCounts(t: SqlColumnTypes, schema: string | undefined): Migration {
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
