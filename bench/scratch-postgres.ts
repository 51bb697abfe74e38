import pg from 'pg'

/** A database of one bench run's own on a Postgres server; `drop()` removes it and ends `admin`. */
export interface ScratchPostgresDatabase {
  /** Its connection URL. */
  db: string
  name: string
  /** A connection to the server's own database, open until `drop()`. */
  admin: pg.Client
  drop(): Promise<void>
}

/**
 * Creates database `name` on the server of `serverUrl` (dropping a leftover of the same name
 * first) and fills it with `seed(url)`; if seeding fails, the database is dropped and the
 * error passed on. The soak and the cold-start bench seed theirs with `workforce-api seed`.
 */
export async function scratchPostgresDatabase(serverUrl: string, name: string, seed: (url: string) => void): Promise<ScratchPostgresDatabase> {
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`)
  await admin.query(`create database ${pg.escapeIdentifier(name)}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const drop = async () => {
    await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`)
    await admin.end()
  }
  try {
    seed(url.toString())
  } catch (error) {
    await drop()
    throw error
  }
  return { db: url.toString(), name, admin, drop }
}
