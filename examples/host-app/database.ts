/**
 * The host application's own database: an "existing workforce app" that predates the public
 * API. Its names and representations are deliberately not ours:
 * - instants are ISO 8601 UTC text (`2026-03-29T22:00:00.000Z`), not integer milliseconds;
 * - money is an integer `amount_in_cents`; the company time zone lives in `tz_name`;
 * - a membership's roles, a task's checklist and its tags are child tables, not JSON;
 * - leave requests use the app's own status words (`pending`, `granted`, …).
 *
 * The plugin never touches these tables: the host's `Storage` (host-storage.ts) reads them.
 */
import Database from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'

/** `0`/`1`: SQLite has no boolean type. */
export type Flag = 0 | 1

export interface HostDatabase {
  organisations: {
    org_id: number
    legal_name: string
    tz_name: string
    country_code: string
    created_at: string
    updated_at: string
  }
  /** Logins: one per person, shared by every organisation the person belongs to. */
  accounts: {
    account_id: number
    email_address: string
    given_name: string
    family_name: string
    login_enabled: Flag
    pw_digest: string
    created_at: string
    updated_at: string
  }
  /**
   * A member of an organisation: `member_id` is the API's user id, this organisation's own (a
   * person in two organisations is two members); `account_id` is the login, null while invited.
   */
  company_memberships: {
    org_id: number
    member_id: number
    account_id: number | null
    joined_at: string
    changed_at: string
  }
  /**
   * An invitation to a person who already had an account when an organisation added them: the
   * membership exists but is pending until they accept, and the organisation sees only what it
   * typed here. The row is deleted when they accept (or decline).
   */
  membership_invites: {
    org_id: number
    member_id: number
    sent_to_email: string
    given_name: string
    family_name: string
  }
  membership_roles: {
    org_id: number
    member_id: number
    job_role_id: number
  }
  job_roles: {
    job_role_id: number
    org_id: number
    title: string
    permissions_json: string
    created_at: string
    updated_at: string
  }
  staff_members: {
    staff_member_id: number
    org_id: number
    account_id: number | null
    payroll_code: string
    position_title: string | null
    contract_kind: string
    hours_per_week: number
    hired_on: string
    left_on: string | null
    reports_to: number | null
    gross_salary_cents: number
    bank_iban: string
    created_at: string
    updated_at: string
  }
  client_projects: {
    client_project_id: number
    org_id: number
    title: string
    project_code: string
    state: string
    project_type: string
    client_ref: number | null
    start_day: string | null
    end_day: string | null
    offer_no: string | null
    private_notes: string | null
    created_at: string
    updated_at: string
  }
  work_shifts: {
    shift_id: number
    org_id: number
    staff_member_id: number
    client_project_id: number | null
    shift_state: string
    begins_at: string
    finishes_at: string
    break_mins: number
    supervisor_notes: string | null
    created_at: string
    updated_at: string
  }
  leave_requests: {
    leave_request_id: number
    org_id: number
    staff_member_id: number
    leave_day: string
    leave_kind: string
    hours_taken: number
    approval_state: string
    reason_text: string | null
    created_at: string
    updated_at: string
  }
  costs: {
    cost_id: number
    org_id: number
    staff_member_id: number
    client_project_id: number | null
    cost_category: string
    label: string
    incurred_on: string
    amount_in_cents: number
    currency_code: string
    km_driven: number | null
    created_at: string
    updated_at: string
  }
  task_lists: {
    task_list_id: number
    org_id: number
    list_name: string
  }
  tasks: {
    task_id: number
    org_id: number
    task_list_id: number
    headline: string
    body: string | null
    task_state: string
    urgency: string
    flagged: Flag
    all_day: Flag
    /** The due day of an all-day task (`YYYY-MM-DD`). */
    due_on: string | null
    /** The due instant of a timed task (ISO UTC text). */
    due_at: string | null
    assignee_account_id: number | null
    offered_to_role_id: number | null
    claimed_by_account_id: number | null
    origin_kind: string | null
    origin_ref: number | null
    created_at: string
    updated_at: string
  }
  task_checklist_items: {
    item_id: number
    task_id: number
    position: number
    label: string
    is_done: Flag
  }
  task_tags: {
    task_id: number
    position: number
    tag_id: number
  }
  /**
   * The host's teams, served as a resource of its own (teams.ts, team-reader.ts). The table has
   * the reader's column names, so the same reader serves this schema and a Postgres one.
   */
  teams: {
    id: number
    org_id: number
    name: string
    lead_employee_id: number | null
    created_at: string
    updated_at: string
  }
  /** Which features an organisation bought; the host's names, mapped to platform modules. */
  org_features: {
    org_id: number
    feature: string
    enabled: Flag
  }
  /** Public-API keys, in the host's table (host-key-store.ts). */
  api_credentials: {
    key_id: string
    org_id: number
    secret_sha256: string
    scope_list: string
    expires_at: string | null
    state: string
    label: string | null
    requests_per_window: number | null
    issued_at: string
    last_used_at: string | null
  }
}

/** The host's connection: better-sqlite3 underneath, a typed Kysely on top. */
export interface HostDb {
  database: Database.Database
  db: Kysely<HostDatabase>
}

/** Opens (and, for the example, creates) the host's database. The host owns it and closes it. */
export async function openHostDatabase(filename: string): Promise<HostDb> {
  const database = new Database(filename)
  database.pragma('foreign_keys = ON')
  const db = new Kysely<HostDatabase>({ dialect: new SqliteDialect({ database }) })
  await createHostSchema(db)
  return { database, db }
}

/**
 * Creates the host's tables. A real host already has them (and its own migrations); the
 * example creates them so it runs on an empty SQLite file.
 */
export async function createHostSchema(db: Kysely<HostDatabase>): Promise<void> {
  const statements = [
    `CREATE TABLE IF NOT EXISTS organisations (org_id INTEGER PRIMARY KEY, legal_name TEXT NOT NULL, tz_name TEXT NOT NULL,
       country_code TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS accounts (account_id INTEGER PRIMARY KEY, email_address TEXT NOT NULL UNIQUE, given_name TEXT NOT NULL,
       family_name TEXT NOT NULL, login_enabled INTEGER NOT NULL, pw_digest TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS company_memberships (org_id INTEGER NOT NULL REFERENCES organisations, member_id INTEGER NOT NULL UNIQUE,
       account_id INTEGER REFERENCES accounts, joined_at TEXT NOT NULL, changed_at TEXT NOT NULL, PRIMARY KEY (org_id, member_id),
       UNIQUE (org_id, account_id))`,
    `CREATE TABLE IF NOT EXISTS membership_invites (org_id INTEGER NOT NULL, member_id INTEGER NOT NULL, sent_to_email TEXT NOT NULL,
       given_name TEXT NOT NULL, family_name TEXT NOT NULL, PRIMARY KEY (org_id, member_id),
       FOREIGN KEY (org_id, member_id) REFERENCES company_memberships)`,
    `CREATE TABLE IF NOT EXISTS job_roles (job_role_id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organisations, title TEXT NOT NULL,
       permissions_json TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS membership_roles (org_id INTEGER NOT NULL, member_id INTEGER NOT NULL, job_role_id INTEGER NOT NULL REFERENCES job_roles,
       PRIMARY KEY (org_id, member_id, job_role_id), FOREIGN KEY (org_id, member_id) REFERENCES company_memberships)`,
    `CREATE TABLE IF NOT EXISTS staff_members (staff_member_id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organisations,
       account_id INTEGER REFERENCES company_memberships (member_id), payroll_code TEXT NOT NULL, position_title TEXT, contract_kind TEXT NOT NULL,
       hours_per_week REAL NOT NULL, hired_on TEXT NOT NULL, left_on TEXT, reports_to INTEGER, gross_salary_cents INTEGER NOT NULL,
       bank_iban TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS client_projects (client_project_id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organisations,
       title TEXT NOT NULL, project_code TEXT NOT NULL, state TEXT NOT NULL, project_type TEXT NOT NULL, client_ref INTEGER,
       start_day TEXT, end_day TEXT, offer_no TEXT, private_notes TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS work_shifts (shift_id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organisations,
       staff_member_id INTEGER NOT NULL REFERENCES staff_members, client_project_id INTEGER REFERENCES client_projects,
       shift_state TEXT NOT NULL, begins_at TEXT NOT NULL, finishes_at TEXT NOT NULL, break_mins INTEGER NOT NULL,
       supervisor_notes TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS leave_requests (leave_request_id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organisations,
       staff_member_id INTEGER NOT NULL REFERENCES staff_members, leave_day TEXT NOT NULL, leave_kind TEXT NOT NULL,
       hours_taken REAL NOT NULL, approval_state TEXT NOT NULL, reason_text TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS costs (cost_id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organisations,
       staff_member_id INTEGER NOT NULL REFERENCES staff_members, client_project_id INTEGER REFERENCES client_projects,
       cost_category TEXT NOT NULL, label TEXT NOT NULL, incurred_on TEXT NOT NULL, amount_in_cents INTEGER NOT NULL,
       currency_code TEXT NOT NULL, km_driven REAL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS task_lists (task_list_id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organisations, list_name TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS tasks (task_id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organisations,
       task_list_id INTEGER NOT NULL REFERENCES task_lists, headline TEXT NOT NULL, body TEXT, task_state TEXT NOT NULL,
       urgency TEXT NOT NULL, flagged INTEGER NOT NULL, all_day INTEGER NOT NULL, due_on TEXT, due_at TEXT,
       assignee_account_id INTEGER REFERENCES company_memberships (member_id), offered_to_role_id INTEGER REFERENCES job_roles,
       claimed_by_account_id INTEGER REFERENCES company_memberships (member_id), origin_kind TEXT, origin_ref INTEGER,
       created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS task_checklist_items (item_id INTEGER PRIMARY KEY, task_id INTEGER NOT NULL REFERENCES tasks,
       position INTEGER NOT NULL, label TEXT NOT NULL, is_done INTEGER NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS task_tags (task_id INTEGER NOT NULL REFERENCES tasks, position INTEGER NOT NULL, tag_id INTEGER NOT NULL,
       PRIMARY KEY (task_id, position))`,
    `CREATE TABLE IF NOT EXISTS teams (id INTEGER PRIMARY KEY, org_id INTEGER NOT NULL REFERENCES organisations, name TEXT NOT NULL,
       lead_employee_id INTEGER REFERENCES staff_members, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS org_features (org_id INTEGER NOT NULL, feature TEXT NOT NULL, enabled INTEGER NOT NULL, PRIMARY KEY (org_id, feature))`,
    `CREATE TABLE IF NOT EXISTS api_credentials (key_id TEXT PRIMARY KEY, org_id INTEGER NOT NULL, secret_sha256 TEXT NOT NULL,
       scope_list TEXT NOT NULL, expires_at TEXT, state TEXT NOT NULL, label TEXT, requests_per_window INTEGER, issued_at TEXT NOT NULL,
       last_used_at TEXT)`,
    // Every list of the public API is "one organisation, ordered by id": index accordingly.
    'CREATE INDEX IF NOT EXISTS company_memberships_account ON company_memberships (account_id)',
    'CREATE INDEX IF NOT EXISTS job_roles_org ON job_roles (org_id, job_role_id)',
    'CREATE INDEX IF NOT EXISTS staff_members_org ON staff_members (org_id, staff_member_id)',
    'CREATE INDEX IF NOT EXISTS client_projects_org ON client_projects (org_id, client_project_id)',
    'CREATE INDEX IF NOT EXISTS work_shifts_org_begins ON work_shifts (org_id, begins_at)',
    'CREATE INDEX IF NOT EXISTS leave_requests_org_day ON leave_requests (org_id, leave_day)',
    'CREATE INDEX IF NOT EXISTS costs_org_incurred ON costs (org_id, incurred_on)',
    'CREATE INDEX IF NOT EXISTS tasks_org ON tasks (org_id, task_id)',
    'CREATE INDEX IF NOT EXISTS teams_org ON teams (org_id, id)',
    'CREATE INDEX IF NOT EXISTS task_checklist_items_task ON task_checklist_items (task_id, position)',
  ]
  for (const statement of statements) await sql.raw(statement).execute(db)
}
