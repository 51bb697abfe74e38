import { createHash } from 'node:crypto'
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely'
import pg from 'pg'
import type { PreparedQuery, SqlRunner } from '../sql/prepared.js'
import { postgresTypes } from './postgres-codec.js'

/**
 * Creates the pool `openPostgresAdapter` owns. Both settings travel in the startup packet
 * (`options`), so they hold on every connection of this pool from its first statement
 * (a connection string's own `?options=` would replace them):
 * - `statement_timeout`: no statement can run unbounded (a COUNT over a huge filter included);
 * - `plan_cache_mode = force_custom_plan`: a named statement is planned for the tenant and
 *   filter values at hand every time. With the default, after five runs Postgres may keep
 *   one generic plan for every tenant, costed for an average tenant: a small tenant then
 *   pays for a large one's plan (docs/benchmarks-postgres.md). Planning costs ~0.1 ms.
 */
export function createPostgresPool(connectionString: string, statementTimeoutMs: number): pg.Pool {
  const options = `-c statement_timeout=${statementTimeoutMs} -c plan_cache_mode=force_custom_plan`
  const pool = new pg.Pool({ connectionString, options })
  // Without a listener an idle client's error (server restart, network drop) would crash
  // the process; pg has already removed that client and the next query gets a new one.
  pool.on('error', () => {})
  return pool
}

/**
 * A Kysely instance over `pool` whose queries parse results with `postgresTypes` (per query;
 * the pool's global parsers stay untouched). Destroying it never ends the pool: the adapter
 * decides that, because a host's pool must outlive us.
 */
export function createPostgresKysely(pool: pg.Pool): Kysely<any> {
  return new Kysely({ dialect: new PostgresDialect({ pool: typedPool(pool) }) })
}

function typedPool(pool: pg.Pool): PostgresPool {
  // Kysely keys its connection objects by client identity: hand out one wrapper per client.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  return {
    async connect() {
      const client = await pool.connect()
      let wrapper = wrappers.get(client)
      if (wrapper === undefined) {
        wrapper = {
          // Kysely calls query(sql, parameters), or query(cursor) when streaming with a cursor.
          query: (textOrCursor: any, values?: readonly unknown[]): any =>
            typeof textOrCursor === 'string'
              ? client.query({ text: textOrCursor, values: [...(values ?? [])], types: postgresTypes })
              : client.query(textOrCursor),
          release: () => client.release(),
        }
        wrappers.set(client, wrapper)
      }
      return wrapper
    },
    end: async () => {},
  }
}

/**
 * Runs the hot-path SQL as named prepared statements: each connection parses a statement
 * once and then only binds and executes it. The name is a hash of the SQL text, so the same
 * text always has the same name (pg refuses one name for two texts) and differently
 * schema-qualified adapters sharing a pool never collide.
 */
export function createPostgresRunner(pool: pg.Pool): SqlRunner {
  const names = new WeakMap<PreparedQuery, string>()
  return {
    async all(query: PreparedQuery, values: unknown[]) {
      let name = names.get(query)
      if (name === undefined) {
        name = statementName(query.sql)
        names.set(query, name)
      }
      const result = await pool.query({ name, text: query.sql, values, types: postgresTypes })
      return result.rows as Record<string, unknown>[]
    },
  }
}

/** `wfa_` plus 128 bits of the SQL's SHA-256: well inside Postgres' 63-byte identifier limit. */
export function statementName(sql: string): string {
  return `wfa_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}`
}
