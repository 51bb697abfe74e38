import Fastify, { type FastifyInstance, type FastifyServerOptions, type LightMyRequestResponse as Response } from 'fastify'
import type { CreatedKey, KeyScope } from '../../src/keys/key-manager.js'
import type { WorkforceApiOptions } from '../../src/options.js'
import { workforceApi } from '../../src/plugin.js'
import type { Dataset } from '../../src/ports/dataset.js'
import { generateDataset } from '../../src/seed/generate.js'
import { READ_ADAPTERS, type ReadAdapter, type ReadAdapterFactory } from './adapters.js'
import { withResponseChecks } from './response-checks.js'

export const PREFIX = '/api/public'

let seed: Dataset | undefined
/** The default seed dataset, generated once per test file (it is deterministic). */
export function seedDataset(): Dataset {
  seed ??= generateDataset()
  return seed
}

export interface BuildOptions {
  /** Default: the first of `READ_ADAPTERS` (memory). */
  adapter?: ReadAdapterFactory
  /** Loaded into the adapter before the app starts. Default: the seed dataset; `null` loads nothing. */
  dataset?: Dataset | null
  /** Plugin options over `{ prefix, storage, keyStore, modules }`; a function gets the opened adapter. */
  options?: Partial<WorkforceApiOptions> | ((adapter: ReadAdapter) => Partial<WorkforceApiOptions>)
  /** Fastify server options, e.g. `{ logger: { level: 'info', stream } }`. */
  fastify?: FastifyServerOptions
}

export interface KeyExtras {
  expiresAt?: Date | null
  name?: string
}

export interface TestApp {
  app: FastifyInstance
  adapter: ReadAdapter
  /** A new key of `companyId` with `scopes` (default `['all']`): the full plaintext key. */
  keyFor(companyId: number, scopes?: readonly KeyScope[], extras?: KeyExtras): Promise<string>
  /** Same, with the key's info (key_id, state …) for lifecycle tests. */
  createKey(companyId: number, scopes?: readonly KeyScope[], extras?: KeyExtras): Promise<CreatedKey>
  /** `GET <prefix><path>` with the key in `X-Api-Key`, or with the given headers. */
  get(path: string, auth?: string | Record<string, string | string[] | undefined>): Promise<Response>
  /** Closes the app, then the adapter. */
  close(): Promise<void>
}

/**
 * A Fastify app with the plugin at `/api/public` over a freshly opened adapter holding `dataset`.
 *
 * @example
 * let t: TestApp
 * afterEach(() => t.close())
 * it('lists users', async () => {
 *   t = await build({ adapter })
 *   const res = await t.get('/v1/users', await t.keyFor(1, ['users:read']))
 * })
 */
export async function build(options: BuildOptions = {}): Promise<TestApp> {
  const factory = options.adapter ?? READ_ADAPTERS[0]
  if (factory === undefined) throw new Error('no adapter configured')
  const adapter = await factory.open()
  const dataset = options.dataset === undefined ? seedDataset() : options.dataset
  if (dataset !== null) await adapter.loadDataset(dataset)
  const extra = typeof options.options === 'function' ? options.options(adapter) : (options.options ?? {})
  // Every response is checked against the OpenAPI document (test/helpers/openapi-setup.ts).
  const app = withResponseChecks(Fastify(options.fastify ?? {}))
  const closeAll = async () => {
    await app.close()
    await adapter.close()
  }
  try {
    await app.register(workforceApi, {
      prefix: PREFIX,
      storage: adapter.storage,
      keyStore: adapter.keyStore,
      modules: adapter.modules,
      ...extra,
    })
    await app.ready()
  } catch (error) {
    await closeAll().catch(() => {})
    throw error
  }

  const createKey = (companyId: number, scopes: readonly KeyScope[] = ['all'], extras: KeyExtras = {}) =>
    app.workforceApi.keys.create({ companyId, scopes, expiresAt: extras.expiresAt ?? null, name: extras.name ?? null })

  return {
    app,
    adapter,
    createKey,
    async keyFor(companyId, scopes, extras) {
      return (await createKey(companyId, scopes, extras)).key
    },
    get(path, auth) {
      const given = auth === undefined ? {} : typeof auth === 'string' ? { 'x-api-key': auth } : auth
      const headers = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as Record<string, string | string[]>
      return app.inject({ method: 'GET', url: `${PREFIX}${path}`, headers })
    },
    close: closeAll,
  }
}
