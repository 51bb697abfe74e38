import { statSync } from 'node:fs'
import { dirname } from 'node:path'
import { sql, type Kysely } from 'kysely'
import { migrationStatus, type MigrationStatus } from '../../adapters/sql/migrate.js'
import type { LoadProgress } from '../../adapters/sql/bulk-load.js'
import type { ReferenceAdapterPorts } from '../ports/index.js'
import type { SeedOptions } from '../seed/generate.js'
import { CliError, describeDb, isPostgresUrl } from './cli-error.js'

// Re-exported: the commands import them from here with the adapter they open.
export { CliError, describeDb, isPostgresUrl }

/** What the CLI needs of an adapter: the ports, the fixture hooks, module switches, close. */
export interface CliAdapter extends ReferenceAdapterPorts {
  /** Loads the seed dataset (`streamDataset`) in one transaction, at bulk speed: `seed`. */
  loadSeed(options: SeedOptions, progress: LoadProgress): Promise<void>
}

export interface OpenOptions {
  /**
   * `seed` and `migrate`: create what is missing (a SQLite file; the schema) and migrate.
   * Otherwise the database must exist and be migrated to the latest, or the CLI refuses it with
   * the command to run: a typo in `--db` must not quietly become an empty database that
   * answers every key with 401.
   */
  create?: boolean
  /** `serve`: SQLite's read workers run slow reads off the event loop. Other commands run none. */
  readWorkers?: boolean
}

/**
 * Opens the adapter a `--db` value names: a `postgres://` URL, or else a SQLite file path.
 * Adapters are imported lazily so one never loads the other's driver.
 *
 * @throws CliError when the database is missing or not migrated (and `create` is off)
 */
export async function openAdapter(db: string, options: OpenOptions = {}): Promise<CliAdapter> {
  const create = options.create === true
  const opened = await openUnchecked(db, { create, migrate: create, readWorkers: options.readWorkers === true })
  if (create) return opened.adapter
  try {
    refuseUnmigrated(db, await opened.status())
  } catch (error) {
    await opened.adapter.close()
    throw error
  }
  return opened.adapter
}

/** Opens the adapter, runs `work`, closes it. */
export async function withAdapter<T>(db: string, work: (adapter: CliAdapter) => Promise<T>, options: OpenOptions = {}): Promise<T> {
  const adapter = await openAdapter(db, options)
  try {
    return await work(adapter)
  } finally {
    await adapter.close()
  }
}

/**
 * `workforce-api migrate`: creates what is missing and brings the schema to the latest.
 * Returns the migrations it applied, oldest first (none when it was at the latest).
 */
export async function migrateDatabase(db: string): Promise<string[]> {
  const before = await openUnchecked(db, { create: true, migrate: false, readWorkers: false })
  let pending: string[]
  try {
    pending = (await before.status()).pending
  } finally {
    await before.adapter.close()
  }
  if (pending.length > 0) await (await openUnchecked(db, { create: true, migrate: true, readWorkers: false })).adapter.close()
  return pending
}

interface Unchecked {
  adapter: CliAdapter
  status(): Promise<MigrationStatus>
}

async function openUnchecked(db: string, options: { create: boolean; migrate: boolean; readWorkers: boolean }): Promise<Unchecked> {
  if (isPostgresUrl(db)) {
    const { openPostgresAdapter, postgresColumnTypes } = await import('../../adapters/postgres/index.js')
    const { seedPostgresDatabase } = await import('../seed/postgres-seed.js')
    const adapter = await openPostgresAdapter({ connectionString: db }, { migrate: options.migrate })
    return {
      adapter: Object.assign(adapter, {
        async loadSeed(seed: SeedOptions, progress: LoadProgress) {
          const client = await adapter.pool.connect()
          try {
            await seedPostgresDatabase(client, seed, progress)
          } finally {
            client.release()
          }
        },
      }),
      // The migrator needs the schema named, or it may take another schema's table for ours.
      status: async () => migrationStatus(adapter.db, postgresColumnTypes, await currentSchema(adapter.db)),
    }
  }
  checkSqlitePath(db, options.create)
  const { openSqliteAdapter, sqliteColumnTypes } = await import('../../adapters/sqlite/index.js')
  const { seedSqliteDatabase } = await import('../seed/sqlite-seed.js')
  const adapter = await openSqliteAdapter({ filename: db, migrate: options.migrate, ...(options.readWorkers ? {} : { readWorkers: 0 }) })
  return {
    adapter: Object.assign(adapter, {
      loadSeed: (seed: SeedOptions, progress: LoadProgress) => seedSqliteDatabase(adapter.database, seed, progress),
    }),
    status: () => migrationStatus(adapter.db, sqliteColumnTypes),
  }
}

/** Refuses, before the driver can create anything, a SQLite path that cannot be the database. */
function checkSqlitePath(db: string, create: boolean): void {
  if (db === ':memory:') {
    if (create) return
    throw new CliError(`--db :memory: is a new, empty database in every process: give a file (workforce-api seed --db demo.db)`, 2)
  }
  const found = statOrNull(db)
  if (found?.isDirectory()) throw new CliError(`${db} is a directory; --db takes a database file`, 2)
  if (found !== null) return
  if (!create) {
    throw new CliError(
      `no database at ${db}: create it with 'workforce-api migrate --db ${shellWord(db)}' (empty) or 'workforce-api seed --db ${shellWord(db)}' (demo data)`,
    )
  }
  const directory = dirname(db)
  if (!statOrNull(directory)?.isDirectory()) throw new CliError(`cannot create ${db}: the directory ${directory} does not exist`)
}

/** A missing or partly migrated database, refused with the command that fixes it. */
function refuseUnmigrated(db: string, status: MigrationStatus): void {
  if (status.pending.length === 0) return
  const target = shellWord(describeDb(db))
  if (status.executed.length === 0) {
    throw new CliError(
      `${describeDb(db)} has no workforce-api schema: run 'workforce-api migrate --db ${target}' (empty) or 'workforce-api seed --db ${target}' (demo data) first`,
    )
  }
  throw new CliError(
    `${describeDb(db)} is not migrated to this version of workforce-api (${status.pending.length} pending: ${status.pending.join(', ')}): run 'workforce-api migrate --db ${target}'`,
  )
}

async function currentSchema(db: Kysely<any>): Promise<string | undefined> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)
  return rows[0]?.schema ?? undefined
}

function statOrNull(path: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

/** `value` as one shell word, for a command the user may paste. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`
}
