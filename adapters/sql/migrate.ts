import { Migrator, type Kysely, type MigrationProvider } from 'kysely'
import type { SqlColumnTypes } from './codec.js'
import { createMigrations } from './migrations.js'
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE } from './schema.js'

/**
 * Brings the schema to the latest migration, in our own migration tables (we live in the
 * host's database and must not touch Kysely's default `kysely_migration`).
 * `migrateToLatest` reports failure in its result instead of throwing: we throw.
 */
export async function migrateToLatest(db: Kysely<any>, types: SqlColumnTypes, schema?: string): Promise<void> {
  const migrations = createMigrations(types)
  const provider: MigrationProvider = { getMigrations: async () => migrations }
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName
    throw new Error(`fastify-workforce-api: migration ${failed ?? '(unknown)'} failed: ${String(error)}`, { cause: error })
  }
}
