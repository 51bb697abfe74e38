import type { LoadProgress } from '../../adapters/sql/bulk-load.js'
import { loadPostgresDatasetStream, type PostgresBulkClient } from '../../adapters/postgres/postgres-bulk-load.js'
import { postgresCodec } from '../../adapters/postgres/postgres-codec.js'
import { streamDataset, type SeedOptions } from './generate.js'

/**
 * Seeds the database behind `client` with `generateDataset(options)`, made as it is loaded, in
 * one transaction (`loadPostgresDatasetStream`): `workforce-api seed`. `client` is one
 * connection the caller checked out, and releases.
 *
 * @example
 * const client = await adapter.pool.connect()
 * try {
 *   await seedPostgresDatabase(client, { scale: 1_000 })
 * } finally {
 *   client.release()
 * }
 */
export async function seedPostgresDatabase(client: PostgresBulkClient, options: SeedOptions = {}, progress: LoadProgress = {}): Promise<void> {
  await loadPostgresDatasetStream(client, postgresCodec, streamDataset(options), progress)
}
