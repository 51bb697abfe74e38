// Pins the public types. `npm test` type-checks this file (`tsc --noEmit`): each
// `@ts-expect-error` must meet an error, and each `expectTypeOf` must hold. vitest then runs it,
// so what the types refuse is also refused at run time. test/package/ checks the same against
// the packed `.d.ts` in consumer projects.
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { seedDataset } from '../helpers/build.js'
import workforceApi, {
  KeyManagementError,
  normaliseScopes,
  portsOf,
  type ApiKeyInfo,
  type CreatedKey,
  type EventPublisher,
  type IdempotencyStore,
  type InvalidationFeed,
  type InvitationManager,
  type InviteSender,
  type KeyManager,
  type HostScopes,
  type KeyScope,
  type KeyStore,
  type ModuleRegistry,
  type RouteTableEntry,
  type Scope,
  type Storage,
  type WebhookManager,
  type WebhookStore,
  type WebhookTransport,
  type WorkforceApiDecorator,
  type WorkforceApiOptions,
  type WorkforcePorts,
  type WriteStorage,
  type WriteTransaction,
} from '../../src/index.js'

describe('public types', () => {
  let app: FastifyInstance
  afterEach(() => app.close())

  async function ready(): Promise<FastifyInstance> {
    app = Fastify()
    // Seeded: a key is made only for a company the storage holds.
    await app.register(workforceApi, { prefix: '/api/public', ...portsOf(createMemoryAdapter(seedDataset())) })
    await app.ready()
    return app
  }

  it('types app.workforceApi and each of its parts', async () => {
    const { workforceApi: decorator } = await ready()
    expectTypeOf(decorator).toEqualTypeOf<WorkforceApiDecorator>()
    expectTypeOf(decorator.keys).toEqualTypeOf<KeyManager>()
    expectTypeOf(decorator.invitations).toEqualTypeOf<InvitationManager>()
    expectTypeOf(decorator.webhooks).toEqualTypeOf<WebhookManager>()
    expectTypeOf(decorator.events).toEqualTypeOf<EventPublisher>()
    expectTypeOf(decorator.routes).toEqualTypeOf<readonly RouteTableEntry[]>()
    expectTypeOf(decorator.keys.create).returns.resolves.toEqualTypeOf<CreatedKey>()
    expectTypeOf(decorator.keys.list).returns.resolves.toEqualTypeOf<ApiKeyInfo[]>()
    expect(decorator.routes.length).toBeGreaterThan(0)
  })

  it('takes scopes as a union of the spec’s names and all: a typo does not compile, nor run', async () => {
    const { workforceApi: decorator } = await ready()
    // A host's own scopes join by declaration merging (`HostScopes`; examples/host-app/teams.ts adds teams:read).
    expectTypeOf<KeyScope>().toEqualTypeOf<Scope | Extract<keyof HostScopes, string> | 'all'>()
    expectTypeOf<'todos:write'>().toExtend<Scope>()
    expectTypeOf<'todos:wrte'>().not.toExtend<KeyScope>()
    await decorator.keys.create({ companyId: 1, scopes: ['todos:write', 'users:read'] })
    await decorator.keys.create({ companyId: 1, scopes: ['all'] })
    // @ts-expect-error 'todos:wrte' is not a scope
    await expect(decorator.keys.create({ companyId: 1, scopes: ['todos:wrte'] })).rejects.toThrow(KeyManagementError)
    const fromAForm: string[] = ['users:read']
    // @ts-expect-error names read at run time are plain strings: check them with normaliseScopes() first
    await decorator.keys.create({ companyId: 1, scopes: fromAForm })
    await decorator.keys.create({ companyId: 1, scopes: normaliseScopes(fromAForm) })
    expect(() => normaliseScopes(['todos:wrte'])).toThrow(KeyManagementError)
  })

  it('refuses an unknown option in an object literal, and at ready()', async () => {
    const ports = portsOf(createMemoryAdapter())
    // @ts-expect-error `prefx` is not an option (a typo of `prefix`)
    const options: WorkforceApiOptions = { ...ports, prefx: '/api/public' }
    expect(options).toHaveProperty('prefx')
    // @ts-expect-error `keyCache.ttl` is not an option (it is `ttlMs`)
    const nested: WorkforceApiOptions = { ...ports, keyCache: { ttl: 1000 } }
    expect(nested).toHaveProperty('keyCache')

    app = Fastify()
    // @ts-expect-error the same typo, straight into register()
    app.register(workforceApi, { ...ports, prefx: '/api/public' })
    await expect(app.ready()).rejects.toMatchObject({ code: 'WFA_ERR_OPTION_UNKNOWN' })
  })

  it('requires the three read ports and types the optional ones', () => {
    expectTypeOf<WorkforcePorts['storage']>().toEqualTypeOf<Storage>()
    expectTypeOf<WorkforcePorts['keyStore']>().toEqualTypeOf<KeyStore>()
    expectTypeOf<WorkforcePorts['modules']>().toEqualTypeOf<ModuleRegistry>()
    expectTypeOf<WorkforcePorts['writes']>().toEqualTypeOf<WriteStorage | undefined>()
    expectTypeOf<WorkforcePorts['idempotency']>().toEqualTypeOf<IdempotencyStore | undefined>()
    expectTypeOf<WorkforcePorts['invalidations']>().toEqualTypeOf<InvalidationFeed | undefined>()
    expectTypeOf<WorkforcePorts['webhooks']>().toEqualTypeOf<WebhookStore | undefined>()
    expectTypeOf<WorkforceApiOptions['invites']>().toEqualTypeOf<InviteSender | undefined>()
    expectTypeOf<NonNullable<NonNullable<WorkforceApiOptions['webhookOptions']>['transport']>>().toEqualTypeOf<WebhookTransport>()
    expectTypeOf<Parameters<WriteStorage['transaction']>[0]>().parameter(0).toEqualTypeOf<WriteTransaction>()
    // @ts-expect-error `storage` is required
    const missing: WorkforceApiOptions = { keyStore: {} as KeyStore, modules: {} as ModuleRegistry }
    expect(missing).not.toHaveProperty('storage')
  })
})
