import { Migrator, type Kysely, type MigrationProvider } from 'kysely'
import type { SqlColumnTypes } from './codec.js'
import { createMigrations } from './migrations/index.js'
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE } from './schema.js'

/**
 * Brings the schema to the latest migration, in our own migration tables (we live in the
 * host's database and must not touch Kysely's default `kysely_migration`).
 * `migrateToLatest` reports failure in its result instead of throwing: we throw.
 */
export async function migrateToLatest(db: Kysely<any>, types: SqlColumnTypes, schema?: string): Promise<void> {
  const { error, results } = await createMigrator(db, types, schema).migrateToLatest()
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName
    throw new Error(`fastify-workforce-api: migration ${failed ?? '(unknown)'} failed: ${String(error)}`, { cause: error })
  }
}

/** Where a database's schema stands against this version's migrations. */
export interface MigrationStatus {
  /** Applied, oldest first (ours only: a newer version's are not listed). */
  executed: string[]
  /** Not applied yet, oldest first: what `migrateToLatest` would run. Empty when at the latest. */
  pending: string[]
}

/**
 * Where `db`'s schema stands: `pending` is empty when it is at the latest (or was migrated by a
 * newer version), and `executed` is empty when it has no schema of ours at all. Reads only:
 * creates no table, takes no lock.
 *
 * @example
 * const { pending } = await migrationStatus(db, sqliteColumnTypes)
 * if (pending.length > 0) throw new Error(`run \`workforce-api migrate\` first: ${pending.join(', ')}`)
 */
export async function migrationStatus(db: Kysely<any>, types: SqlColumnTypes, schema?: string): Promise<MigrationStatus> {
  const migrations = await createMigrator(db, types, schema).getMigrations()
  return {
    executed: migrations.filter((migration) => migration.executedAt !== undefined).map((migration) => migration.name),
    pending: migrations.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name),
  }
}

function createMigrator(db: Kysely<any>, types: SqlColumnTypes, schema: string | undefined): Migrator {
  const migrations = createMigrations(types, schema)
  const provider: MigrationProvider = { getMigrations: async () => migrations }
  return new Migrator({
    db,
    provider,
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  })
}
