import type { Dataset } from '../../src/ports/dataset.js'
import type { DatasetChunk } from '../../src/seed/generate.js'
import type { SqlCodec } from './codec.js'
import type { QueryDb } from './prepared.js'

/** Rows per INSERT: keeps every statement well under SQLite's and Postgres' bind-parameter limits. */
const BATCH_SIZE = 500

/**
 * One dataset table's SQL table: its columns, and a row's values in that order. Positional
 * rather than a record per row, because the bulk loaders bind millions of rows and a record
 * (then its values) per row costs as much as the insert; every adapter test loads fixtures
 * through these lists, so a column out of place fails them.
 */
interface FixtureTable<R> {
  table: string
  columns: readonly string[]
  values(codec: SqlCodec, row: R): unknown[]
}
type FixtureTables = { [T in keyof Dataset]: FixtureTable<Dataset[T][number]> }

const STAMPS = ['created_at', 'updated_at'] as const
const dayOrNull = (c: SqlCodec, value: string | null) => (value === null ? null : c.day(value))

/** Each dataset table's SQL table, in the order tables are loaded. */
const FIXTURE_TABLES: FixtureTables = {
  companies: {
    table: 'wfa_companies',
    columns: ['id', 'name', 'timezone', 'country', ...STAMPS],
    values: (c, r) => [r.id, r.name, r.timezone, r.country, c.instant(r.created_at), c.instant(r.updated_at)],
  },
  people: {
    table: 'wfa_users',
    columns: ['id', 'email', 'email_lower', 'first_name', 'last_name', 'active', 'password_hash', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.email,
      r.email.toLowerCase(),
      r.first_name,
      r.last_name,
      c.bool(r.active),
      r.password_hash,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  memberships: {
    table: 'wfa_memberships',
    columns: [
      'company_id',
      'user_id',
      'role_ids',
      'invitation_status',
      'invited_email',
      'invited_email_lower',
      'invited_first_name',
      'invited_last_name',
      ...STAMPS,
    ],
    values: (c, r) => [
      r.company_id,
      r.user_id,
      c.json(r.role_ids),
      r.invitation_status,
      r.invited?.email ?? null,
      r.invited?.email.toLowerCase() ?? null,
      r.invited?.first_name ?? null,
      r.invited?.last_name ?? null,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  roles: {
    table: 'wfa_roles',
    columns: ['id', 'company_id', 'name', 'permissions', ...STAMPS],
    values: (c, r) => [r.id, r.company_id, r.name, c.json(r.permissions), c.instant(r.created_at), c.instant(r.updated_at)],
  },
  employees: {
    table: 'wfa_employees',
    columns: [
      'id',
      'company_id',
      'user_id',
      'employee_number',
      'job_title',
      'contract_type',
      'weekly_hours',
      'hire_date',
      'termination_date',
      'supervisor_id',
      'salary_cents',
      'iban',
      ...STAMPS,
    ],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.user_id,
      r.employee_number,
      r.job_title,
      r.contract_type,
      r.weekly_hours,
      c.day(r.hire_date),
      dayOrNull(c, r.termination_date),
      r.supervisor_id,
      r.salary_cents,
      r.iban,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  projects: {
    table: 'wfa_projects',
    columns: ['id', 'company_id', 'name', 'code', 'status', 'kind', 'customer_id', 'starts_on', 'ends_on', 'offer_number', 'internal_notes', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.name,
      r.code,
      r.status,
      r.kind,
      r.customer_id,
      dayOrNull(c, r.starts_on),
      dayOrNull(c, r.ends_on),
      r.offer_number,
      r.internal_notes,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  shifts: {
    table: 'wfa_shifts',
    columns: ['id', 'company_id', 'employee_id', 'project_id', 'status', 'starts_at', 'ends_at', 'break_minutes', 'internal_notes', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.employee_id,
      r.project_id,
      r.status,
      c.instant(r.starts_at),
      c.instant(r.ends_at),
      r.break_minutes,
      r.internal_notes,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  absences: {
    table: 'wfa_absences',
    columns: ['id', 'company_id', 'employee_id', 'date', 'type', 'hours', 'status', 'reason', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.employee_id,
      c.day(r.date),
      r.type,
      r.hours,
      r.status,
      r.reason,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  expenses: {
    table: 'wfa_expenses',
    columns: ['id', 'company_id', 'employee_id', 'project_id', 'category', 'description', 'date', 'amount_cents', 'currency', 'km', ...STAMPS],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.employee_id,
      r.project_id,
      r.category,
      r.description,
      c.day(r.date),
      r.amount_cents,
      r.currency,
      r.km,
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  todoLists: {
    table: 'wfa_todo_lists',
    columns: ['id', 'company_id', 'name'],
    values: (_c, r) => [r.id, r.company_id, r.name],
  },
  todos: {
    table: 'wfa_todos',
    columns: [
      'id',
      'company_id',
      'title',
      'notes',
      'status',
      'priority',
      'important',
      'due_day',
      'due_at',
      'due_is_all_day',
      'list_id',
      'assigned_to',
      'assignee_group_id',
      'claimed_by',
      'checklist',
      'tag_ids',
      'source',
      ...STAMPS,
    ],
    values: (c, r) => [
      r.id,
      r.company_id,
      r.title,
      r.notes,
      r.status,
      r.priority,
      c.bool(r.important),
      dayOrNull(c, r.due_day),
      r.due_at === null ? null : c.instant(r.due_at),
      c.bool(r.due_is_all_day),
      r.list_id,
      r.assigned_to,
      r.assignee_group_id,
      r.claimed_by,
      c.json(r.checklist),
      c.json(r.tag_ids),
      r.source === null ? null : c.json(r.source),
      c.instant(r.created_at),
      c.instant(r.updated_at),
    ],
  },
  modules: {
    table: 'wfa_company_modules',
    columns: ['company_id', 'module', 'active'],
    values: (c, r) => [r.company_id, r.module, c.bool(r.active)],
  },
}

/** The columns of the dataset table stored in SQL table `table`. */
function fixtureColumns(table: string): readonly string[] {
  const found = Object.values(FIXTURE_TABLES).find((fixture) => fixture.table === table)
  if (found === undefined) throw new Error(`bulk load: no dataset table is stored in ${table}`)
  return found.columns
}

/** A dataset table's SQL table, its row type erased for code that walks every table. */
function fixtureTable(table: keyof Dataset): FixtureTable<unknown> {
  return FIXTURE_TABLES[table] as FixtureTable<unknown>
}

/**
 * Writes a whole dataset, with its ids, in one transaction: all of it or none of it.
 * The fixture-loading hook of the SQL adapters (seed, tests, conformance suite).
 */
export async function loadDataset(db: QueryDb, codec: SqlCodec, data: Dataset): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const name of Object.keys(FIXTURE_TABLES) as (keyof Dataset)[]) {
      const { table, columns, values } = fixtureTable(name)
      const rows: readonly unknown[] = data[name]
      const toRecord = (row: unknown) => {
        const bound = values(codec, row)
        return Object.fromEntries(columns.map((column, index) => [column, bound[index]]))
      }
      for (let start = 0; start < rows.length; start += BATCH_SIZE) {
        await trx.insertInto(table).values(rows.slice(start, start + BATCH_SIZE).map(toRecord)).execute()
      }
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Bulk loading: a streamed dataset of millions of rows (`workforce-api seed --scale N`)

/** What a bulk load reports as it goes (for a progress bar). */
export interface LoadProgress {
  /** `count` more rows were written (committed only at the end). */
  rowsLoaded?(count: number): void
  /** A secondary index was rebuilt (after its table's rows). */
  indexBuilt?(name: string): void
}

/** Rows per multi-row INSERT in a SQLite bulk load: one prepared statement per this many. */
const SQLITE_ROWS_PER_STATEMENT = 100
/** SQLite's page cache during a bulk load (KiB): a table's pages stay in memory while its indexes are rebuilt. */
const SQLITE_BULK_CACHE_KIB = 256 * 1024
/** Rows per INSERT in a Postgres bulk load (2,000 to 20,000 measured alike). */
const POSTGRES_ROWS_PER_STATEMENT = 5_000
/** How often a bulk load lets timers run (a progress bar redraws); the SQLite load is otherwise synchronous. */
const YIELD_EVERY_MS = 50

/** The better-sqlite3 `Database` surface a bulk load uses (typed here so this file needs no driver types). */
export interface SqliteBulkDatabase {
  prepare(source: string): { run(...params: unknown[]): unknown; all(...params: unknown[]): unknown[] }
  exec(source: string): unknown
  pragma(source: string, options?: { simple?: boolean }): unknown
  readonly inTransaction: boolean
}

/** The pg `Client` (or checked-out `PoolClient`) surface a bulk load uses. */
export interface PostgresBulkClient {
  query(config: { text: string; values?: unknown[]; name?: string }): Promise<{ rows: any[] }>
}

/**
 * Streamed rows grouped into batches of one table: `values` holds `rows` rows' bound values,
 * flat, in `columns` order. The batch is reused: the callee must be done with it on return.
 */
interface Batch {
  table: string
  columns: readonly string[]
  values: unknown[]
  rows: number
}

/**
 * Walks streamed chunks as batches of at most `rowsPerBatch` rows of one table, calling
 * `on.tableStart` before a table's first batch and `on.tableDone` after its last. Memory: one
 * chunk and one batch.
 */
async function loadBatches(
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  rowsPerBatch: number,
  progress: LoadProgress,
  on: { batch(batch: Batch): void | Promise<void>; tableStart(table: string): void | Promise<void>; tableDone(table: string): void | Promise<void> },
): Promise<void> {
  let batch: Batch | undefined
  let values: FixtureTable<unknown>['values'] = () => []
  let yieldedAt = Date.now()
  const flush = async () => {
    if (batch !== undefined && batch.rows > 0) await on.batch(batch)
    if (batch !== undefined) {
      batch.values.length = 0
      batch.rows = 0
    }
  }
  for (const chunk of chunks) {
    const table = fixtureTable(chunk.table)
    if (batch?.table !== table.table) {
      await flush()
      if (batch !== undefined) await on.tableDone(batch.table)
      await on.tableStart(table.table)
      batch = { table: table.table, columns: table.columns, values: [], rows: 0 }
      values = table.values
    }
    for (const row of chunk.rows as readonly unknown[]) {
      const bound = values(codec, row)
      for (let index = 0; index < bound.length; index++) batch.values.push(bound[index])
      if (++batch.rows === rowsPerBatch) await flush()
    }
    progress.rowsLoaded?.(chunk.rows.length)
    if (Date.now() - yieldedAt >= YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      yieldedAt = Date.now()
    }
  }
  await flush()
  if (batch !== undefined) await on.tableDone(batch.table)
}

/**
 * Loads streamed rows (`streamDataset`) into SQLite in one transaction: all of it or none of
 * it, like `loadDataset`, but at hundreds of thousands of rows a second with memory bounded by
 * one chunk. What makes it fast: prepared multi-row INSERTs bound straight to better-sqlite3
 * (no query builder per batch); each table's secondary indexes dropped before its rows and
 * rebuilt right after them, inside the transaction, while its pages are still in the cache (a
 * sort per index instead of millions of B-tree inserts); a large page cache meanwhile. Readers
 * on other connections see the database as it was until the commit.
 *
 * The caller holds the connection for the duration: nothing else may use it meanwhile.
 */
export async function loadSqliteDatasetStream(
  database: SqliteBulkDatabase,
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  progress: LoadProgress = {},
): Promise<void> {
  const cacheSize = Number(database.pragma('cache_size', { simple: true }))
  database.pragma(`cache_size = ${-SQLITE_BULK_CACHE_KIB}`)
  const journal = useRollbackJournal(database)
  database.exec('BEGIN IMMEDIATE')
  try {
    const statements = new Map<string, ReturnType<SqliteBulkDatabase['prepare']>>()
    const insert = (batch: Batch, rows: number) => {
      const key = `${batch.table}:${rows}`
      let statement = statements.get(key)
      if (statement === undefined) {
        statement = database.prepare(insertSql(batch.table, batch.columns, rows, () => '?'))
        statements.set(key, statement)
      }
      return statement
    }
    let dropped: { name: string; sql: string }[] = []
    await loadBatches(codec, chunks, SQLITE_ROWS_PER_STATEMENT, progress, {
      batch(batch) {
        if (batch.rows === SQLITE_ROWS_PER_STATEMENT) insert(batch, batch.rows).run(batch.values)
        else {
          // The table's last rows: one statement each rather than one prepared for a single use.
          const width = batch.columns.length
          for (let row = 0; row < batch.rows; row++) insert(batch, 1).run(batch.values.slice(row * width, (row + 1) * width))
        }
      },
      tableStart(table) {
        dropped = dropSqliteIndexes(database, table)
      },
      tableDone() {
        for (const index of dropped) {
          database.exec(index.sql)
          progress.indexBuilt?.(index.name)
        }
        dropped = []
      },
    })
    database.exec('COMMIT')
  } catch (error) {
    if (database.inTransaction) database.exec('ROLLBACK')
    throw error
  } finally {
    database.pragma(`cache_size = ${cacheSize}`)
    journal.restore()
  }
}

/**
 * Switches a WAL database to a rollback journal for a bulk load. WAL writes every page twice
 * (the log, then the checkpoint into the file); a rollback journal saves only the pages that
 * existed before the transaction, so a load into a new database writes each page once, straight
 * into the file. SQLite refuses the switch while another connection is reading (SQLITE_BUSY):
 * the load then runs in WAL, only slower. Idle connections, in this process or another, follow
 * the switch and its undoing by themselves.
 */
function useRollbackJournal(database: SqliteBulkDatabase): { restore(): void } {
  const unchanged = { restore() {} }
  if (database.pragma('journal_mode', { simple: true }) !== 'wal') return unchanged
  try {
    if (database.pragma('journal_mode = DELETE', { simple: true }) !== 'delete') return unchanged
  } catch {
    return unchanged
  }
  return {
    restore() {
      try {
        database.pragma('journal_mode = WAL')
      } catch {
        // Busy: every adapter sets WAL again when it opens the database, so nothing is lost.
      }
    },
  }
}

/** Drops `table`'s indexes except those behind a PRIMARY KEY or UNIQUE constraint; returns them to rebuild. */
function dropSqliteIndexes(database: SqliteBulkDatabase, table: string): { name: string; sql: string }[] {
  // Constraint indexes (sqlite_autoindex_*) have no SQL and cannot be dropped.
  const indexes = database
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name`)
    .all(table) as { name: string; sql: string }[]
  for (const { name } of indexes) database.exec(`DROP INDEX ${quoteIdentifier(name)}`)
  return indexes
}

/**
 * Loads streamed rows (`streamDataset`) into Postgres in one transaction, as
 * `loadSqliteDatasetStream` does into SQLite. Each statement carries 5,000 rows as one JSON
 * text (`JSON.stringify` is native, where pg's array parameters escape every string in
 * JavaScript) that the server unpacks with `jsonb_array_elements`; one statement is in flight
 * while the next batch is made. Each table's secondary indexes are dropped before its rows and
 * rebuilt after them; then every identity sequence moves past the largest id (as
 * `loadPostgresDataset` does, for the same reason: a row that brings its own id does not
 * advance the identity). Works in the connection's current schema.
 *
 * `client` is one connection the caller checked out, and releases.
 */
export async function loadPostgresDatasetStream(
  client: PostgresBulkClient,
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  progress: LoadProgress = {},
): Promise<void> {
  await client.query({ text: 'BEGIN' })
  try {
    // The pool's statement timeout bounds requests; rebuilding an index on millions of rows may rightly take longer.
    await client.query({ text: "SET LOCAL statement_timeout = '0'" })
    await client.query({ text: "SET LOCAL maintenance_work_mem = '256MB'" })
    const tables: string[] = []
    let dropped: { name: string; definition: string }[] = []
    let insert = ''
    // One INSERT in flight while the next batch is made: the server inserts as this process generates.
    let inFlight: Promise<unknown> = Promise.resolve()
    await loadBatches(codec, chunks, POSTGRES_ROWS_PER_STATEMENT, progress, {
      async batch(batch) {
        // The rows as one JSON text: serialised natively, parsed once by the server (as jsonb:
        // plain json is parsed again for every field read, and took twice as long).
        const width = batch.columns.length
        const rows = new Array<unknown[]>(batch.rows)
        for (let row = 0; row < batch.rows; row++) rows[row] = batch.values.slice(row * width, (row + 1) * width)
        const json = JSON.stringify(rows)
        await inFlight
        inFlight = client.query({ name: `wfa_bulk_${batch.table}`, text: insert, values: [json] })
        // Its failure is awaited (and thrown) with the next batch or at the table's end.
        inFlight.catch(() => {})
      },
      async tableStart(table) {
        tables.push(table)
        insert = await jsonInsertSql(client, table, fixtureColumns(table))
        dropped = await dropPostgresIndexes(client, table)
      },
      async tableDone() {
        await inFlight
        for (const index of dropped) {
          await client.query({ text: index.definition })
          progress.indexBuilt?.(index.name)
        }
        dropped = []
      },
    })
    await restartIdentities(client, tables)
    await client.query({ text: 'COMMIT' })
  } catch (error) {
    await client.query({ text: 'ROLLBACK' }).catch(() => {})
    throw error
  }
}

/**
 * `INSERT … SELECT (r->>0)::type, … FROM jsonb_array_elements($1::jsonb)` for `table`'s
 * columns, each cast to the type the table declares.
 */
async function jsonInsertSql(client: PostgresBulkClient, table: string, columns: readonly string[]): Promise<string> {
  const { rows } = await client.query({
    text: `
      select a.attname as name, format_type(a.atttypid, a.atttypmod) as type
      from pg_attribute a
      join pg_class t on t.oid = a.attrelid
      where t.relname = $1 and t.relnamespace = current_schema()::regnamespace and a.attnum > 0 and not a.attisdropped`,
    values: [table],
  })
  const types = new Map((rows as { name: string; type: string }[]).map((row) => [row.name, row.type]))
  const fields = columns.map((column, index) => {
    const type = types.get(column)
    if (type === undefined) throw new Error(`bulk load: ${table} has no column ${column}`)
    return `(r->>${index})::${type}`
  })
  return `INSERT INTO ${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(', ')}) SELECT ${fields.join(', ')} FROM jsonb_array_elements($1::jsonb) AS e(r)`
}

/** Drops `table`'s indexes (current schema) except those behind a constraint; returns them to rebuild. */
async function dropPostgresIndexes(client: PostgresBulkClient, table: string): Promise<{ name: string; definition: string }[]> {
  const { rows } = await client.query({
    text: `
      select i.relname as name, pg_get_indexdef(i.oid) as definition
      from pg_index x
      join pg_class i on i.oid = x.indexrelid
      join pg_class t on t.oid = x.indrelid
      where t.relname = $1 and t.relnamespace = current_schema()::regnamespace
        and not exists (select 1 from pg_constraint c where c.conindid = i.oid)
      order by i.relname`,
    values: [table],
  })
  const indexes = rows as { name: string; definition: string }[]
  for (const { name } of indexes) await client.query({ text: `DROP INDEX ${quoteIdentifier(name)}` })
  return indexes
}

/** Moves each loaded table's identity past its largest id (see `loadPostgresDataset`). */
async function restartIdentities(client: PostgresBulkClient, tables: readonly string[]): Promise<void> {
  const { rows } = await client.query({
    text: `
      select table_name from information_schema.columns
      where table_schema = current_schema() and column_name = 'id' and is_identity = 'YES' and table_name = any($1)
      order by table_name`,
    values: [tables],
  })
  for (const { table_name: table } of rows as { table_name: string }[]) {
    await client.query({
      text: `select setval(pg_get_serial_sequence($1, 'id'), coalesce((select max(id) from ${quoteIdentifier(table)}), 0) + 1, false)`,
      values: [quoteIdentifier(table)],
    })
  }
}

/** `INSERT INTO table (columns) VALUES (…), (…)` for `rows` rows, placeholders numbered from 0. */
function insertSql(table: string, columns: readonly string[], rows: number, placeholder: (index: number) => string): string {
  const tuples: string[] = []
  for (let row = 0; row < rows; row++) tuples.push(`(${columns.map((_, column) => placeholder(row * columns.length + column)).join(', ')})`)
  return `INSERT INTO ${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(', ')}) VALUES ${tuples.join(', ')}`
}

/** A SQL identifier quoted for both dialects. Our names are plain; this keeps them safe regardless. */
function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}
