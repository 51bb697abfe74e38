import type { ReferenceAdapterPorts } from '../ports/index.js'

const POSTGRES_URL = /^postgres(ql)?:\/\//

/** Whether a `--db` value names a Postgres database (else it is a SQLite file path). */
export function isPostgresUrl(db: string): boolean {
  return POSTGRES_URL.test(db)
}

/** What the CLI needs of an adapter: the ports, the fixture hook, module switches, close. */
export type CliAdapter = ReferenceAdapterPorts

/**
 * Opens the adapter a `--db` value names, migrating it: a `postgres://` URL, or else a
 * SQLite file path. Adapters are imported lazily so one never loads the other's driver.
 */
export async function openAdapter(db: string): Promise<CliAdapter> {
  if (POSTGRES_URL.test(db)) {
    const { openPostgresAdapter } = await import('../../adapters/postgres/index.js')
    return openPostgresAdapter({ connectionString: db })
  }
  const { openSqliteAdapter } = await import('../../adapters/sqlite/index.js')
  return openSqliteAdapter({ filename: db })
}

/** A `--db` value fit to print: a Postgres URL loses its password. */
export function describeDb(db: string): string {
  if (!POSTGRES_URL.test(db)) return db
  try {
    const url = new URL(db)
    if (url.password !== '') url.password = '***'
    return url.toString()
  } catch {
    return 'the Postgres database'
  }
}


/** A refusal the CLI prints as one line to stderr before exiting non-zero. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
    this.name = 'CliError'
  }
}
