import Database from 'better-sqlite3'
import pg from 'pg'
import type { Row } from './pages-routes.js'

/** Runs one statement with `?` placeholders and its values; each backend prepares it once. */
export interface Sql {
  all(text: string, values: unknown[]): Promise<Row[]>
  close(): Promise<void>
}

export function sqliteSql(filename: string): Sql {
  const db = new Database(filename, { fileMustExist: true })
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  const statements = new Map<string, Database.Statement>()
  return {
    async all(text, values) {
      let statement = statements.get(text)
      if (statement === undefined) statements.set(text, (statement = db.prepare(text)))
      return statement.all(...values) as Row[]
    },
    async close() {
      db.close()
    },
  }
}

/** int8 (ids, cents, `count(*)`) as numbers and `date` as its `YYYY-MM-DD` text: what every pg app sets up. */
const PG_TYPES = new pg.TypeOverrides()
PG_TYPES.setTypeParser(20, 'text', Number)
PG_TYPES.setTypeParser(1082, 'text', (text: string) => text)

export function postgresSql(connectionString: string): Sql {
  const pool = new pg.Pool({ connectionString, max: 10 })
  const names = new Map<string, { name: string; text: string }>()
  return {
    async all(text, values) {
      let named = names.get(text)
      if (named === undefined) {
        let n = 0
        names.set(text, (named = { name: `baseline_${names.size}`, text: text.replace(/\?/g, () => `$${++n}`) }))
      }
      return (await pool.query({ ...named, values, types: PG_TYPES })).rows as Row[]
    },
    async close() {
      await pool.end()
    },
  }
}
