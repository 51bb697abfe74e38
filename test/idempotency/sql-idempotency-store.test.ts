import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SqliteAdapter } from '../../adapters/sqlite/index.js'
import type { StoredResponse } from '../../src/ports/idempotency-store.js'
import { openSqliteFile, SQLITE_TARGETS, type OpenedSqlite } from '../helpers/sqlite-targets.js'
import { beginRequest, hex64, minutes, NOW, slotOf } from '../helpers/write-fixtures.js'

const SLOT = slotOf(1)
const OTHER_FINGERPRINT = hex64('PATCH /v1/todos/1 {"title":"y"}')
/** Every byte of a body must come back: unicode, whitespace, key order, a trailing newline. */
const RESPONSE: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8', location: '/v1/todos/41' },
  body: '{"data":{"id":41,"title":"Caffè ☕ — «urgent»",  "notes":null}}\n',
}

describe.each(SQLITE_TARGETS)('SqlIdempotencyStore on SQLite ($name)', (target) => {
  let opened: OpenedSqlite
  let adapter: SqliteAdapter

  beforeEach(async () => {
    opened = await target.open()
    adapter = opened.adapter
  })
  afterEach(() => opened.dispose())

  const row = (slot = SLOT) => adapter.db.selectFrom('wfa_idempotency').selectAll().where('slot', '=', slot).executeTakeFirst()
  const begin = (overrides: Parameters<typeof beginRequest>[1] = {}) => adapter.idempotency.begin(beginRequest(SLOT, overrides))

  it('starts a free slot and stores it in flight with the attempt’s token and lease', async () => {
    expect(await begin()).toEqual({ state: 'started' })
    expect(await row()).toEqual({
      slot: SLOT,
      company_id: 1,
      fingerprint: beginRequest(SLOT).fingerprint,
      state: 'in_flight',
      token: 'token-1',
      lease_until: minutes(1).getTime(),
      created_at: NOW.getTime(),
      completed_at: null,
      response_status: null,
      response_headers: null,
      response_body: null,
    })
  })

  it('answers in_flight to a retry while the lease runs, and mismatch to another request', async () => {
    await begin()
    expect(await begin({ token: 'token-2', now: minutes(0.5) })).toEqual({ state: 'in_flight' })
    expect(await begin({ token: 'token-3', fingerprint: OTHER_FINGERPRINT })).toEqual({ state: 'mismatch' })
    expect(await row()).toMatchObject({ token: 'token-1', fingerprint: beginRequest(SLOT).fingerprint, state: 'in_flight' })
  })

  it('completes once for the holding token and then replays the response verbatim', async () => {
    await begin()
    expect(await adapter.idempotency.complete(SLOT, 'token-2', RESPONSE, NOW)).toBe(false)
    expect(await adapter.idempotency.complete(SLOT, 'token-1', RESPONSE, minutes(0.2))).toBe(true)
    expect(await adapter.idempotency.complete(SLOT, 'token-1', { ...RESPONSE, status: 500 }, minutes(0.3))).toBe(false)
    expect(await row()).toMatchObject({ state: 'completed', completed_at: minutes(0.2).getTime(), response_status: 201 })

    // A replay needs no lease: even long after the lease, but within retention.
    const replay = await begin({ token: 'token-9', now: minutes(60) })
    expect(replay).toEqual({ state: 'replay', response: RESPONSE })
    expect(await begin({ fingerprint: OTHER_FINGERPRINT })).toEqual({ state: 'mismatch' })
  })

  it('lets a retry take over a slot whose lease ran out, keeping the record’s age', async () => {
    await begin()
    const later = minutes(1)
    // The lease ends at `lease_until`: at that instant it no longer blocks.
    expect(await begin({ token: 'token-2', now: later })).toEqual({ state: 'started' })
    expect(await row()).toMatchObject({ token: 'token-2', lease_until: minutes(1, later).getTime(), created_at: NOW.getTime(), state: 'in_flight' })
    expect(await adapter.idempotency.complete(SLOT, 'token-1', RESPONSE, later)).toBe(false)
    expect(await adapter.idempotency.complete(SLOT, 'token-2', RESPONSE, later)).toBe(true)
  })

  it('replaces an expired record as a fresh request, whatever it held', async () => {
    await begin()
    await adapter.idempotency.complete(SLOT, 'token-1', RESPONSE, NOW)
    const nextDay = minutes(24 * 60 + 1)
    expect(await begin({ token: 'token-2', now: nextDay, fingerprint: OTHER_FINGERPRINT, companyId: 2 })).toEqual({ state: 'started' })
    expect(await row()).toEqual({
      slot: SLOT,
      company_id: 2,
      fingerprint: OTHER_FINGERPRINT,
      state: 'in_flight',
      token: 'token-2',
      lease_until: minutes(1, nextDay).getTime(),
      created_at: nextDay.getTime(),
      completed_at: null,
      response_status: null,
      response_headers: null,
      response_body: null,
    })
  })

  it('keeps a record created exactly at the retention boundary', async () => {
    await begin()
    await adapter.idempotency.complete(SLOT, 'token-1', RESPONSE, NOW)
    expect(await begin({ token: 'token-2', now: minutes(24 * 60), expiredBefore: NOW })).toEqual({ state: 'replay', response: RESPONSE })
  })

  it('releases only an in-flight slot held by the token', async () => {
    await begin()
    await adapter.idempotency.release(SLOT, 'token-2')
    expect(await begin({ token: 'token-2' })).toEqual({ state: 'in_flight' })
    await adapter.idempotency.release(SLOT, 'token-1')
    expect(await row()).toBeUndefined()
    expect(await begin({ token: 'token-3' })).toEqual({ state: 'started' })

    await adapter.idempotency.complete(SLOT, 'token-3', RESPONSE, NOW)
    await adapter.idempotency.release(SLOT, 'token-3')
    expect(await begin({ token: 'token-4' })).toEqual({ state: 'replay', response: RESPONSE })
  })

  it('purges expired records in batches of at most `limit`, oldest first, and keeps the rest', async () => {
    const ages = [-50, -40, -30, -26, -25, -24, -1]
    for (const [index, hours] of ages.entries()) {
      const created = minutes(hours * 60)
      await adapter.idempotency.begin(beginRequest(hex64(`slot-${index}`), { now: created }))
    }
    const before = minutes(-24 * 60)
    expect(await adapter.idempotency.purgeExpired(before, 2)).toBe(2)
    expect(await adapter.idempotency.purgeExpired(before, 2)).toBe(2)
    expect(await adapter.idempotency.purgeExpired(before, 2)).toBe(1)
    expect(await adapter.idempotency.purgeExpired(before, 2)).toBe(0)
    const left = await adapter.db.selectFrom('wfa_idempotency').select('slot').orderBy('created_at').execute()
    expect(left.map((r) => r.slot)).toEqual([hex64('slot-5'), hex64('slot-6')])
    expect(await adapter.idempotency.purgeExpired(NOW, 0)).toBe(0)
  })

  it('of 50 concurrent identical begins, starts exactly one', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, index) => begin({ token: `token-${index}` })))
    expect(results.filter((result) => result.state === 'started')).toHaveLength(1)
    expect(results.filter((result) => result.state === 'in_flight')).toHaveLength(49)
  })

  it('of 50 concurrent retries after the lease ran out, lets exactly one take over', async () => {
    await begin({ token: 'crashed' })
    const later = minutes(5)
    const results = await Promise.all(Array.from({ length: 50 }, (_, index) => begin({ token: `token-${index}`, now: later })))
    expect(results.filter((result) => result.state === 'started')).toHaveLength(1)
    expect(results.filter((result) => result.state === 'in_flight')).toHaveLength(49)
  })

  it('serializes a completion with concurrent retries: queued first, it wins over a takeover', async () => {
    await begin({ token: 'first' })
    const later = minutes(2)
    const [completed, ...begun] = await Promise.all([
      adapter.idempotency.complete(SLOT, 'first', RESPONSE, later),
      ...Array.from({ length: 10 }, (_, index) => begin({ token: `late-${index}`, now: later })),
    ])
    // `complete` was queued first, so it wins and every retry replays.
    expect(completed).toBe(true)
    expect(begun.every((result) => result.state === 'replay')).toBe(true)
  })
})

describe('SqlIdempotencyStore across processes on one SQLite file', () => {
  const SLOTS = 10
  const ROUNDS = 8
  const PROCESSES = ['a', 'b', 'c']
  let opened: OpenedSqlite
  beforeEach(async () => {
    opened = await openSqliteFile()
  })
  afterEach(() => opened.dispose())

  const worker = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url))
  const repository = fileURLToPath(new URL('../..', import.meta.url))

  /**
   * Three processes, started together, each run ROUNDS concurrent `begin`s on each of SLOTS
   * slots; returns the outcomes per slot, summed over the processes.
   */
  async function beginInThreeProcesses(minutesLater: number): Promise<Array<Record<string, number>>> {
    const startAt = Date.now() + 2_500
    const run = (label: string) =>
      promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', worker('begin-worker.ts'), opened.filename, label, String(SLOTS), String(ROUNDS), String(startAt), String(minutesLater)],
        { cwd: repository },
      )
    const tallies = (await Promise.all(PROCESSES.map(run))).map(
      ({ stdout }) => JSON.parse(stdout.trim()) as Record<string, Record<string, number>>,
    )
    return Array.from({ length: SLOTS }, (_, index) => {
      const sum: Record<string, number> = {}
      for (const tally of tallies) {
        for (const [state, n] of Object.entries(tally[slotOf(index)] ?? {})) sum[state] = (sum[state] ?? 0) + n
      }
      return sum
    })
  }

  const oneStartedPerSlot = Array.from({ length: SLOTS }, () => ({ started: 1, in_flight: PROCESSES.length * ROUNDS - 1 }))

  it('starts exactly one of many concurrent begins of a free slot', async () => {
    expect(await beginInThreeProcesses(0)).toEqual(oneStartedPerSlot)
    expect(await opened.adapter.db.selectFrom('wfa_idempotency').selectAll().execute()).toHaveLength(SLOTS)
  })

  it('lets exactly one of them take over a slot whose lease ran out', async () => {
    for (let index = 0; index < SLOTS; index++) {
      await opened.adapter.idempotency.begin(beginRequest(slotOf(index), { token: 'crashed' }))
    }
    expect(await beginInThreeProcesses(5)).toEqual(oneStartedPerSlot)
  })

  it('waits for a write transaction open in another process: BEGIN IMMEDIATE, not a takeover behind its back', async () => {
    const { idempotency } = opened.adapter
    expect(await idempotency.begin(beginRequest(SLOT, { token: 'first' }))).toEqual({ state: 'started' })
    const child = spawn(process.execPath, ['--import', 'tsx', worker('complete-worker.ts'), opened.filename, SLOT, 'first', '400'], {
      cwd: repository,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
    expect((await lines.next()).value).toBe('open')

    // The first attempt's lease has run out, so without the other process's lock this retry
    // would take the slot over; instead it waits for that transaction and replays its result.
    const startedAt = Date.now()
    const retry = await idempotency.begin(beginRequest(SLOT, { token: 'retry', now: minutes(5) }))
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(150)
    expect(retry).toEqual({ state: 'replay', response: { status: 201, headers: { location: '/v1/todos/1' }, body: '{"id":1}' } })
    expect(JSON.parse(String((await lines.next()).value))).toEqual({ completed: true })
    await once(child, 'close')
  })
})
