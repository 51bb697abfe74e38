import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { SqliteAdapter } from '../../adapters/sqlite/index.js'
import { sqliteCodec } from '../../adapters/sqlite/sqlite-codec.js'
import { systemClock } from '../../src/ports/clock.js'
import { buildWriteApp, PREFIX, WRITE_ADAPTERS, type WriteTestApp } from '../helpers/write-app.js'
import { deleteInHost, type DriverInstance, type DriverReport } from './divergence-driver.js'
import { MiniSyncClient, type GetJson } from './divergence-mini-client.js'
import { clientUnderTest } from './divergence-clients.js'
import { compareCopies, readServer, roundRobinGet, runDivergence } from './divergence-run.js'

// Issue 24's proof on SQLite, over real HTTP: while a seeded driver creates, updates and deletes
// every resource that has events (through the API, and in the host's own transactions that
// publish their events, some held open, some rolled back), a client keeps a copy by the
// contract (cursor, keyset walk of every list, then the feed). Once the driver stops and the
// client catches up, the copy equals the server's data record for record, deletions included.
// divergence.postgres.test.ts runs the same over two app instances on one database.

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]

const sqlite = WRITE_ADAPTERS.find((factory) => factory.name === 'sqlite')
if (sqlite === undefined) throw new Error('the write adapters have no sqlite entry')

interface Served {
  t: WriteTestApp
  instance: DriverInstance
  keys: Record<number, string>
}

async function serve(): Promise<Served> {
  // The system clock: the host's stamps and the API's are then on one timeline.
  const t = await buildWriteApp({ adapter: sqlite, options: { clock: systemClock } })
  try {
    const origin = await t.app.listen({ host: '127.0.0.1', port: 0 })
    const adapter = t.adapter as SqliteAdapter
    return {
      t,
      instance: { app: t.app, baseUrl: `${origin}${PREFIX}`, transact: (work) => adapter.transaction(work), codec: sqliteCodec },
      keys: { 1: await t.keyFor(1), 2: await t.keyFor(2) },
    }
  } catch (error) {
    await t.close()
    throw error
  }
}

describe('divergence on SQLite: a copy kept from the feed equals the server after random changes', () => {
  let served: Served | undefined
  afterEach(async () => {
    await served?.t.close()
    served = undefined
  })
  const reports: DriverReport[] = []

  it.each(SEEDS)('seed %i: no record differs (keyset walk, then the feed)', async (seed) => {
    served = await serve()
    const client = await clientUnderTest([served.instance.baseUrl], served.keys[1] as string)
    try {
      const run = await runDivergence({ seed, instances: [served.instance], keys: served.keys, client })
      reports.push(run.driver)
      expect(run.passes).toBeGreaterThanOrEqual(4)
      expect(run.differences, `seed ${seed}: ${JSON.stringify(run.driver)}`).toEqual([])
    } finally {
      await client.close?.()
    }
  })

  afterAll(() => {
    // The seeds together made every kind of change the feed carries, and the awkward transactions
    // (checked when every seed ran: not under a `-t` filter).
    if (reports.length < SEEDS.length) return
    const kinds = new Set(reports.flatMap((report) => Object.keys(report.applied)))
    for (const resource of ['employees', 'projects', 'shifts', 'absences', 'expenses', 'todos']) {
      for (const action of ['create', 'update', 'delete']) expect(kinds, `${resource}.${action}`).toContain(`${resource}.${action}`)
    }
    for (const kind of ['users.invite', 'users.accept', 'users.decline', 'users.login', 'company.update']) expect(kinds).toContain(kind)
    expect(reports.every((report) => report.held > 0)).toBe(true)
    expect(reports.some((report) => report.rolledBack > 0)).toBe(true)
  })

  // The control: the harness sees a broken walk. A record deleted from page 1 while page 2 is
  // being asked for moves the first record of page 2 onto page 1, so an offset walk never reads
  // it; nothing changes it later, so no event brings it either. The keyset walk reads on after
  // the last id it saw and misses nothing.
  it.each(['page', 'keyset'] as const)('control: a deletion during the walk by %s', async (walk) => {
    served = await serve()
    const { instance } = served
    const plain = roundRobinGet([instance.baseUrl], served.keys[1] as string)
    let deleted: number | undefined
    const get: GetJson = async (path) => {
      const answer = (await plain(path)) as { data: Array<{ id: number }> }
      if (deleted === undefined && path.startsWith('/v1/todos?')) {
        deleted = answer.data[0]?.id as number
        await instance.transact((trx) => deleteInHost(trx, instance, 'todos', 1, deleted as number))
      }
      return answer
    }
    const client = new MiniSyncClient({ get, walk, perPage: 7 })
    await client.syncOnce()
    const differences = compareCopies(await readServer(plain), client.copy)
    if (walk === 'keyset') expect(differences).toEqual([])
    else expect(differences).toEqual([expect.stringMatching(/^todos \d+: missing from the copy$/)])
  })
})
