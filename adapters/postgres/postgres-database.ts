import { createHash } from 'node:crypto'
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely'
import type * as pg from 'pg'
import { StorageUnavailable } from '../../src/ports/errors.js'
import { FIXED_TEXT, type PreparedQuery, type SqlRunner } from '../sql/prepared.js'
import { postgresTypes } from './postgres-codec.js'
import { pgDriver } from './postgres-driver.js'
import { acquireTimeoutCause, toStorageError, unavailableReason } from './postgres-errors.js'

/**
 * While Postgres is known to be unreachable, the guard checks it (`select 1`) this often;
 * operations fail at once meanwhile, and the first check that succeeds ends the outage.
 */
export const UNAVAILABLE_PROBE_INTERVAL_MS = 250

/** Connections in a pool we create: pg's own default, stated so `minConnections` can be checked against it. */
export const POOL_SIZE = 10

/** How the pool we create connects; see `openPostgresAdapter` for each value's default. */
export interface PostgresPoolSettings {
  statementTimeoutMs: number
  /**
   * Connections the pool keeps open once `warmUp()` opened them (pg-pool's `min`: idle
   * clients at or below it are not closed by the idle timeout). At most `max`.
   */
  minConnections: number
  /** pg-pool's `connectionTimeoutMillis`: waiting for a free client and connecting a new one. */
  acquireTimeoutMs: number
  /** TCP keepalive's initial delay on every connection; 0 turns keepalive off. */
  keepAliveDelayMs: number
}

/**
 * Creates the pool `openPostgresAdapter` owns. Both session settings travel in the startup
 * packet (`options`), so they hold on every connection of this pool from its first statement
 * (a connection string's own `?options=` would replace them):
 * - `statement_timeout`: no statement can run unbounded (a COUNT over a huge filter included),
 *   and a query the client gave up on stops on the server too. It is below the guard's
 *   `queryTimeoutMs`, so an expensive statement on a server that answers is stopped by the
 *   server first (a `StatementTimeout`, 504) and never reaches the client-side bound, which
 *   would read it as an outage;
 * - `plan_cache_mode = force_custom_plan`: a named statement is planned for the tenant and
 *   filter values at hand every time. With the default, after five runs Postgres may keep
 *   one generic plan for every tenant, costed for an average tenant: a small tenant then
 *   pays for a large one's plan (docs/benchmarks-postgres.md). Planning costs ~0.1 ms. (The
 *   webhook claim, one statement over every company whose plan is the same whatever its
 *   values, takes a generic plan for its own transaction once its table has statistics:
 *   `SqlWebhookStore`.)
 * `connectionTimeoutMillis` bounds both the wait for a free client and the connect of a new
 * one (pg-pool has no other way to give up on a server that accepts TCP but never answers).
 */
export function createPostgresPool(connectionString: string, settings: PostgresPoolSettings): pg.Pool {
  const options = `-c statement_timeout=${settings.statementTimeoutMs} -c plan_cache_mode=force_custom_plan`
  const pool = new pgDriver.Pool({
    connectionString,
    options,
    connectionTimeoutMillis: settings.acquireTimeoutMs,
    max: POOL_SIZE,
    min: settings.minConnections,
    keepAlive: settings.keepAliveDelayMs > 0,
    keepAliveInitialDelayMillis: settings.keepAliveDelayMs,
  })
  // Without a listener an idle client's error (server restart, network drop) would crash
  // the process; pg has already removed that client and the next query gets a new one.
  pool.on('error', () => {})
  return pool
}

/** The client-side bounds on every operation of the ports; 0 turns one off. */
export interface PostgresOperationTimeouts {
  /** Checking out a client, connecting a new one included. */
  acquireTimeoutMs: number
  /** Waiting for the answer to one statement. */
  queryTimeoutMs: number
}

/**
 * A checked-out client as the guard hands it out: bounded queries, errors already mapped.
 * `release()` returns it to the pool, or has the pool discard it if its connection is broken.
 */
export type GuardedClient = PostgresPoolClient & {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>
}

interface ClientState {
  guarded: GuardedClient
  /** Set once the connection is unusable: a timed-out query, a lost socket. Never cleared. */
  broken: Error | null
  released: boolean
}

/**
 * The one boundary between the ports and pg: Kysely and the prepared-statement runner both
 * check clients out here. It
 * - bounds each acquire and each statement on the client side, because a frozen or
 *   unreachable server never answers, so `statement_timeout` cannot fire;
 * - turns "cannot answer now" failures into `StorageUnavailable` (503), once, a statement the
 *   server stopped at `statement_timeout` into `StatementTimeout` (504), and lets every other
 *   error through untouched. A `StatementTimeout` is the server answering: its connection stays
 *   in use and it never starts the fail-fast mode below;
 * - has the pool discard a client whose query timed out or whose socket failed, instead of
 *   handing it out again with a stale query still on its wire;
 * - fails at once while the server is known to be unreachable, so an outage costs a request
 *   milliseconds, not a timeout (nor one per step: a 503's own clean-up, such as releasing an
 *   idempotency slot, fails at once too). Meanwhile it checks the server itself every
 *   `UNAVAILABLE_PROBE_INTERVAL_MS`; the first check that succeeds, or any statement that
 *   does, ends the outage: no restart needed.
 */
export class PostgresGuard {
  readonly #pool: pg.Pool
  readonly #timeouts: PostgresOperationTimeouts
  readonly #states = new WeakMap<pg.PoolClient, ClientState>()
  /** When the current outage was first seen (ms since epoch), or null while all is well. */
  #unreachableSince: number | null = null
  #probe: NodeJS.Timeout | undefined
  #closed = false
  /** Acquires still waiting for a client: an outage ends their wait at once. */
  readonly #waiting = new Set<(error: StorageUnavailable) => void>()
  /** Clients checked out through `acquire()` and not yet released. */
  #checkedOut = 0

  constructor(pool: pg.Pool, timeouts: PostgresOperationTimeouts) {
    this.#pool = pool
    this.#timeouts = timeouts
  }

  /** Checks out a client within `acquireTimeoutMs`, or throws `StorageUnavailable`. */
  async acquire(): Promise<GuardedClient> {
    if (this.#unreachableSince !== null) {
      throw new StorageUnavailable(`postgres has been unreachable since ${new Date(this.#unreachableSince).toISOString()}`)
    }
    let client: pg.PoolClient
    try {
      client = await this.#connectWithin(this.#timeouts.acquireTimeoutMs)
    } catch (error) {
      // No connection in time is an outage too: otherwise every later step of a request (a
      // 503's clean-up included) would wait its own acquire timeout behind clients stuck on a
      // frozen server. Unless every client of a full pool is checked out through this guard:
      // then each has its statements bounded by `queryTimeoutMs`, so a frozen server is found
      // by them within that bound, and the wait only says the pool is busy. That is load, not
      // an outage: this request gets its 503, and the others keep waiting for a client
      // instead of all failing at once (issue 21: a burst on a loaded machine turned one slow
      // acquire into a hundred instant 503s).
      const reason = unavailableReason(error)
      throw this.#failed(error, reason !== null && !(reason === 'busy' && this.#busyWithOwnClients()))
    }
    return this.#stateOf(client).guarded
  }

  /** Whether the pool is full and every client in it is checked out through this guard, with its statements bounded. */
  #busyWithOwnClients(): boolean {
    const max = this.#pool.options.max ?? POOL_SIZE
    return this.#timeouts.queryTimeoutMs > 0 && this.#pool.totalCount >= max && this.#checkedOut >= this.#pool.totalCount
  }

  /**
   * Opens up to `count` connections at once (each answers `select 1`) and returns them to the
   * pool idle, so the first requests find connections ready instead of queueing behind their
   * handshakes. Resolves with how many are open; a connection that cannot be had within
   * `acquireTimeoutMs` is not counted (the outage rules above apply as to any acquire).
   */
  async warmUp(count: number): Promise<number> {
    const clients = await Promise.allSettled(Array.from({ length: count }, () => this.acquire()))
    let opened = 0
    await Promise.all(
      clients.map(async (settled) => {
        if (settled.status === 'rejected') return
        try {
          await settled.value.query({ text: 'select 1' })
          opened += 1
        } catch {
          // Counted as not opened; the guard has already marked the client broken if it is.
        } finally {
          settled.value.release()
        }
      }),
    )
    return opened
  }

  /** Stops checking on the server; the adapter calls it when it closes. */
  close(): void {
    this.#closed = true
    clearTimeout(this.#probe)
  }

  /** During an outage: `select 1` within the usual bounds, again and again until it answers. */
  async #checkServer(): Promise<void> {
    this.#probe = undefined
    if (this.#closed || this.#unreachableSince === null) return
    try {
      const client = this.#stateOf(await this.#connectWithin(this.#timeouts.acquireTimeoutMs)).guarded
      try {
        await client.query({ text: 'select 1' })
      } finally {
        client.release()
      }
    } catch {
      // Still unreachable (or closing): check again later.
    }
    if (this.#unreachableSince !== null && !this.#closed) {
      this.#probe = setTimeout(() => void this.#checkServer(), UNAVAILABLE_PROBE_INTERVAL_MS)
      this.#probe.unref()
    }
  }

  #connectWithin(ms: number): Promise<pg.PoolClient> {
    const connecting = this.#pool.connect()
    if (ms <= 0) return connecting
    return new Promise((resolve, reject) => {
      let gaveUp = false
      // A host's pool may have no connect timeout of its own, and an outage found meanwhile
      // makes waiting pointless: give up here, and hand the client back the moment it arrives.
      const giveUp = (error: StorageUnavailable) => {
        if (gaveUp) return
        gaveUp = true
        clearTimeout(timer)
        this.#waiting.delete(giveUp)
        reject(error)
      }
      const timer = setTimeout(() => giveUp(new StorageUnavailable(`postgres: no connection within ${ms} ms`, { cause: acquireTimeoutCause(ms) })), ms)
      this.#waiting.add(giveUp)
      connecting.then(
        (client) => {
          clearTimeout(timer)
          this.#waiting.delete(giveUp)
          if (gaveUp) client.release()
          else resolve(client)
        },
        (error: unknown) => {
          clearTimeout(timer)
          this.#waiting.delete(giveUp)
          if (!gaveUp) reject(error)
        },
      )
    })
  }

  #stateOf(client: pg.PoolClient): ClientState {
    // Kysely keys its connection objects by client identity: one wrapper per pg client, for good.
    // Every checkout passes here once (acquire and the outage check alike); release undoes it.
    this.#checkedOut++
    const known = this.#states.get(client)
    if (known !== undefined) {
      known.released = false
      return known
    }
    const state: ClientState = {
      broken: null,
      released: false,
      guarded: {
        // Kysely calls query(sql, parameters); the runner passes a named statement's config.
        // (Kysely's other form, query(cursor), needs a `cursor` in the dialect, which we never set.)
        query: ((textOrConfig: string | pg.QueryConfig, values?: readonly unknown[]) =>
          this.#query(state, client, typeof textOrConfig === 'string' ? queryConfig(textOrConfig, values) : textOrConfig)) as GuardedClient['query'],
        release: () => {
          if (state.released) return
          state.released = true
          this.#checkedOut--
          // An error makes pg-pool end the client instead of keeping it idle.
          client.release(state.broken ?? undefined)
        },
      },
    }
    // pg emits 'error' on a checked-out client whose socket fails between queries; unheard,
    // it would crash the process. The client is then of no further use.
    client.on('error', (error) => {
      state.broken ??= error
    })
    this.#states.set(client, state)
    return state
  }

  async #query(state: ClientState, client: pg.PoolClient, config: pg.QueryConfig): Promise<pg.QueryResult> {
    if (state.broken !== null) {
      throw new StorageUnavailable(`postgres: the connection was lost (${state.broken.message})`, { cause: state.broken })
    }
    try {
      const result = await this.#answerWithin(state, client, config, this.#timeouts.queryTimeoutMs)
      this.#unreachableSince = null
      return result
    } catch (error) {
      // A cancelled statement (57014: statement_timeout or a cancel request) leaves a good
      // connection and a server that answers: neither breaks the client nor starts an outage.
      const unreachable = unavailableReason(error) === 'unreachable'
      if (unreachable) state.broken ??= error instanceof Error ? error : new Error(String(error))
      throw this.#failed(error, unreachable)
    }
  }

  #answerWithin(state: ClientState, client: pg.PoolClient, config: pg.QueryConfig, ms: number): Promise<any> {
    const answering = client.query(config)
    if (ms <= 0) return answering
    return new Promise((resolve, reject) => {
      let settled = false
      const giveUp = () => {
        if (settled) return
        settled = true
        const error = new StorageUnavailable(`postgres: no answer within ${ms} ms`)
        state.broken ??= error
        // The statement may still be on the wire or running: this connection can never be
        // trusted with another one. Destroying the socket ends it now (a frozen server would
        // never acknowledge a polite Terminate); the server's statement_timeout, or the reset
        // it reads when it wakes up, ends the backend's side.
        ;(client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy()
        reject(error)
      }
      // Node runs expired timers before it reads sockets: after an event-loop stall the answer
      // (the server's own statement_timeout among them) may already wait on the socket when
      // this fires. One turn of the loop lets it be read first, so an answer that came in time
      // is never taken for an outage.
      const timer = setTimeout(() => setImmediate(giveUp), ms)
      answering.then(
        (result) => {
          clearTimeout(timer)
          if (settled) return
          settled = true
          resolve(result)
        },
        (error: unknown) => {
          clearTimeout(timer)
          if (settled) return
          settled = true
          reject(error)
        },
      )
    })
  }

  /** Maps `error` for the ports; with `outage`, fails fast from now until the server answers. */
  #failed(error: unknown, outage: boolean): unknown {
    const mapped = toStorageError(error)
    if (outage && this.#unreachableSince === null && !this.#closed) {
      this.#unreachableSince = Date.now()
      const since = new Date(this.#unreachableSince).toISOString()
      for (const giveUp of [...this.#waiting]) giveUp(new StorageUnavailable(`postgres became unreachable at ${since} while waiting for a connection`))
      this.#probe = setTimeout(() => void this.#checkServer(), 0)
      this.#probe.unref()
    }
    return mapped
  }
}

/**
 * A Kysely instance whose every client comes from `guard`: bounded, mapped, and parsing
 * results with `postgresTypes` (per query; the pool's global parsers stay untouched).
 * Destroying it never ends the pool: the adapter decides that, because a host's pool must
 * outlive us.
 */
export function createPostgresKysely(source: PostgresGuard | pg.Pool): Kysely<any> {
  const guard = guardOf(source)
  const pool: PostgresPool = {
    connect: () => guard.acquire(),
    end: async () => {},
  }
  return new Kysely({ dialect: new PostgresDialect({ pool }) })
}

/**
 * Runs the hot-path SQL as named prepared statements: each connection parses a statement
 * once and then only binds and executes it. The name is a hash of the SQL text, so the same
 * text always has the same name (pg refuses one name for two texts) and differently
 * schema-qualified adapters sharing a pool never collide.
 */
export function createPostgresRunner(source: PostgresGuard | pg.Pool): SqlRunner {
  const guard = guardOf(source)
  const names = new WeakMap<PreparedQuery, string>()
  return {
    async all(query: PreparedQuery, values: unknown[]) {
      let name = names.get(query)
      if (name === undefined) {
        name = statementName(query.sql)
        names.set(query, name)
      }
      const client = await guard.acquire()
      try {
        const result = await client.query({ name, text: query.sql, values, types: postgresTypes })
        return result.rows as Record<string, unknown>[]
      } finally {
        client.release()
      }
    },
  }
}

/** A bare pool (benchmarks, tests) gets the guard's mapping and discarding, without timeouts. */
function guardOf(source: PostgresGuard | pg.Pool): PostgresGuard {
  return source instanceof PostgresGuard ? source : new PostgresGuard(source, { acquireTimeoutMs: 0, queryTimeoutMs: 0 })
}

/** Names of `FIXED_TEXT` statements by their text. Such texts are few (a store's, per setting and claim size: dozens); the bound only guards against a misuse. */
const fixedNames = new Map<string, string>()
const MAX_FIXED_NAMES = 256

/** What Kysely's `query(sql, parameters)` runs: a named prepared statement for a `FIXED_TEXT` statement, else an unnamed one. */
function queryConfig(text: string, values: readonly unknown[] | undefined): pg.QueryConfig {
  const config: pg.QueryConfig = { text, values: values === undefined ? [] : [...values], types: postgresTypes }
  if (!text.startsWith(FIXED_TEXT)) return config
  let name = fixedNames.get(text)
  if (name === undefined) {
    name = statementName(text)
    if (fixedNames.size < MAX_FIXED_NAMES) fixedNames.set(text, name)
  }
  config.name = name
  return config
}

/** `wfa_` plus 128 bits of the SQL's SHA-256: well inside Postgres' 63-byte identifier limit. */
export function statementName(sql: string): string {
  return `wfa_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}`
}
