import { describe, expect, it } from 'vitest'
import { CONTRACT_RESOURCES } from '../../src/api/index.js'
import { OPTION_ERROR_CODES } from '../../src/errors.js'
import type { WorkforceApiOptions } from '../../src/options.js'
import type { Storage } from '../../src/ports/storage.js'
import { READ_ADAPTERS, type ReadAdapter } from '../helpers/adapters.js'
import { build } from '../helpers/build.js'

/** The list-and-get readers the API's resources read through. */
const READERS = CONTRACT_RESOURCES.flatMap((resource) => (resource.list === undefined ? [] : [resource.name]))

/** `storage` with one member replaced (or removed with `undefined`). */
function storageWith(storage: Storage, member: string, value: unknown): Storage {
  const copy: Record<string, unknown> = {
    users: storage.users,
    employees: storage.employees,
    roles: storage.roles,
    projects: storage.projects,
    shifts: storage.shifts,
    absences: storage.absences,
    expenses: storage.expenses,
    todos: storage.todos,
    company: storage.company.bind(storage),
  }
  copy[member] = value
  return copy as unknown as Storage
}

type OptionsOf = (adapter: ReadAdapter) => Partial<WorkforceApiOptions>

/** Option mistakes and the option name the app.ready() rejection must carry. */
const BAD_OPTIONS: [string, OptionsOf, string][] = [
  ['missing storage', () => ({ storage: undefined }), 'storage'],
  ['null storage', () => ({ storage: null as unknown as Storage }), 'storage'],
  ...READERS.map((reader): [string, OptionsOf, string] => [
    `storage without ${reader}`,
    (a) => ({ storage: storageWith(a.storage, reader, undefined) }),
    `storage.${reader}`,
  ]),
  ['a reader without get()', (a) => ({ storage: storageWith(a.storage, 'shifts', { list: a.storage.shifts.list }) }), 'storage.shifts'],
  ['a reader without list()', (a) => ({ storage: storageWith(a.storage, 'todos', { get: a.storage.todos.get }) }), 'storage.todos'],
  ['storage without company()', (a) => ({ storage: storageWith(a.storage, 'company', undefined) }), 'storage.company'],
  ['missing keyStore', () => ({ keyStore: undefined }), 'keyStore'],
  ['keyStore without find()', (a) => ({ keyStore: { ...a.keyStore, find: undefined } as never }), 'keyStore.find'],
  ['missing modules', () => ({ modules: undefined }), 'modules'],
  ['modules without isActive()', () => ({ modules: {} as never }), 'modules'],
  ['clock without now()', () => ({ clock: {} as never }), 'clock'],
  ['keyCache.ttlMs above 30000', () => ({ keyCache: { ttlMs: 30_001 } }), 'keyCache.ttlMs'],
  ['keyCache.ttlMs negative', () => ({ keyCache: { ttlMs: -1 } }), 'keyCache.ttlMs'],
  ['keyCache.ttlMs fractional', () => ({ keyCache: { ttlMs: 1.5 } }), 'keyCache.ttlMs'],
  ['keyCache.ttlMs a string', () => ({ keyCache: { ttlMs: '1000' as never } }), 'keyCache.ttlMs'],
  ['keyCache.max 0', () => ({ keyCache: { max: 0 } }), 'keyCache.max'],
  ['moduleCacheTtlMs above 60000', () => ({ moduleCacheTtlMs: 60_001 }), 'moduleCacheTtlMs'],
  ['moduleCacheTtlMs negative', () => ({ moduleCacheTtlMs: -1 }), 'moduleCacheTtlMs'],
  ['moduleCacheTtlMs NaN', () => ({ moduleCacheTtlMs: Number.NaN }), 'moduleCacheTtlMs'],
  ['moduleCacheTtlMs a string', () => ({ moduleCacheTtlMs: '5000' as never }), 'moduleCacheTtlMs'],
  ['rateLimit.failedAuth.lookups negative', () => ({ rateLimit: { failedAuth: { lookups: -1 } } }), 'rateLimit.failedAuth.lookups'],
  ['rateLimit.failedAuth.lookups fractional', () => ({ rateLimit: { failedAuth: { lookups: 2.5 } } }), 'rateLimit.failedAuth.lookups'],
  ['rateLimit.failedAuth.lookups a string', () => ({ rateLimit: { failedAuth: { lookups: '60' as never } } }), 'rateLimit.failedAuth.lookups'],
  // The events feed keeps events for the retention period: never shorter than a delivery's retries.
  ['webhookOptions.retentionMs below the default retry schedule', () => ({ webhookOptions: { retentionMs: 24 * 3_600_000 } }), 'webhookOptions.retentionMs'],
  ['webhookOptions.retentionMs below its retry schedule', () => ({ webhookOptions: { retentionMs: 59_999, retrySchedule: [30_000, 30_000] } }), 'webhookOptions.retentionMs'],
]

/** The rows whose option is absent altogether (the others are present but wrong). */
const MISSING = new Set(['missing storage', 'null storage', 'missing keyStore', 'missing modules'])

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

// style.md: a wiring mistake fails app.ready() with a message naming the option.
describe.each(READ_ADAPTERS)('plugin options ($name)', (adapter) => {
  it.each(BAD_OPTIONS)('%s: app.ready() rejects naming the option', async (_label, options, name) => {
    await expect(build({ adapter, options })).rejects.toThrow(new RegExp(`"${escape(name)}"`))
  })

  it.each(BAD_OPTIONS)('%s: the rejection carries a stable code and the option', async (label, options, name) => {
    const code = MISSING.has(label) ? OPTION_ERROR_CODES.missing : OPTION_ERROR_CODES.invalid
    await expect(build({ adapter, options })).rejects.toMatchObject({ code, option: name })
  })

  it.each([
    ['keyCache.ttlMs 30000', { keyCache: { ttlMs: 30_000 } }],
    ['keyCache.ttlMs 0', { keyCache: { ttlMs: 0 } }],
    ['keyCache.max 1', { keyCache: { max: 1 } }],
    ['moduleCacheTtlMs 60000', { moduleCacheTtlMs: 60_000 }],
    ['moduleCacheTtlMs 0', { moduleCacheTtlMs: 0 }],
    ['webhookOptions.retentionMs equal to its retry schedule', { webhookOptions: { retentionMs: 60_000, retrySchedule: [30_000, 30_000] } }],
  ] as [string, Partial<WorkforceApiOptions>][])('accepts the boundary value %s', async (_label, options) => {
    const t = await build({ adapter, options })
    try {
      expect((await t.get('/v1/users', await t.keyFor(1, ['users:read']))).statusCode).toBe(200)
    } finally {
      await t.close()
    }
  })
})

// Issue 11: a typo in an option must not be silently ignored.
describe('unknown options', () => {
  const cases: Array<[string, Record<string, unknown>, string, string | undefined]> = [
    ['a top-level typo', { prefx: '/api' }, 'prefx', 'prefix'],
    ['a typo in keyCache', { keyCache: { ttl: 1_000 } }, 'keyCache.ttl', 'keyCache.ttlMs'],
    ['a typo in rateLimit', { rateLimit: { maxx: 5 } }, 'rateLimit.maxx', 'rateLimit.max'],
    ['a typo in rateLimit.failedAuth', { rateLimit: { failedAuth: { timewindow: 5_000 } } }, 'rateLimit.failedAuth.timewindow', 'rateLimit.failedAuth.timeWindow'],
    ['a typo in idempotencyOptions', { idempotencyOptions: { leaseMS: 5_000 } }, 'idempotencyOptions.leaseMS', 'idempotencyOptions.leaseMs'],
    ['a typo in webhookOptions', { webhookOptions: { secretkey: 'x' } }, 'webhookOptions.secretkey', 'webhookOptions.secretKey'],
    ['something unrelated', { database: 'app.db' }, 'database', undefined],
  ]
  it.each(cases)('%s fails app.ready() with WFA_ERR_OPTION_UNKNOWN naming it', async (_label, options, name, suggestion) => {
    const error = await build({ options: options as Partial<WorkforceApiOptions> }).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: OPTION_ERROR_CODES.unknown, option: name })
    expect((error as Error).message).toContain(`"${name}" is not an option of fastify-workforce-api`)
    if (suggestion === undefined) expect((error as Error).message).not.toContain('did you mean')
    else expect((error as Error).message).toContain(`did you mean "${suggestion}"?`)
  })

  it("Fastify's own register options (logLevel) are not refused", async () => {
    const t = await build({ options: { logLevel: 'warn' } as Partial<WorkforceApiOptions> })
    await t.close()
  })
})
