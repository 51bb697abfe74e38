import Fastify, { type FastifyInstance, type LightMyRequestResponse as Response } from 'fastify'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { openSqliteAdapter, type SqliteAdapter } from '../../adapters/sqlite/index.js'
import { sqliteCodec } from '../../adapters/sqlite/sqlite-codec.js'
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_PURGE_BATCH,
  IDEMPOTENCY_PURGE_INTERVAL_MS,
  IDEMPOTENCY_RETENTION_MS,
  type IdempotencySettings,
} from '../../src/corridor/idempotency.js'
import type { KeyScope } from '../../src/keys/key-manager.js'
import type { Clock } from '../../src/ports/clock.js'
import type { ChangeEvent, WriteStorage, WriteTransaction } from '../../src/ports/write-storage.js'
import type { WorkforceApiOptions } from '../../src/options.js'
import { workforceApi } from '../../src/plugin.js'
import type { Dataset } from '../../src/ports/dataset.js'
import type { ReferenceAdapterPorts } from '../../src/ports/index.js'
import { PREFIX, seedDataset } from './build.js'
import { withResponseChecks } from './response-checks.js'

export { PREFIX, seedDataset }

/** The ports of an adapter with the write path. */
export type WriteAdapter = ReferenceAdapterPorts

/** One idempotency record as the store keeps it, read back for assertions. */
export interface IdempotencyRow {
  slot: string
  state: string
  company_id: number
  created_at: Date
}

/** An opened adapter and the windows into it that the HTTP API does not offer. */
export interface OpenedWriteAdapter {
  adapter: WriteAdapter
  /** Change events recorded so far, in the order they were recorded. */
  events(): Promise<ChangeEvent[]>
  /** Every idempotency record the store holds. */
  idempotencyRecords(): Promise<IdempotencyRow[]>
}

export interface WriteAdapterFactory {
  name: string
  /** A fresh, empty adapter; every call gives an independent store. */
  open(): Promise<OpenedWriteAdapter>
}

async function openMemory(): Promise<OpenedWriteAdapter> {
  const adapter = createMemoryAdapter()
  return {
    adapter,
    events: async () => adapter.events.map((event) => ({ ...event })),
    idempotencyRecords: async () =>
      [...adapter.idempotency.records.values()].map((r) => ({ slot: r.slot, state: r.state, company_id: r.company_id, created_at: r.created_at })),
  }
}

async function openSqlite(): Promise<OpenedWriteAdapter> {
  const adapter: SqliteAdapter = await openSqliteAdapter({ filename: ':memory:' })
  const c = sqliteCodec
  return {
    adapter,
    async events() {
      const rows = await adapter.db.selectFrom('wfa_change_events').selectAll().orderBy('id').execute()
      return rows.map((row) => ({
        id: row.event_id as string,
        company_id: c.readInt(row.company_id),
        type: row.type as string,
        resource_id: c.readInt(row.resource_id),
        occurred_at: c.readInstant(row.occurred_at),
        payload: row.payload as string,
      }))
    },
    async idempotencyRecords() {
      const rows = await adapter.db.selectFrom('wfa_idempotency').selectAll().orderBy('created_at').execute()
      return rows.map((row) => ({
        slot: row.slot as string,
        state: row.state as string,
        company_id: c.readInt(row.company_id),
        created_at: c.readInstant(row.created_at),
      }))
    },
  }
}

/**
 * The adapters the write suites run against (`describe.each(WRITE_ADAPTERS)`).
 * Append an entry to run every write test on another backend too.
 */
export const WRITE_ADAPTERS: WriteAdapterFactory[] = [
  { name: 'memory', open: openMemory },
  { name: 'sqlite', open: openSqlite },
]

/** A clock that only moves when told to (style.md: fake time instead of sleeping). */
export class FakeClock implements Clock {
  constructor(private ms: number) {}
  now(): number {
    return this.ms
  }
  advance(ms: number): void {
    this.ms += ms
  }
  /** `now()` as the API renders it: `toISOString()`. */
  iso(): string {
    return new Date(this.ms).toISOString()
  }
}

/** Where every test clock starts: after every timestamp of the seed dataset. */
export const START_MS = Date.UTC(2026, 5, 1, 9, 0, 0, 0)

/** A write that `WriteControl.holdNext` stopped before its transaction began. */
export interface HeldWrite {
  /** Settles once the write has reached `transaction()` and is waiting. */
  arrived: Promise<void>
  /** Lets the write go on into the adapter's transaction. */
  release(): void
}

type Plan =
  | { kind: 'hold'; arrive(): void; released: Promise<void> }
  | { kind: 'fail'; error: Error }
  | { kind: 'failAt'; method: keyof WriteTransaction; error: Error }

/**
 * The `writes` port the plugin is given in tests: the adapter's own, with ways to make the
 * next write wait for the test (a request "in flight"), fail before its transaction (an
 * outage → 5xx) or fail part-way through it (atomicity), and to give every write latency.
 * Waits happen before the adapter's transaction begins, so nothing is locked meanwhile.
 */
export class WriteControl implements WriteStorage {
  readonly #plans: Plan[] = []
  readonly #releases: Array<() => void> = []
  #latency: (() => Promise<void>) | null = null

  constructor(private readonly inner: WriteStorage) {}

  async transaction<T>(work: (tx: WriteTransaction) => Promise<T>): Promise<T> {
    const plan = this.#plans.shift()
    if (plan?.kind === 'fail') throw plan.error
    if (plan?.kind === 'hold') {
      plan.arrive()
      await plan.released
    }
    if (this.#latency !== null) await this.#latency()
    if (plan?.kind === 'failAt') return this.inner.transaction((tx) => work(failingAt(tx, plan.method, plan.error)))
    return this.inner.transaction(work)
  }

  /**
   * Makes every write wait for `latency` first, like a database across a network. The
   * reference adapters answer within the same event-loop turn, so without it a request can
   * finish before the next one on another socket is even read, and requests never overlap.
   */
  setLatency(latency: (() => Promise<void>) | null): void {
    this.#latency = latency
  }

  holdNext(): HeldWrite {
    let arrive!: () => void
    let release!: () => void
    const arrived = new Promise<void>((resolve) => (arrive = resolve))
    const released = new Promise<void>((resolve) => (release = resolve))
    this.#plans.push({ kind: 'hold', arrive, released })
    this.#releases.push(release)
    return { arrived, release }
  }

  /** Lets every held write go (the app closes without waiting on a test that failed mid-hold). */
  releaseAll(): void {
    for (const release of this.#releases) release()
  }

  failNext(error: Error = new Error('simulated database outage')): void {
    this.#plans.push({ kind: 'fail', error })
  }

  /** The next write's transaction throws when it calls `method`, after whatever it wrote before. */
  failNextAt(method: keyof WriteTransaction, error: Error = new Error(`simulated failure in ${method}`)): void {
    this.#plans.push({ kind: 'failAt', method, error })
  }
}

/** `tx` with `method` replaced by one that throws `error`. */
function failingAt(tx: WriteTransaction, method: keyof WriteTransaction, error: Error): WriteTransaction {
  return new Proxy(tx, {
    get(target, property) {
      if (property === method) return async () => Promise.reject(error)
      const value: unknown = Reflect.get(target, property)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

export interface BuildWriteOptions {
  /** Default: memory. */
  adapter?: WriteAdapterFactory
  /** Loaded before the app starts. Default: the seed dataset; `null` loads nothing. */
  dataset?: Dataset | null
  /** Plugin options over `{ prefix, storage, keyStore, modules, writes, idempotency, clock }`. */
  options?: Partial<WorkforceApiOptions>
}

export type Auth = string | Record<string, string>

export interface WriteTestApp {
  app: FastifyInstance
  adapter: WriteAdapter
  clock: FakeClock
  /** The `writes` port the plugin was given: hold or fail the next write. */
  writes: WriteControl
  /** Idempotency settings as the plugin uses them by default, for calling `purge` directly. */
  idempotencySettings(overrides?: Partial<IdempotencySettings>): IdempotencySettings
  /** A new key of `companyId` with `scopes` (default `['all']`): the full plaintext key. */
  keyFor(companyId: number, scopes?: readonly KeyScope[]): Promise<string>
  /** The key id (`owk_<id>_…`) of a plaintext key, for `app.workforceApi.keys.disable/enable`. */
  keyIdOf(key: string): string
  events(): Promise<ChangeEvent[]>
  idempotencyRecords(): Promise<IdempotencyRow[]>
  /** A plaintext key is sent as `X-Api-Key`; an object is sent as the headers. */
  get(path: string, auth: Auth): Promise<Response>
  post(path: string, body: unknown, auth: Auth): Promise<Response>
  patch(path: string, body: unknown, auth: Auth): Promise<Response>
  close(): Promise<void>
}

/** `Authorization: Bearer <key>`, plus an `Idempotency-Key` when given. */
export function bearer(key: string, idempotencyKey?: string): Record<string, string> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` }
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey
  return headers
}

const headersOf = (auth: Auth) => (typeof auth === 'string' ? { 'x-api-key': auth } : auth)

/**
 * A Fastify app with the plugin (writes included) at `/api/public` over a fresh adapter, a
 * fake clock starting at `START_MS`, and the adapter's writes behind a `WriteControl`.
 *
 * @example
 * let t: WriteTestApp
 * afterEach(() => t.close())
 * it('creates a to-do', async () => {
 *   t = await buildWriteApp({ adapter })
 *   const res = await t.post('/v1/todos', { title: 'x', list_id: 1, assigned_to: 1 }, await t.keyFor(1))
 * })
 */
export async function buildWriteApp(options: BuildWriteOptions = {}): Promise<WriteTestApp> {
  const factory = options.adapter ?? WRITE_ADAPTERS[0]
  if (factory === undefined) throw new Error('no write adapter configured')
  const opened = await factory.open()
  const { adapter } = opened
  const dataset = options.dataset === undefined ? seedDataset() : options.dataset
  if (dataset !== null) await adapter.loadDataset(dataset)
  const clock = new FakeClock(START_MS)
  const writes = new WriteControl(adapter.writes)
  // Every response is checked against the OpenAPI document (test/helpers/openapi-setup.ts).
  const app = withResponseChecks(Fastify())
  const close = async () => {
    writes.releaseAll()
    await app.close()
    await adapter.close()
  }
  try {
    await app.register(workforceApi, {
      prefix: PREFIX,
      storage: adapter.storage,
      keyStore: adapter.keyStore,
      modules: adapter.modules,
      writes,
      idempotency: adapter.idempotency,
      webhooks: adapter.webhooks,
      clock,
      ...options.options,
    })
    await app.ready()
  } catch (error) {
    await close().catch(() => {})
    throw error
  }
  const send = (method: 'GET' | 'POST' | 'PATCH', path: string, auth: Auth, body?: unknown) =>
    app.inject({ method, url: `${PREFIX}${path}`, headers: headersOf(auth), ...(body === undefined ? {} : { payload: body as object }) })
  const timings = options.options?.idempotencyOptions ?? {}

  return {
    app,
    adapter,
    clock,
    writes,
    idempotencySettings: (overrides = {}) => ({
      store: adapter.idempotency,
      clock,
      leaseMs: timings.leaseMs ?? IDEMPOTENCY_LEASE_MS,
      retentionMs: timings.retentionMs ?? IDEMPOTENCY_RETENTION_MS,
      purgeIntervalMs: timings.purgeIntervalMs ?? IDEMPOTENCY_PURGE_INTERVAL_MS,
      purgeBatch: timings.purgeBatch ?? IDEMPOTENCY_PURGE_BATCH,
      ...overrides,
    }),
    async keyFor(companyId, scopes = ['all']) {
      return (await app.workforceApi.keys.create({ companyId, scopes, expiresAt: null, name: null })).key
    },
    keyIdOf: (key) => key.split('_')[1] as string,
    events: opened.events,
    idempotencyRecords: opened.idempotencyRecords,
    get: (path, auth) => send('GET', path, auth),
    post: (path, body, auth) => send('POST', path, auth, body),
    patch: (path, body, auth) => send('PATCH', path, auth, body),
    close,
  }
}
