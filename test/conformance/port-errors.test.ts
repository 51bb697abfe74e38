import { existsSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import * as conformance from '../../src/conformance/index.js'
import * as root from '../../src/index.js'
import { StatementTimeout, StorageUnavailable, WriteConflict } from '../../src/ports/errors.js'
import type { WriteTransaction } from '../../src/ports/write-storage.js'
import { generateDataset } from '../../src/seed/generate.js'
import { withResponseChecks } from '../helpers/response-checks.js'

type ErrorsModule = typeof import('../../src/ports/errors.js')

/**
 * A second copy of the errors module, as a host gets one from each of the package's builds
 * (ESM and CommonJS, and every subpath bundle) or from a second installed version.
 */
async function copyOfErrors(): Promise<ErrorsModule> {
  const specifier = new URL('../../src/ports/errors.ts?copy=another-build', import.meta.url).href
  const copy = (await import(specifier)) as ErrorsModule
  if (copy.WriteConflict === WriteConflict) throw new Error('test setup: the copy is the same module')
  return copy
}

/** An adapter's own class that only looks like ours. */
class LookAlike extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'WriteConflict'
  }
}

describe('the errors a port may throw', () => {
  it('are exported from the package root and from /conformance, as the classes the plugin checks', () => {
    expect(root.WriteConflict).toBe(WriteConflict)
    expect(root.StorageUnavailable).toBe(StorageUnavailable)
    expect(conformance.WriteConflict).toBe(WriteConflict)
    expect(conformance.StorageUnavailable).toBe(StorageUnavailable)
    expect(root.StatementTimeout).toBe(StatementTimeout)
    expect(conformance.StatementTimeout).toBe(StatementTimeout)
  })

  it("are recognised from another copy of the package's module, and only they are", async () => {
    const copy = await copyOfErrors()
    expect(new copy.WriteConflict('from the other build') instanceof WriteConflict).toBe(true)
    expect(new WriteConflict('from this build') instanceof copy.WriteConflict).toBe(true)
    expect(new copy.StorageUnavailable('from the other build') instanceof StorageUnavailable).toBe(true)
    expect(new copy.StorageUnavailable('x') instanceof WriteConflict).toBe(false)
    expect(new copy.WriteConflict('x') instanceof StorageUnavailable).toBe(false)
    expect(new copy.StatementTimeout('from the other build') instanceof StatementTimeout).toBe(true)
    expect(new StatementTimeout('from this build') instanceof copy.StatementTimeout).toBe(true)
    // A statement timeout is not an outage, nor the other way round.
    expect(new copy.StatementTimeout('x') instanceof StorageUnavailable).toBe(false)
    expect(new copy.StorageUnavailable('x') instanceof StatementTimeout).toBe(false)
    expect(Object.assign(new Error('x'), { name: 'StatementTimeout' }) instanceof StatementTimeout).toBe(false)
    expect(new LookAlike('x') instanceof WriteConflict).toBe(false)
    expect(Object.assign(new Error('x'), { name: 'WriteConflict' }) instanceof WriteConflict).toBe(false)
    for (const value of [null, undefined, 'WriteConflict', 42, {}]) expect(value instanceof WriteConflict).toBe(false)
  })

  it('keep ordinary instanceof for subclasses, and their name, message and cause', async () => {
    class MembershipExists extends WriteConflict {}
    const cause = new Error('UNIQUE constraint failed')
    const error = new MembershipExists('user 4 is already a member', { cause })
    expect([error instanceof MembershipExists, error instanceof WriteConflict, error instanceof Error]).toEqual([true, true, true])
    expect(new WriteConflict('x') instanceof MembershipExists).toBe(false)
    expect({ name: error.name, message: error.message, cause: error.cause }).toEqual({ name: 'WriteConflict', message: 'user 4 is already a member', cause })
    const copy = await copyOfErrors()
    expect(new MembershipExists('x') instanceof copy.WriteConflict).toBe(true)
  })
})

describe("the plugin answers a third-party adapter's errors from another copy of the package", () => {
  let app: FastifyInstance | undefined
  afterEach(async () => {
    await app?.close()
    app = undefined
  })

  /** `target` whose methods named in `errors` reject with those errors; the rest are the target's own. */
  function failing<T extends object>(target: T, errors: Partial<Record<string, Error>>): T {
    return new Proxy(target, {
      get(object, key) {
        const error = typeof key === 'string' ? errors[key] : undefined
        if (error !== undefined) return async () => Promise.reject(error)
        const value: unknown = Reflect.get(object, key, object)
        return typeof value === 'function' ? value.bind(object) : value
      },
    })
  }

  /** The plugin over the memory adapter, whose write transactions and user reader throw the given errors. */
  async function appWith(errors: { tx?: Partial<Record<keyof WriteTransaction, Error>>; usersList?: Error }) {
    const adapter = createMemoryAdapter()
    await adapter.loadDataset(generateDataset())
    const users = errors.usersList === undefined ? adapter.storage.users : failing(adapter.storage.users, { list: errors.usersList })
    app = withResponseChecks(Fastify({ logger: false }))
    await app.register(root.workforceApi, {
      prefix: '/api',
      storage: new Proxy(adapter.storage, { get: (object, key) => (key === 'users' ? users : Reflect.get(object, key, object)) }),
      keyStore: adapter.keyStore,
      modules: adapter.modules,
      writes: { transaction: (work) => adapter.writes.transaction((tx) => work(failing(tx, errors.tx ?? {}))) },
      idempotency: adapter.idempotency,
    })
    await app.ready()
    const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'], name: 'errors' })
    const target = app
    const send = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      target.inject({ method, url: `/api${url}`, headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload }) })
    return { adapter, send }
  }

  it('a WriteConflict of the other copy from a lost race on POST /v1/users is a 409, not a 500', async () => {
    const copy = await copyOfErrors()
    const { send } = await appWith({ tx: { addPendingMembership: new copy.WriteConflict('UNIQUE constraint failed: memberships.invited_email_lower') } })
    const response = await send('POST', '/v1/users', { email: 'racing.new.hire@example.com', first_name: 'Racing', last_name: 'Hire' })
    expect({ status: response.statusCode, code: response.json().error?.code }).toEqual({ status: 409, code: 'conflict' })
  })

  it('a WriteConflict no route expects (PATCH of a to-do) is a 409 conflict; a look-alike error is a 500', async () => {
    const copy = await copyOfErrors()
    const { adapter, send } = await appWith({ tx: { updateTodo: new copy.WriteConflict('UNIQUE constraint failed: todos.title') } })
    const todo = adapter.storage.data.todos.find((row) => row.company_id === 1)
    const response = await send('PATCH', `/v1/todos/${todo?.id}`, { title: 'Renamed' })
    expect({ status: response.statusCode, body: response.json() }).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } })

    await app?.close()
    const lookAlike = await appWith({ tx: { updateTodo: new LookAlike('UNIQUE constraint failed: todos.title') } })
    const refused = await lookAlike.send('PATCH', `/v1/todos/${todo?.id}`, { title: 'Renamed' })
    expect(refused.statusCode).toBe(500)
  })

  it('a StorageUnavailable of the other copy is a 503 with Retry-After', async () => {
    const copy = await copyOfErrors()
    const { send } = await appWith({ usersList: new copy.StorageUnavailable('database unreachable', { retryAfterSeconds: 3 }) })
    const response = await send('GET', '/v1/users')
    expect({ status: response.statusCode, retryAfter: response.headers['retry-after'], code: response.json().error?.code }).toEqual({
      status: 503,
      retryAfter: '3',
      code: 'service_unavailable',
    })
  })

  it('a StatementTimeout of the other copy is a 504 query_timeout without Retry-After, and keeps its name, message and cause', async () => {
    const copy = await copyOfErrors()
    const cause = new Error('canceling statement due to statement timeout')
    const stopped = new copy.StatementTimeout('statement stopped', { cause })
    expect({ name: stopped.name, message: stopped.message, cause: stopped.cause }).toEqual({ name: 'StatementTimeout', message: 'statement stopped', cause })
    const { send } = await appWith({ usersList: stopped })
    const response = await send('GET', '/v1/users')
    expect({ status: response.statusCode, retryAfter: response.headers['retry-after'], code: response.json().error?.code }).toEqual({
      status: 504,
      retryAfter: undefined,
      code: 'query_timeout',
    })
  })
})

// The built package: the ESM and CommonJS builds hold a copy of the classes each. Needs
// `npm run build` (CI's `npm test` builds first): skipped, with a notice, on a tree whose dist
// predates the source (a build in the middle of others' test runs would empty dist/ under them).
const distRoot = fileURLToPath(new URL('../../dist/', import.meta.url))
const sourceOfErrors = fileURLToPath(new URL('../../src/ports/errors.ts', import.meta.url))
const builtFresh = ['index.cjs', 'index.js', 'adapters/memory/index.cjs'].every(
  (file) => existsSync(`${distRoot}${file}`) && statSync(`${distRoot}${file}`).mtimeMs >= statSync(sourceOfErrors).mtimeMs,
)
if (!builtFresh) console.warn('port-errors.test.ts: dist/ is missing or older than src/ports/errors.ts; the built-package check is skipped (npm test builds first)')
describe.skipIf(!builtFresh)('the built package (dist, after npm run build)', () => {
  it("a conflict thrown by the CommonJS memory adapter is a WriteConflict for the ESM and CommonJS roots", async () => {
    const require = createRequire(import.meta.url)
    const cjsRoot = require(`${distRoot}index.cjs`) as typeof root
    const esmRoot = (await import(`${distRoot}index.js`)) as typeof root
    const cjsMemory = require(`${distRoot}adapters/memory/index.cjs`) as { createMemoryAdapter: typeof createMemoryAdapter }
    const adapter = cjsMemory.createMemoryAdapter()
    const person = { email: 'twice@example.com', first_name: 'Twice', last_name: 'Created' }
    const thrown = await adapter.writes
      .transaction(async (tx) => {
        await tx.createPerson(person, new Date())
        await tx.createPerson(person, new Date())
      })
      .catch((error: unknown) => error)
    expect([cjsRoot.WriteConflict === esmRoot.WriteConflict, thrown instanceof cjsRoot.WriteConflict, thrown instanceof esmRoot.WriteConflict, thrown instanceof WriteConflict]).toEqual([
      false,
      true,
      true,
      true,
    ])
  })
})
