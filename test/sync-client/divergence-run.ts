import { mulberry32 } from '../../src/seed/prng.js'
import { runDriver, type DriverInstance, type DriverOptions, type DriverReport } from './divergence-driver.js'
import { emptyCopy, LIST_PATHS, type CopiedRecord, type Copy, type CopyName, type GetJson } from './divergence-mini-client.js'

/** A client keeping a copy, as the divergence test drives it: one sync pass at a time, then its copy. */
export interface SyncUnderTest {
  syncOnce(): Promise<void>
  copy(): Promise<Copy> | Copy
  close?(): Promise<void> | void
}

export interface DivergenceRun {
  seed: number
  driver: DriverReport
  /** Sync passes the client made while the driver ran (the catch-up after it not counted). */
  passes: number
  /** Records in the server's data, by resource. */
  sizes: Record<string, number>
  /** Empty when the copy equals the server's data record for record. */
  differences: string[]
}

/**
 * `GET <path>` as JSON with `key`, taking the base URLs in turn: a client of two app instances
 * behind a round-robin balancer, each request answered by the other instance than the last.
 */
export function roundRobinGet(baseUrls: readonly string[], key: string): GetJson {
  let next = 0
  return async (path) => {
    const baseUrl = baseUrls[next % baseUrls.length] as string
    next += 1
    const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } })
    const text = await response.text()
    if (response.status !== 200) throw new Error(`GET ${path} on ${baseUrl}: ${response.status} ${text}`)
    return JSON.parse(text) as unknown
  }
}

/**
 * One seed of the divergence test: the driver's operations run while the client syncs again and
 * again (its first pass, the full read, among them); once the driver is done the client catches
 * up with one more pass, and its copy is compared with the server's data read afresh.
 */
export async function runDivergence(options: {
  seed: number
  instances: readonly DriverInstance[]
  keys: DriverOptions['keys']
  client: SyncUnderTest
  driver?: Partial<Pick<DriverOptions, 'operations' | 'concurrency' | 'maxHoldMs' | 'rollbackRate' | 'maxGapMs'>>
  /** Longest pause between two passes (ms); each pause is drawn from the seed. */
  maxPauseMs?: number
  /** The driver goes on until the client has made this many passes while it ran. Default 4. */
  minPasses?: number
}): Promise<DivergenceRun> {
  const { seed, instances, keys, client } = options
  const pauses = mulberry32(seed ^ 0x5eed)
  let driving = true
  let passes = 0
  const minPasses = options.minPasses ?? 4
  const driver = runDriver({
    seed,
    instances,
    keys,
    operations: 120,
    concurrency: 3,
    maxHoldMs: 40,
    rollbackRate: 0.1,
    maxGapMs: 30,
    ...options.driver,
    keepGoing: () => passes < minPasses,
  }).finally(() => {
    driving = false
  })
  const syncing = (async () => {
    while (driving) {
      await client.syncOnce()
      passes += 1
      await new Promise((resolve) => setTimeout(resolve, Math.floor(pauses() * (options.maxPauseMs ?? 15))))
    }
  })()
  // Both settle before either's failure is reported: no request outlives the run.
  const [driven, synced] = await Promise.allSettled([driver, syncing])
  if (driven.status === 'rejected') throw driven.reason
  if (synced.status === 'rejected') throw synced.reason
  await client.syncOnce()
  const server = await readServer(roundRobinGet(instances.map((instance) => instance.baseUrl), keys[1] as string))
  const differences = compareCopies(server, await client.copy())
  return {
    seed,
    driver: driven.value,
    passes,
    sizes: Object.fromEntries(Object.entries(server).map(([name, records]) => [name, records.size])),
    differences,
  }
}

/**
 * The server's data as the reference: the company and every list read whole with offset paging,
 * which is exact once nothing changes, and shares no code with the keyset walk under test.
 */
export async function readServer(get: GetJson): Promise<Copy> {
  const copy = emptyCopy()
  const company = ((await get('/v1/company')) as { data: CopiedRecord }).data
  copy.company.set(company.id, company)
  for (const name of LIST_PATHS) {
    for (let page = 1; ; page++) {
      const answer = (await get(`/v1/${name}?per_page=100&page=${page}`)) as { data: CopiedRecord[]; pagination: { total: number; total_pages: number } }
      for (const record of answer.data) copy[name].set(record.id, record)
      if (page >= answer.pagination.total_pages) {
        if (copy[name].size !== answer.pagination.total) throw new Error(`${name}: read ${copy[name].size} records of ${answer.pagination.total}`)
        break
      }
    }
  }
  return copy
}

/** Every way `copy` differs from `server`, one line each (the first 30). */
export function compareCopies(server: Copy, copy: Copy): string[] {
  const differences: string[] = []
  for (const name of Object.keys(server) as CopyName[]) {
    const expected = server[name]
    const held = copy[name] ?? new Map()
    for (const [id, record] of expected) {
      const mine = held.get(id)
      if (mine === undefined) differences.push(`${name} ${id}: missing from the copy`)
      else if (canonical(mine) !== canonical(record)) differences.push(`${name} ${id}: the copy has ${canonical(mine)}, the server ${canonical(record)}`)
    }
    for (const id of held.keys()) if (!expected.has(id)) differences.push(`${name} ${id}: in the copy, gone from the server`)
  }
  return differences.slice(0, 30)
}

/** JSON with every object's keys sorted: a record equals another whatever order its fields were written in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  )
}
