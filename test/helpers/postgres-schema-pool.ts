import pg from 'pg'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'

/**
 * Migrated schemas handed out as if freshly migrated, for suites that need a fresh one per test
 * (the Postgres conformance run: 343 tests). Migrating a schema costs a third of a second to a
 * second of DDL on the server; putting a used one back as it was after its migration costs a few
 * milliseconds: its rows deleted, the rows its migrations wrote put back, its sequences restarted
 * where they stood. Only data is reset: a test that changes a schema's tables must not use it.
 *
 * `take()` gives a schema nobody holds, migrating a new one when none is free; `release(schema)`
 * resets it for the next test, or drops it if the reset fails.
 */
export interface PostgresSchemaPool {
  take(): Promise<string>
  release(schema: string): Promise<void>
  /** Drops every schema of the pool and closes its connection. */
  end(): Promise<void>
}

/** Statements, sent as one query, that put a schema back as its migrations left it. */
type Snapshot = string

export function postgresSchemaPool(url: string, prefix: string): PostgresSchemaPool {
  const admin = new pg.Pool({ connectionString: url, max: 1 })
  // An idle connection's error (the database dropped while it closes) is no test's failure.
  admin.on('error', () => {})
  const free: string[] = []
  /** Every schema of the pool, held or free, with what restores it. */
  const snapshots = new Map<string, Snapshot>()
  let next = 0

  const drop = async (schema: string) => {
    snapshots.delete(schema)
    await admin.query(`drop schema if exists ${pg.escapeIdentifier(schema)} cascade`)
  }

  return {
    async take() {
      const reused = free.pop()
      if (reused !== undefined) return reused
      const schema = `${prefix}_${++next}`
      try {
        const adapter = await openPostgresAdapter({ connectionString: url }, { schema })
        await adapter.close()
        snapshots.set(schema, await snapshotOf(admin, schema))
      } catch (error) {
        await drop(schema)
        throw error
      }
      return schema
    },
    async release(schema) {
      const snapshot = snapshots.get(schema)
      if (snapshot === undefined) return
      try {
        await admin.query(snapshot)
        free.push(schema)
      } catch {
        // The reset's own transaction, if it failed inside it, ends with the schema.
        await admin.query('rollback').catch(() => {})
        await drop(schema)
      }
    },
    async end() {
      for (const schema of [...snapshots.keys()]) await drop(schema)
      await admin.end()
    },
  }
}

/**
 * What a freshly migrated schema holds, as one statement that restores it: in a transaction with
 * triggers off (so deleting fires no bookkeeping of its own), every table emptied, the rows the
 * migrations wrote put back, every sequence set to where it stood.
 */
async function snapshotOf(admin: pg.Pool, schema: string): Promise<Snapshot> {
  const { name, tables, sequences } = await relationsOf(admin, schema)
  const statements = ['begin', 'set local session_replication_role = replica']
  const restores: string[] = []
  for (const tablename of tables) {
    statements.push(`delete from ${name(tablename)}`)
    const { rows: [held] } = await admin.query<{ rows: string | null }>(`select json_agg(t)::text as rows from ${name(tablename)} t`)
    if (held?.rows == null) continue
    restores.push(`insert into ${name(tablename)} select * from json_populate_recordset(null::${name(tablename)}, ${pg.escapeLiteral(held.rows)}::json)`)
  }
  statements.push(...restores)
  for (const sequencename of sequences) {
    const { rows: [position] } = await admin.query<{ last_value: string; is_called: boolean }>(`select last_value, is_called from ${name(sequencename)}`)
    statements.push(`select setval(${pg.escapeLiteral(name(sequencename))}, ${BigInt(position!.last_value)}, ${position!.is_called})`)
  }
  statements.push('commit')
  return statements.join(';\n')
}

/** A schema's tables and sequences, by name, and how to name one of them in SQL. */
export async function relationsOf(admin: pg.Pool, schema: string): Promise<{ name(relation: string): string; tables: string[]; sequences: string[] }> {
  const { rows: tables } = await admin.query<{ tablename: string }>('select tablename from pg_tables where schemaname = $1 order by tablename', [schema])
  const { rows: sequences } = await admin.query<{ sequencename: string }>('select sequencename from pg_sequences where schemaname = $1 order by sequencename', [schema])
  return {
    name: (relation) => `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(relation)}`,
    tables: tables.map((row) => row.tablename),
    sequences: sequences.map((row) => row.sequencename),
  }
}
