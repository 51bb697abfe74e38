// What every command's failure path needs, and nothing heavy: main.ts and failure.ts load it
// at start-up, before knowing which command runs (the commands themselves load lazily).

const POSTGRES_URL = /^postgres(ql)?:\/\//

/** Whether a `--db` value names a Postgres database (else it is a SQLite file path). */
export function isPostgresUrl(db: string): boolean {
  return POSTGRES_URL.test(db)
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
