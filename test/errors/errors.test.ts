import { afterEach, describe, expect, it } from 'vitest'
import { KeyManager } from '../../src/keys/key-manager.js'
import { systemClock } from '../../src/ports/clock.js'
import { StatementTimeout, StorageUnavailable } from '../../src/ports/errors.js'
import type { Storage } from '../../src/ports/storage.js'
import { READ_ADAPTERS } from '../helpers/adapters.js'
import { build, type TestApp } from '../helpers/build.js'
import { idsWhere, LIST_RESOURCES } from '../helpers/expected-reads.js'

const UNAUTHORIZED_BODY = '{"error":{"code":"unauthorized","message":"Invalid or missing API key","status":401}}'

/** What a database failure might say: the client must never see any of it. */
const INTERNALS = 'SQLITE_ERROR: no such column: wfa_users.password_hash in SELECT * FROM wfa_users WHERE company_id = ?'

/** `storage` whose users reader and company lookup fail like a broken (or, with `error`, an unreachable) database. */
function failingStorage(storage: Storage, error: () => Error = () => new Error(INTERNALS)): Storage {
  const fail = async (): Promise<never> => {
    throw error()
  }
  return {
    users: { list: fail, get: fail },
    employees: storage.employees,
    roles: storage.roles,
    projects: storage.projects,
    shifts: storage.shifts,
    absences: storage.absences,
    expenses: storage.expenses,
    todos: storage.todos,
    company: fail,
  }
}

/**
 * A key of company 1 made straight in the key store: `app.workforceApi.keys.create` asks the
 * storage whether the company exists, and this storage fails that question by design.
 */
async function keyBesideFailingStorage(t: TestApp): Promise<string> {
  return (await new KeyManager(t.adapter.keyStore, systemClock).create({ companyId: 1, scopes: ['all'] })).key
}

function expectEnvelope(res: { statusCode: number; json(): any }, status: number, code: string): void {
  expect(res.statusCode).toBe(status)
  const body = res.json()
  expect(Object.keys(body)).toEqual(['error'])
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'status'])
  expect(body.error.code).toBe(code)
  expect(body.error.status).toBe(status)
  expect(typeof body.error.message).toBe('string')
}

describe.each(READ_ADAPTERS)('errors ($name)', (adapter) => {
  let t: TestApp
  afterEach(() => t.close())

  it('an unknown route under the prefix is a 404 not_found envelope', async () => {
    t = await build({ adapter })
    const key = await t.keyFor(1, ['all'])
    for (const path of ['/v1/nope', '/v2/users', '/v1/users/1/extra', '/v1', '/']) {
      for (const auth of [key, undefined]) {
        const res = await t.get(path, auth)
        expectEnvelope(res, 404, 'not_found')
        expect(res.headers['content-type']).toMatch(/^application\/json/)
      }
    }
  })

  it.each(LIST_RESOURCES)('/v1/%s/:id with a non-integer, zero or negative id is the same 404 as an unknown id', async (resource) => {
    t = await build({ adapter })
    const key = await t.keyFor(1, ['all'])
    const unknown = await t.get(`/v1/${resource}/999999`, key)
    expectEnvelope(unknown, 404, 'not_found')
    const existing = idsWhere(resource, 1)[0] as number
    for (const id of ['abc', '0', '-1', '1.5', '1e3', `0${existing}`, `${existing}abc`, '9007199254740993', '%20']) {
      const res = await t.get(`/v1/${resource}/${id}`, key)
      expect(res.statusCode, id).toBe(404)
      expect(res.body, id).toBe(unknown.body)
    }
    expect((await t.get(`/v1/${resource}/${existing}`, key)).statusCode).toBe(200)
  })

  it('an unauthenticated request to a bad id is the generic 401, not a 404', async () => {
    t = await build({ adapter })
    const res = await t.get('/v1/users/abc')
    expect(res.statusCode).toBe(401)
    expect(res.body).toBe(UNAUTHORIZED_BODY)
  })

  it('a database that cannot answer is a 503 service_unavailable with Retry-After, showing no internals', async () => {
    const unavailable = () => new StorageUnavailable(INTERNALS, { cause: new Error('connect ECONNREFUSED 127.0.0.1:5432'), retryAfterSeconds: 2.5 })
    t = await build({ adapter, options: (opened) => ({ storage: failingStorage(opened.storage, unavailable) }) })
    const key = await keyBesideFailingStorage(t)
    for (const path of ['/v1/users', '/v1/users/1', '/v1/company']) {
      const res = await t.get(path, key)
      expectEnvelope(res, 503, 'service_unavailable')
      expect(res.headers['retry-after'], path).toBe('3')
      for (const leak of ['SQLITE', 'SELECT', 'wfa_', 'ECONNREFUSED', '5432', 'Error', ' at ']) {
        expect(res.body, `${path} leaks ${leak}`).not.toContain(leak)
      }
    }
    expect((await t.get('/v1/employees', key)).statusCode).toBe(200)
  })

  it('a statement the database stopped at its own bound is a 504 query_timeout without Retry-After, showing no internals', async () => {
    const stopped = () => new StatementTimeout(INTERNALS, { cause: Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }) })
    t = await build({ adapter, options: (opened) => ({ storage: failingStorage(opened.storage, stopped) }) })
    const key = await keyBesideFailingStorage(t)
    for (const path of ['/v1/users', '/v1/users/1', '/v1/company']) {
      const res = await t.get(path, key)
      expectEnvelope(res, 504, 'query_timeout')
      expect(res.headers['retry-after'], path).toBeUndefined()
      expect(res.json().error.message, path).toMatch(/^This request took longer than the database allows for one statement and was stopped \(request [^)]+\); it is not an outage/)
      for (const leak of ['SQLITE', 'SELECT', 'wfa_', '57014', 'canceling', 'Error', ' at ']) {
        expect(res.body, `${path} leaks ${leak}`).not.toContain(leak)
      }
    }
    expect((await t.get('/v1/employees', key)).statusCode).toBe(200)
  })

  it('logs a statement timeout at warn with its cause, never the API key', async () => {
    const lines: string[] = []
    const stopped = () => new StatementTimeout('postgres stopped a statement at statement_timeout', { cause: new Error('canceling statement due to statement timeout') })
    t = await build({
      adapter,
      options: (opened) => ({ storage: failingStorage(opened.storage, stopped) }),
      fastify: { logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } } },
    })
    const key = await keyBesideFailingStorage(t)
    expect((await t.get('/v1/users', key)).statusCode).toBe(504)
    const entries = lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message?: string } })
    const warned = entries.filter((entry) => entry.msg === 'workforce-api: statement timeout')
    expect(warned.map((entry) => entry.level)).toEqual([40])
    expect(JSON.stringify(warned[0]?.err)).toContain('canceling statement due to statement timeout')
    expect(entries.filter((entry) => entry.level >= 50)).toEqual([])
    expect(lines.join('').includes(key)).toBe(false)
  })

  it('a storage failure is a 500 envelope that shows no internals', async () => {
    t = await build({ adapter, options: (opened) => ({ storage: failingStorage(opened.storage) }) })
    const key = await keyBesideFailingStorage(t)
    for (const path of ['/v1/users', '/v1/users/1', '/v1/company', '/v1/shifts?date_from=2026-03-29']) {
      const res = await t.get(path, key)
      expectEnvelope(res, 500, 'internal_error')
      for (const leak of ['SQLITE', 'SELECT', 'wfa_', 'password_hash', 'Error', ' at ', '.ts:', '.js:', 'node_modules']) {
        expect(res.body, `${path} leaks ${leak}`).not.toContain(leak)
      }
    }
    // The rest of the API is unaffected.
    expect((await t.get('/v1/employees', key)).statusCode).toBe(200)
  })

  it('logs the failure for operators but never the API key or its secret', async () => {
    const lines: string[] = []
    t = await build({
      adapter,
      options: (opened) => ({ storage: failingStorage(opened.storage) }),
      fastify: { logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } } },
    })
    const key = await keyBesideFailingStorage(t)
    const [, keyId, secret] = key.split('_') as [string, string, string]
    const wrongSecret = `owk_${keyId}_${'e'.repeat(64)}`

    expect((await t.get('/v1/employees', key)).statusCode).toBe(200)
    expect((await t.get('/v1/employees?per_page=0', { authorization: `Bearer ${key}` })).statusCode).toBe(422)
    expect((await t.get('/v1/employees', wrongSecret)).statusCode).toBe(401)
    expect((await t.get('/v1/employees', { authorization: `Bearer ${wrongSecret}` })).statusCode).toBe(401)
    expect((await t.get('/v1/users', key)).statusCode).toBe(500)
    expect((await t.get('/v1/users', { authorization: `Bearer ${key}` })).statusCode).toBe(500)

    const log = lines.join('')
    expect(lines.length).toBeGreaterThan(10)
    const errors = lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level >= 50)
    expect(errors.length).toBe(2)
    expect(log).toContain('no such column') // operators get the cause …
    for (const secretText of [key, secret, wrongSecret, 'e'.repeat(64)]) {
      expect(log.includes(secretText), 'a key or secret was logged').toBe(false) // … never the credential
    }
  })
})
