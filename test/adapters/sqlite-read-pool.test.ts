import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Worker } from 'node:worker_threads'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { openSqliteAdapter, type SqliteAdapter, type SqliteAdapterOptions } from '../../adapters/sqlite/index.js'
import { createSqliteRunner, type SqliteDatabase } from '../../adapters/sqlite/sqlite-database.js'
import { DEFAULT_READ_CACHE_KIB, SqliteReadPool } from '../../adapters/sqlite/sqlite-read-pool.js'
import { SlowReadRouter } from '../../adapters/sqlite/sqlite-slow-reads.js'
import { TransactionGate } from '../../adapters/transaction-gate.js'
import { StatementTimeout, StorageUnavailable } from '../../src/ports/errors.js'
import { generateDataset } from '../../src/seed/generate.js'
import { build, seedDataset, type TestApp } from '../helpers/build.js'
import { readRequests } from '../reads/read-requests.js'
import { withoutSeek } from '../helpers/without-seek.js'

/** A statement that runs for a good while in SQLite (a few hundred ms on a laptop), then ends by itself. */
const SLOW_SQL = 'with recursive c(x) as (select 1 union all select x + 1 from c where x < 5000000) select count(*) as n from c'

let directory: string
beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), 'wfa-read-pool-'))
})
afterAll(() => rmSync(directory, { recursive: true, force: true }))

let fileCount = 0
/** A fresh path in this file's temp directory. */
function newPath(): string {
  return join(directory, `db-${++fileCount}.db`)
}

/** Seeds a database file with `dataset` through the adapter, and closes it. */
async function seedFile(dataset: Parameters<SqliteAdapter['loadDataset']>[0]): Promise<string> {
  const filename = newPath()
  const adapter = await openSqliteAdapter({ filename, readWorkers: 0 })
  await adapter.loadDataset(dataset)
  await adapter.close()
  return filename
}

/**
 * The plugin over an adapter on an existing, seeded file. `seek: false` hides the fast-list
 * capability, so every list runs its page and COUNT queries each time: how the router treats a
 * shape that stays expensive (a cold count, an adapter without the capability).
 */
function appOver(filename: string, options: Omit<SqliteAdapterOptions, 'filename'>, seek = true): Promise<TestApp> {
  return build({
    adapter: { name: 'sqlite file', open: () => openSqliteAdapter({ filename, ...options }) },
    dataset: null,
    ...(seek ? {} : { options: (adapter) => ({ storage: withoutSeek(adapter.storage) }) }),
  })
}

/** Resolves when `worker` has exited. */
function exited(worker: Worker): Promise<number> {
  return new Promise((resolve) => worker.once('exit', resolve))
}

describe('off-loop reads answer exactly what in-process reads answer', () => {
  let filename: string
  let inProcess: TestApp
  let offLoop: TestApp

  beforeAll(async () => {
    filename = await seedFile(seedDataset())
    inProcess = await appOver(filename, { readWorkers: 0 })
    // slowReadMs 0: every list read goes to the workers, from the first.
    offLoop = await appOver(filename, { readWorkers: 2, slowReadMs: 0 })
  })
  afterAll(async () => {
    await inProcess?.close()
    await offLoop?.close()
  })

  it('the in-process app has no read pool; the off-loop one has', () => {
    expect((inProcess.adapter as SqliteAdapter).readPool).toBeUndefined()
    expect((offLoop.adapter as SqliteAdapter).readPool).toBeInstanceOf(SqliteReadPool)
  })

  it('same status and body for every endpoint and filter, with every list query run on a worker', async () => {
    const pool = (offLoop.adapter as SqliteAdapter).readPool as SqliteReadPool
    const pooled = vi.spyOn(pool, 'all')
    const keys = new Map<number, { inProcess: string; offLoop: string }>()
    for (const companyId of [1, 2, 3]) {
      keys.set(companyId, { inProcess: await inProcess.keyFor(companyId), offLoop: await offLoop.keyFor(companyId) })
    }
    const requests = readRequests(seedDataset())
    let lists = 0
    const distinctLists = new Set<string>()
    for (const request of requests) {
      const key = keys.get(request.companyId) as { inProcess: string; offLoop: string }
      const expected = await inProcess.app.inject({ method: 'GET', url: request.url, headers: { 'x-api-key': key.inProcess } })
      const actual = await offLoop.app.inject({ method: 'GET', url: request.url, headers: { 'x-api-key': key.offLoop } })
      expect(actual.statusCode, request.url).toBe(expected.statusCode)
      expect(actual.json(), request.url).toStrictEqual(expected.json())
      const body = expected.json() as { data?: unknown; pagination?: { total: number } }
      if (request.expectData) expect(body.data, request.url).toBeDefined()
      if (expected.statusCode === 200 && body.pagination !== undefined) {
        lists++
        const url = new URL(request.url, 'http://x')
        url.searchParams.delete('page')
        url.searchParams.delete('per_page')
        url.searchParams.sort()
        distinctLists.add(`${request.companyId} ${url.pathname}?${url.searchParams}`)
      }
    }
    // Every list is a page query on a worker, and each distinct list (company, resource, filters)
    // one count: the data does not change, so its total is counted once. A page past the end,
    // asked after other pages of its list, finds no row from its boundary and is run once more
    // from the start. By-id, company and version reads stay in process.
    expect(lists).toBeGreaterThan(100)
    expect(pooled.mock.calls.length).toBeGreaterThanOrEqual(lists + distinctLists.size)
    expect(pooled.mock.calls.length).toBeLessThan(2 * lists)
  })

  it('the same rows and totals for every resource through the storage port, with filters', async () => {
    const a = inProcess.adapter.storage
    const b = offLoop.adapter.storage
    const window = { limit: 100, offset: 0 }
    const since = new Date('2026-01-01T00:00:00Z')
    const due = { day: '2026-03-01', instant: new Date('2026-03-01T00:00:00Z') }
    const cases: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
      ['users', () => a.users.list(1, { active: true }, window), () => b.users.list(1, { active: true }, window)],
      ['employees', () => a.employees.list(1, { updatedSince: since }, window), () => b.employees.list(1, { updatedSince: since }, window)],
      ['roles', () => a.roles.list(2, {}, window), () => b.roles.list(2, {}, window)],
      ['projects', () => a.projects.list(1, { status: 'active' }, window), () => b.projects.list(1, { status: 'active' }, window)],
      ['shifts', () => a.shifts.list(1, { startsFrom: since, startsBefore: due.instant }, window), () => b.shifts.list(1, { startsFrom: since, startsBefore: due.instant }, window)],
      ['absences', () => a.absences.list(2, { dateFrom: '2026-01-01' }, window), () => b.absences.list(2, { dateFrom: '2026-01-01' }, window)],
      ['expenses', () => a.expenses.list(1, { dateTo: '2026-06-30' }, { limit: 7, offset: 3 }), () => b.expenses.list(1, { dateTo: '2026-06-30' }, { limit: 7, offset: 3 })],
      ['todos', () => a.todos.list(1, { dueFrom: due, status: 'open' }, window), () => b.todos.list(1, { dueFrom: due, status: 'open' }, window)],
    ]
    for (const [name, expected, actual] of cases) {
      const want = (await expected()) as { rows: unknown[]; total: number }
      expect(want.total, name).toBeGreaterThan(0)
      expect(await actual(), name).toStrictEqual(want)
    }
  })
})

describe('reads and write transactions', () => {
  let database: SqliteDatabase
  let pool: SqliteReadPool
  afterEach(async () => {
    await pool?.close()
    database?.close()
  })

  it('a read inside a write transaction reads through its connection; one outside goes to a worker and sees committed rows only, without waiting', async () => {
    const filename = newPath()
    database = new Database(filename)
    database.pragma('journal_mode = WAL')
    database.exec('create table t (company_id integer, x integer); insert into t values (1, 1)')
    pool = new SqliteReadPool({ filename, size: 1 })
    const gate = new TransactionGate()
    const runner = createSqliteRunner(database, gate, { pool, router: new SlowReadRouter({ thresholdMs: 0 }) })
    const query = { sql: 'select x from t where company_id = ? order by x', params: ['company_id'] }
    const scope = { companyId: 1, shape: query }
    const pooled = vi.spyOn(pool, 'all')

    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let inside: unknown
    const transaction = gate.exclusive(async () => {
      database.exec('begin immediate; insert into t values (1, 2)')
      inside = await runner.all(query, [1], scope)
      await held
      database.exec('commit')
    })
    await vi.waitFor(() => expect(inside).toBeDefined())
    expect(inside).toEqual([{ x: 1 }, { x: 2 }])
    expect(pooled).not.toHaveBeenCalled()

    // The transaction is still open: an in-process read would wait for it; this one does not.
    expect(await runner.all(query, [1], scope)).toEqual([{ x: 1 }])
    expect(pooled).toHaveBeenCalledTimes(1)
    release()
    await transaction
    expect(await runner.all(query, [1], scope)).toEqual([{ x: 1 }, { x: 2 }])
  })
})

describe('SqliteReadPool failures', () => {
  let pool: SqliteReadPool | undefined
  afterEach(async () => {
    await pool?.close()
    pool = undefined
  })

  async function tableFile(journal: 'wal' | 'delete'): Promise<string> {
    const filename = newPath()
    const database = new Database(filename)
    database.pragma(`journal_mode = ${journal}`)
    database.exec('create table t (x integer); insert into t values (1)')
    database.close()
    return filename
  }

  it('a read that runs past its timeout fails with StatementTimeout (its own cost, not an outage), its worker is ended, and the next read gets a new one', async () => {
    // The worker waits in SQLite's busy handler for a lock held here: slow without using CPU,
    // and it ends as soon as the lock is released.
    const filename = await tableFile('delete')
    const workers: Worker[] = []
    pool = new SqliteReadPool({ filename, size: 1, timeoutMs: 1_000, busyTimeoutMs: 60_000, onWorker: (worker) => workers.push(worker) })
    expect((await pool.all('select x from t', [], 1)).rows).toEqual([{ x: 1 }])
    const writer = new Database(filename)
    try {
      writer.exec('begin exclusive; insert into t values (2)')
      const error = await pool.all('select x from t', [], 1).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(StatementTimeout)
      expect(error).not.toBeInstanceOf(StorageUnavailable)
      expect((error as Error).message).toBe('sqlite read ran past 1000 ms and was stopped')
      expect(pool.threads).toBe(0)
      writer.exec('commit')
    } finally {
      writer.close()
    }
    await exited(workers[0] as Worker)
    expect((await pool.all('select x from t order by x', [], 1)).rows).toEqual([{ x: 1 }, { x: 2 }])
    expect(workers).toHaveLength(2)
  })

  it('a read still queued behind a busy worker at its timeout fails with StorageUnavailable (no room), the running one with StatementTimeout', async () => {
    pool = new SqliteReadPool({ filename: await tableFile('wal'), size: 1, timeoutMs: 50 })
    const running = pool.all(SLOW_SQL, [], 1).catch((error: unknown) => error)
    const queued = pool.all('select x from t', [], 2).catch((error: unknown) => error)
    expect(await queued).toBeInstanceOf(StorageUnavailable)
    expect((await queued as Error).message).toBe('sqlite read did not answer within 50 ms')
    expect(await running).toBeInstanceOf(StatementTimeout)
  })

  it('beyond maxQueued reads waiting for a worker, one more fails at once with StorageUnavailable; the waiting ones are untouched', async () => {
    pool = new SqliteReadPool({ filename: await tableFile('wal'), size: 1, timeoutMs: 400, maxQueued: 2 })
    const running = pool.all(SLOW_SQL, [], 1).catch((error: unknown) => error)
    const waiting = [pool.all('select x from t', [], 2), pool.all('select x from t', [], 3)].map((read) => read.catch((error: unknown) => error))
    const started = performance.now()
    const refused = await pool.all('select x from t', [], 4).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(StorageUnavailable)
    expect((refused as Error).message).toBe('sqlite read pool: 2 reads already wait for a worker')
    // At once, not after the read timeout.
    expect(performance.now() - started).toBeLessThan(200)
    expect(await running).toBeInstanceOf(StatementTimeout)
    // The two waiting reads were not refused by the bound: each either ran or timed out waiting.
    for (const outcome of await Promise.all(waiting)) {
      if (outcome instanceof Error) expect(outcome.message).toBe('sqlite read did not answer within 400 ms')
      else expect(outcome).toMatchObject({ rows: [{ x: 1 }] })
    }
  })

  it("each worker's connection has a page cache of cacheKib (default DEFAULT_READ_CACHE_KIB), not SQLite's 16,000 KiB", async () => {
    const filename = await tableFile('wal')
    pool = new SqliteReadPool({ filename, size: 1 })
    expect((await pool.all('pragma cache_size', [], 1)).rows).toEqual([{ cache_size: -DEFAULT_READ_CACHE_KIB }])
    await pool.close()
    pool = new SqliteReadPool({ filename, size: 1, cacheKib: 512 })
    expect((await pool.all('pragma cache_size', [], 1)).rows).toEqual([{ cache_size: -512 }])
  })

  it('a worker that has answered readsPerWorker reads is replaced by a fresh thread at once; every read is answered', async () => {
    const workers: Worker[] = []
    const exits: Promise<number>[] = []
    const onWorker = (worker: Worker) => {
      workers.push(worker)
      exits.push(exited(worker))
    }
    pool = new SqliteReadPool({ filename: await tableFile('wal'), size: 1, readsPerWorker: 3, onWorker })
    for (let read = 0; read < 7; read++) expect((await pool.all('select x from t', [], 1)).rows).toEqual([{ x: 1 }])
    // The first worker answered reads 1–3, the second 4–6 and the third 7; the third is idle, not yet worn out.
    expect(workers).toHaveLength(3)
    await Promise.all(exits.slice(0, 2))
    expect(pool.threads).toBe(1)
  })

  it('a worker that dies mid-read fails that read with StorageUnavailable and is replaced', async () => {
    const workers: Worker[] = []
    pool = new SqliteReadPool({ filename: await tableFile('wal'), size: 1, onWorker: (worker) => workers.push(worker) })
    const read = pool.all(SLOW_SQL, [], 1)
    await vi.waitFor(() => expect(pool?.running).toBe(1))
    void (workers[0] as Worker).terminate()
    const error = await read.catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StorageUnavailable)
    expect((error as Error).message).toBe('sqlite read worker died')
    expect(pool.threads).toBe(0)
    expect((await pool.all('select x from t', [], 1)).rows).toEqual([{ x: 1 }])
    expect(workers).toHaveLength(2)
  })

  it('a worker that cannot open the file fails the read with StorageUnavailable; once the file exists, a new worker answers', async () => {
    const filename = newPath()
    pool = new SqliteReadPool({ filename, size: 1 })
    const error = await pool.all('select 1 as one', [], 1).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StorageUnavailable)
    expect(((error as Error).cause as { code?: string }).code).toBe('SQLITE_CANTOPEN')
    new Database(filename).close()
    expect((await pool.all('select 1 as one', [], 1)).rows).toEqual([{ one: 1 }])
  })

  it('SQLITE_BUSY in a worker is StorageUnavailable', async () => {
    // A rollback-journal file locked exclusively by another connection: readers get SQLITE_BUSY.
    const filename = await tableFile('delete')
    const writer = new Database(filename)
    try {
      writer.exec('begin exclusive; insert into t values (2)')
      pool = new SqliteReadPool({ filename, size: 1, busyTimeoutMs: 20 })
      const error = await pool.all('select x from t', [], 1).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(StorageUnavailable)
      expect(((error as Error).cause as { code?: string }).code).toBe('SQLITE_BUSY')
      writer.exec('commit')
      expect((await pool.all('select x from t order by x', [], 1)).rows).toEqual([{ x: 1 }, { x: 2 }])
    } finally {
      writer.close()
    }
  })

  it('any other SQLite error is passed on as is, with its code, not as StorageUnavailable', async () => {
    pool = new SqliteReadPool({ filename: await tableFile('wal'), size: 1 })
    const error = await pool.all('select * from missing', [], 1).catch((caught: unknown) => caught)
    expect(error).not.toBeInstanceOf(StorageUnavailable)
    expect((error as { code?: string }).code).toBe('SQLITE_ERROR')
  })

  it('queued reads are served one company at a time in turn', async () => {
    pool = new SqliteReadPool({ filename: await tableFile('wal'), size: 1 })
    const order: string[] = []
    const read = (companyId: number, label: string) => (pool as SqliteReadPool).all('select x from t', [], companyId).then(() => order.push(label))
    const first = read(1, 'a1')
    await Promise.all([read(1, 'a2'), read(1, 'a3'), read(1, 'a4'), read(2, 'b1'), read(2, 'b2'), first])
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'b2', 'a4'])
  })

  it('a company runs one read at a time, so another company takes the free worker', async () => {
    // About ordering, not timeouts: on a loaded machine the slow read once ran past the 5 s default.
    pool = new SqliteReadPool({ filename: await tableFile('wal'), size: 2, timeoutMs: 60_000 })
    const settled: string[] = []
    const slow = pool.all(SLOW_SQL, [], 1).then(() => settled.push('company 1, slow'))
    const second = pool.all('select x from t', [], 1).then(() => settled.push('company 1, second'))
    await vi.waitFor(() => expect(pool?.running).toBe(1))
    await pool.all('select x from t', [], 2)
    settled.push('company 2')
    await Promise.all([slow, second])
    expect(settled).toEqual(['company 2', 'company 1, slow', 'company 1, second'])
    expect(pool.threads).toBe(2)
  })

  it('starts no worker for a read its company\'s limit holds back', async () => {
    pool = new SqliteReadPool({ filename: await tableFile('wal'), size: 2, timeoutMs: 60_000 })
    const reads = [pool.all(SLOW_SQL, [], 1), pool.all('select x from t', [], 1)]
    await vi.waitFor(() => expect(pool?.running).toBe(1))
    expect(pool.threads).toBe(1)
    await Promise.all(reads)
    expect(pool.threads).toBe(1)
  })

  it('close() fails waiting and running reads with StorageUnavailable and ends every thread', async () => {
    const workers: Worker[] = []
    pool = new SqliteReadPool({ filename: await tableFile('wal'), size: 2, onWorker: (worker) => workers.push(worker) })
    const reads = [pool.all(SLOW_SQL, [], 1), pool.all(SLOW_SQL, [], 2), pool.all('select x from t', [], 3)].map((read) =>
      read.then(() => 'answered', (error: unknown) => error),
    )
    await vi.waitFor(() => expect(pool?.running).toBe(2))
    const ends = workers.map(exited)
    await pool.close()
    for (const outcome of await Promise.all(reads)) expect(outcome).toBeInstanceOf(StorageUnavailable)
    await Promise.all(ends)
    expect(pool.threads).toBe(0)
    await expect(pool.all('select x from t', [], 1)).rejects.toThrow(StorageUnavailable)
  })
})

describe('openSqliteAdapter and its read workers', () => {
  let adapter: SqliteAdapter | undefined
  afterEach(async () => {
    await adapter?.close()
    adapter = undefined
  })

  it(':memory: keeps every read in process, and refuses read workers', async () => {
    adapter = await openSqliteAdapter({ filename: ':memory:' })
    expect(adapter.readPool).toBeUndefined()
    await expect(openSqliteAdapter({ filename: ':memory:', readWorkers: 1 })).rejects.toThrow(/WAL/)
  })

  it('a file it opens gets read workers, in WAL mode with a busy timeout', async () => {
    adapter = await openSqliteAdapter({ filename: newPath() })
    expect(adapter.readPool).toBeInstanceOf(SqliteReadPool)
    expect(adapter.database.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(adapter.database.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0)
  })

  it("a host's database stays in process unless it opts in, and opting in needs WAL", async () => {
    const filename = newPath()
    const database = new Database(filename)
    try {
      adapter = await openSqliteAdapter({ database })
      expect(adapter.readPool).toBeUndefined()
      await adapter.close()
      adapter = undefined
      await expect(openSqliteAdapter({ database, readWorkers: 1 })).rejects.toThrow(/WAL/)
      database.pragma('journal_mode = WAL')
      adapter = await openSqliteAdapter({ database, readWorkers: 1, slowReadMs: 0 })
      expect(adapter.readPool).toBeInstanceOf(SqliteReadPool)
      expect((await adapter.storage.roles.list(1, {}, { limit: 10, offset: 0 })).total).toBe(0)
      expect(adapter.readPool?.threads).toBe(1)
      await adapter.close()
      adapter = undefined
      // The host's handle is still open and usable.
      expect(database.prepare('select 1 as one').get()).toEqual({ one: 1 })
    } finally {
      database.close()
    }
  })

  it('warmUp() starts every read worker before any request, so none waits for a thread; an adapter without workers has none to start', async () => {
    adapter = await openSqliteAdapter({ filename: newPath(), readWorkers: 3 })
    const pool = adapter.readPool as SqliteReadPool
    expect(pool.threads).toBe(0)
    expect(await adapter.warmUp()).toBe(3)
    expect(pool.threads).toBe(3)
    expect(pool.running).toBe(0)
    await adapter.close()
    adapter = await openSqliteAdapter({ filename: ':memory:' })
    expect(await adapter.warmUp()).toBe(0)
  })

  it('close() ends the worker threads', async () => {
    adapter = await openSqliteAdapter({ filename: newPath(), slowReadMs: 0 })
    const pool = adapter.readPool as SqliteReadPool
    await Promise.all([adapter.storage.todos.list(1, {}, { limit: 5, offset: 0 }), adapter.storage.todos.list(2, {}, { limit: 5, offset: 0 })])
    expect(pool.threads).toBe(2)
    await adapter.close()
    adapter = undefined
    expect(pool.threads).toBe(0)
  })

  it('a write waiting past the busy timeout for another connection fails with StorageUnavailable', async () => {
    const filename = newPath()
    adapter = await openSqliteAdapter({ filename })
    const other = new Database(filename)
    try {
      other.exec('begin immediate')
      const error = await adapter.writes?.transaction(async () => 'never').catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(StorageUnavailable)
      expect(((error as Error).cause as { code?: string }).code).toBe('SQLITE_BUSY')
      other.exec('rollback')
      expect(await adapter.writes?.transaction(async () => 'done')).toBe('done')
    } finally {
      other.close()
    }
  })

})

describe('one tenant looping an expensive read does not hold up another', () => {
  let filename: string
  let t: TestApp | undefined
  // Company 1 gets 60,000 rows of each resource: its wide due-date range costs several to tens
  // of milliseconds a query, on Node 24 and better-sqlite3 13 too (at 20,000 a worker sometimes
  // timed a count under the 2 ms default, and the "moderate" shape was rightly judged fast).
  // Company 2 keeps the seed's 45.
  beforeAll(async () => {
    filename = await seedFile(generateDataset({ scale: 60_000 }))
  }, 120_000)
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  const EXPENSIVE = '/v1/todos?due_from=0001-01-01&due_to=9999-12-31&per_page=100'
  const CHEAP = '/v1/todos'

  it('once confirmed slow, company 1 reads that shape on a worker, and company 2 is answered while it runs', async () => {
    // A 1 ms threshold: company 1's statements take tens of ms, so timing noise cannot flip
    // the probes' verdict (company 2's, at ~0.2 ms, may see a probe or two; not counted below).
    t = await appOver(filename, { readWorkers: 2, slowReadMs: 1 }, false)
    const pool = (t.adapter as SqliteAdapter).readPool as SqliteReadPool
    const spy = vi.spyOn(pool, 'all')
    const pooled = { calls: () => spy.mock.calls.filter(([, , companyId]) => companyId === 1).length }
    const big = await t.keyFor(1)
    const small = await t.keyFor(2)

    // The shape is new for company 1: its first statement is tried on a worker; whichever of its
    // statements is slow (on the worker, or in process, holding the event loop meanwhile) goes to
    // the workers, and slow there twice, the shape is confirmed: one request then sends both its
    // statements to the workers. That takes a few requests, how many depends on which statement
    // is slow on this machine.
    let confirmedAfter = 0
    for (let round = 1; round <= 8 && confirmedAfter === 0; round++) {
      const before = pooled.calls()
      expect((await t.get(EXPENSIVE, big)).statusCode).toBe(200)
      if (pooled.calls() - before === 2) confirmedAfter = round
    }
    expect(confirmedAfter).toBeGreaterThan(0)
    const beforeConcurrent = pooled.calls()

    // Company 2's cheap shape is tried on a worker first; once fast there, it runs in process
    // (on a busy machine a trial may look slow once: a few requests at most).
    const smallCalls = () => spy.mock.calls.filter(([, , companyId]) => companyId === 2).length
    for (let round = 0, before = -1; round < 8 && before !== smallCalls(); round++) {
      before = smallCalls()
      expect((await t.get(CHEAP, small)).statusCode).toBe(200)
    }

    // From then on page and count both run on workers: the event loop is free, and company 2's
    // cheap request is answered while company 1's is still in the pool. Company 1's pooled answers
    // are held until company 2 has been answered, so how fast this machine runs the expensive
    // statement cannot decide the order; a statement run on the loop would never reach the hold
    // (and would be missing from the pooled calls below).
    let release = (): void => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const original = spy.getMockImplementation() ?? SqliteReadPool.prototype.all
    spy.mockImplementation(async function (this: SqliteReadPool, ...args: Parameters<SqliteReadPool['all']>) {
      const answer = await original.apply(pool, args)
      if (args[2] === 1) await held
      return answer
    })
    const finished: string[] = []
    const expensive = t.get(EXPENSIVE, big).then((res) => {
      finished.push('expensive')
      return res
    })
    await vi.waitFor(() => expect(pooled.calls() - beforeConcurrent).toBeGreaterThan(0), { interval: 1, timeout: 5_000 })
    const cheap = await t.get(CHEAP, small)
    finished.push('cheap')
    release()
    expect(cheap.statusCode).toBe(200)
    expect((cheap.json() as { pagination: { total: number } }).pagination.total).toBe(45)
    const res = await expensive
    expect(res.statusCode).toBe(200)
    expect(finished).toEqual(['cheap', 'expensive'])
    expect(pooled.calls() - beforeConcurrent).toBe(2)
  })

  it('with the default threshold, a moderately expensive query never runs on the loop: tried on a worker first, then confirmed there; four at once all run on workers', async () => {
    // Company 1's wide due range at 60,000 rows costs several ms to some tens of ms: a "moderate"
    // query (issue 21), above the default 2 ms but far from the 190 ms the workers were built for.
    t = await appOver(filename, { readWorkers: 2 })
    const pool = (t.adapter as SqliteAdapter).readPool as SqliteReadPool
    const spy = vi.spyOn(pool, 'all')
    const pooled = () => spy.mock.calls.filter(([, , companyId]) => companyId === 1).length
    const big = await t.keyFor(1)
    const MODERATE = '/v1/todos?due_from=0001-01-01&due_to=9999-12-31'

    // Its first run: both statements of a first page (page and count, two shapes) are tried on a worker.
    expect((await t.get(MODERATE, big)).statusCode).toBe(200)
    expect(pooled()).toBe(2)
    // Another due range of the same shape (nothing remembered for it): its count goes to a worker again.
    expect((await t.get(MODERATE.replace('0001', '0002'), big)).statusCode).toBe(200)
    expect(pooled()).toBeGreaterThanOrEqual(3)
    // Four at once, each with an unseen total: every count runs on a worker, none on the loop.
    const before = pooled()
    const answers = await Promise.all([3, 4, 5, 6].map((year) => t!.get(MODERATE.replace('0001', `000${year}`), big)))
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 200, 200])
    expect(pooled() - before).toBeGreaterThanOrEqual(4)
  })

  it("a small company's cheap shape is tried on a worker once, then runs in process", async () => {
    t = await appOver(filename, { readWorkers: 2 })
    const pool = (t.adapter as SqliteAdapter).readPool as SqliteReadPool
    const spy = vi.spyOn(pool, 'all')
    const small = await t.keyFor(2)
    for (let i = 0; i < 5; i++) expect((await t.get('/v1/users?per_page=5', small)).statusCode).toBe(200)
    // The first page's page and count statements, one trial each; the later requests' page
    // statement runs in process (the total is remembered). A run on a busy machine that looks
    // slow there may add a trial, never a move: at most one more per statement.
    const trials = spy.mock.calls.filter(([, , companyId]) => companyId === 2).length
    expect(trials).toBeGreaterThanOrEqual(2)
    expect(trials).toBeLessThan(5)
  })

  it('the off-loop read answers what the in-process read answers on the large company too', async () => {
    t = await appOver(filename, { readWorkers: 1, slowReadMs: 0 })
    const inProcess = await appOver(filename, { readWorkers: 0 })
    try {
      const url = `${EXPENSIVE}&page=134`
      const a = await inProcess.get(url, await inProcess.keyFor(1))
      const b = await t.get(url, await t.keyFor(1))
      expect(a.statusCode).toBe(200)
      expect((a.json() as { data: unknown[] }).data.length).toBeGreaterThan(0)
      expect(b.json()).toStrictEqual(a.json())
    } finally {
      await inProcess.close()
    }
  })
})
