import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { afterAll } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { openPostgresAdapter } from '../../adapters/postgres/index.js'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import type { WorkforceAdminOptions } from '../../src/admin/options.js'
import { workforceAdmin } from '../../src/admin/plugin.js'
import type { WorkforceApiOptions } from '../../src/options.js'
import type { AuditEntry } from '../../src/ports/audit-store.js'
import { portsOf, type ReferenceAdapterPorts } from '../../src/ports/index.js'
import { workforceApi } from '../../src/plugin.js'
import { seedDataset } from '../helpers/build.js'
import { postgresSchemaPool, type PostgresSchemaPool } from '../helpers/postgres-schema-pool.js'

export const API = '/api/public'
export const ADMIN = '/settings/integrations/api'
export const SECRET_KEY = randomBytes(32).toString('base64')

/** Opens a fresh adapter with the seed dataset; `shared` opens a second handle on the same data. */
export interface AdminAdapterFactory {
  name: string
  open(): Promise<{ adapter: ReferenceAdapterPorts & { db?: unknown }; second(): Promise<ReferenceAdapterPorts>; drop(): Promise<void> }>
}

export function memoryFactory(): AdminAdapterFactory {
  return {
    name: 'memory',
    async open() {
      const adapter = createMemoryAdapter()
      await adapter.loadDataset(seedDataset())
      return { adapter, second: async () => ({ ...adapter, close: async () => {} }), drop: async () => {} }
    },
  }
}

export function sqliteFactory(dir: () => string): AdminAdapterFactory {
  return {
    name: 'sqlite',
    async open() {
      const filename = `${dir()}/admin-${randomBytes(4).toString('hex')}.db`
      const adapter = await openSqliteAdapter({ filename })
      await adapter.loadDataset(seedDataset())
      return { adapter, second: () => openSqliteAdapter({ filename }), drop: async () => {} }
    },
  }
}

export function postgresFactory(url: () => string): AdminAdapterFactory {
  // A schema as its migrations left it for each test: migrated once, put back after each
  // (test/helpers/postgres-schema-pool.ts). Call inside the suite's `describe`, after
  // `useTestDatabase()`, so the pool ends before the database is dropped.
  let schemas: PostgresSchemaPool | undefined
  afterAll(async () => {
    await schemas?.end()
  })
  return {
    name: 'postgres',
    async open() {
      schemas ??= postgresSchemaPool(url(), `admin_${randomBytes(4).toString('hex')}`)
      const schema = await schemas.take()
      const adapter = await openPostgresAdapter({ connectionString: url() }, { schema })
      await adapter.loadDataset(seedDataset())
      return { adapter, second: () => openPostgresAdapter({ connectionString: url() }, { schema }), drop: () => schemas!.release(schema) }
    },
  }
}

/**
 * The host's demo session for tests: `x-test-session: <companyId>:<userId>:<name>`. A real host
 * reads its own cookie here.
 */
export const testAuthorize: WorkforceAdminOptions['authorize'] = (request) => {
  const header = request.headers['x-test-session']
  if (typeof header !== 'string') return null
  const [company, id, name] = header.split(':')
  return { companyId: Number(company), actor: { id: id as string, name: name as string } }
}

/** How the suite reaches the app: `app.inject`, or real HTTP on a loopback port. */
export type AdminTransport = 'inject' | 'http'

/** The part of a response the tests read, the same over either transport. */
export type AdminResponse = Pick<LightMyRequestResponse, 'statusCode' | 'headers' | 'body' | 'json'>

export interface AdminRequest {
  method: string
  url: string
  headers?: Record<string, string>
  payload?: string
}

export interface AdminTestApp {
  app: FastifyInstance
  adapter: ReferenceAdapterPorts
  audited: AuditEntry[]
  /** Any request, over the app's transport. */
  send(request: AdminRequest): Promise<AdminResponse>
  /** An admin request as `session` (default company 1, user u1); mutations carry the CSRF header and JSON. */
  admin(method: string, path: string, body?: unknown, options?: { session?: string | null; headers?: Record<string, string> }): Promise<AdminResponse>
  /** A public API request with an API key. */
  api(method: string, path: string, key: string, body?: unknown): Promise<AdminResponse>
  close(): Promise<void>
}

async function overHttp(origin: string, request: AdminRequest): Promise<AdminResponse> {
  const response = await fetch(`${origin}${request.url}`, {
    method: request.method,
    headers: request.headers ?? {},
    ...(request.payload === undefined ? {} : { body: request.payload }),
  })
  const body = await response.text()
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  return { statusCode: response.status, headers, body, json: () => JSON.parse(body) }
}

export async function buildAdminApp(
  adapter: ReferenceAdapterPorts,
  options: { api?: Partial<WorkforceApiOptions>; admin?: Partial<WorkforceAdminOptions>; transport?: AdminTransport } = {},
): Promise<AdminTestApp> {
  const app = Fastify()
  const audited: AuditEntry[] = []
  await app.register(workforceApi, {
    prefix: API,
    ...portsOf(adapter),
    rateLimit: false,
    webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: true, dispatcher: false },
    ...options.api,
  })
  await app.register(workforceAdmin, { prefix: ADMIN, authorize: testAuthorize, onAudit: (entry) => void audited.push(entry), ...options.admin })
  let send: (request: AdminRequest) => Promise<AdminResponse>
  if (options.transport === 'http') {
    const origin = await app.listen({ host: '127.0.0.1', port: 0 })
    send = (request) => overHttp(origin, request)
  } else {
    await app.ready()
    send = (request) => app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers ?? {}, ...(request.payload === undefined ? {} : { payload: request.payload }) })
  }
  return {
    app,
    adapter,
    audited,
    send,
    admin(method, path, body, { session = '1:u1:Ada Admin', headers = {} } = {}) {
      const mutating = method !== 'GET'
      return send({
        method,
        url: `${ADMIN}${path}`,
        headers: {
          ...(session === null ? {} : { 'x-test-session': session }),
          ...(mutating ? { 'content-type': 'application/json', 'x-requested-with': 'workforce-admin' } : {}),
          ...headers,
        },
        ...(mutating ? { payload: JSON.stringify(body ?? {}) } : {}),
      })
    },
    api(method, path, key, body) {
      return send({
        method,
        url: `${API}${path}`,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      })
    },
    close: () => app.close(),
  }
}
