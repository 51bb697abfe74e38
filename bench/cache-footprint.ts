/**
 * What each process-lifetime cache costs when full (issue 21): every bounded cache of the
 * request path is filled to its bound through its own API, with keys as large as real ones,
 * and the heap it holds afterwards is measured. The figures are the worst case the bounds
 * allow; docs/architecture.md lists them beside each bound.
 *
 *   node --expose-gc --import tsx bench/cache-footprint.ts
 *
 * Figures are heap bytes after a full garbage collection (V8's `heapUsed` plus `external`),
 * on this Node; RSS follows them with the allocator's slack on top.
 */
import { createRequire } from 'node:module'
import { randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { ListPages, LIST_CACHE_ENTRIES, MAX_MARKS, MAX_MARKS_PER_LIST } from '../src/api/list-pages.js'
import { KEY_CACHE_MAX, KeyVerifier } from '../src/auth/key-verifier.js'
import { ModuleCache } from '../src/auth/module-cache.js'
import { UsageMeter } from '../src/usage/usage-meter.js'
import { systemClock } from '../src/ports/clock.js'
import type { ApiKeyRecord } from '../src/ports/key-store.js'
import type { ListVersion, SeekableReader, SeekWindow } from '../src/ports/storage.js'
import { startOfCompanyDay } from '../src/time/calendar.js'
import { SlowReadRouter } from '../adapters/sqlite/sqlite-slow-reads.js'
import { ALL_SCOPES } from '../src/scopes.js'

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc --import tsx bench/cache-footprint.ts')

const heap = () => {
  gc()
  gc()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.external
}

const rows: string[] = ['| cache | filled to | heap held | per entry |', '|---|---:|---:|---:|']

/** Fills with `fill`, keeps what it returns alive until measured, and reports the heap it holds. */
async function measure(name: string, entries: number, unit: string, fill: () => Promise<unknown> | unknown): Promise<void> {
  const before = heap()
  const held = await fill()
  const after = heap()
  const bytes = after - before
  rows.push(`| ${name} | ${entries.toLocaleString('en')} ${unit} | ${(bytes / 1024 / 1024).toFixed(1)} MiB | ${Math.round(bytes / entries)} B |`)
  console.error(`${name}: ${(bytes / 1024 / 1024).toFixed(1)} MiB`, held === undefined ? '' : '')
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex')
const silent = { warn() {}, error() {}, info() {}, debug() {}, trace() {}, fatal() {}, child: () => silent, level: 'silent', silent() {} }

// Key verifier: every entry a known, active key with every scope (the largest entry), plus the
// last-used throttle's mark for it.
await measure('key verifier (cache + last-used throttle)', KEY_CACHE_MAX, 'keys', async () => {
  const record = (keyId: string): ApiKeyRecord => ({
    key_id: keyId,
    company_id: 1,
    secret_hash: hex(32),
    scopes: [...ALL_SCOPES],
    expires_at: null,
    state: 'active',
    name: null,
    rate_limit: null,
    created_at: new Date(),
    last_used_at: null,
  })
  const secrets = new Map<string, string>()
  const verifier = new KeyVerifier({
    clock: systemClock,
    keyStore: {
      find: async (keyId: string) => ({ ...record(keyId), secret_hash: secrets.get(keyId) as string }),
      touchLastUsed: async () => {},
    } as never,
  })
  const { hashSecret } = await import('../src/auth/api-key.js')
  const presented: string[] = []
  for (let i = 0; i < KEY_CACHE_MAX; i++) {
    const keyId = hex(8)
    const secret = hex(32)
    secrets.set(keyId, hashSecret(secret))
    presented.push(`owk_${keyId}_${secret}`)
  }
  const probe = await verifier.verify(presented[0])
  if (probe === null) throw new Error('the verifier refused a known key')
  for (const key of presented) await verifier.verify(key)
  secrets.clear()
  presented.length = 0
  return verifier
})

await measure('module cache', 10_000, 'answers', async () => {
  const cache = new ModuleCache({ isActive: async () => true } as never, 30_000, systemClock)
  for (let company = 1; company <= 10_000 / 2; company++) {
    await cache.isActive(company, 'projects')
    await cache.isActive(company, 'todo')
  }
  return cache
})

// List pages: 5,000 lists, with boundaries up to the global bound (a walk of 50 lists of
// 2,000,000 rows at per_page=100 fills 20,000 per list); filter keys as long as an email filter.
await measure('list pages: totals of 5,000 lists, no boundaries', LIST_CACHE_ENTRIES, 'lists', async () => {
  const pages = new ListPages()
  const reader = fakeReader()
  for (let i = 0; i < LIST_CACHE_ENTRIES; i++) {
    await pages.list('users', reader, 1, { email: `someone-${hex(8)}@example.com` }, { limit: 25, offset: 10_000_000 })
  }
  return pages
})
await measure('list pages: boundaries at the global bound', MAX_MARKS, 'boundaries', async () => {
  const pages = new ListPages()
  const reader = fakeReader()
  const lists = MAX_MARKS / MAX_MARKS_PER_LIST
  for (let list = 0; list < lists; list++) {
    // A page at every other offset: two boundaries each, none shared.
    for (let page = 0; page < MAX_MARKS_PER_LIST / 2; page++) {
      await pages.list('shifts', reader, list + 1, {}, { limit: 10, offset: page * 20 })
    }
  }
  return pages
})

await measure('start-of-day memo (time zone × day)', 10_000, 'days', () => {
  const zones = ['Europe/Rome', 'America/Los_Angeles', 'Asia/Kolkata', 'Australia/Lord_Howe', 'America/St_Johns']
  let day = Date.UTC(2000, 0, 1)
  for (let i = 0; i < 10_000; i++) {
    startOfCompanyDay(new Date(day).toISOString().slice(0, 10), zones[i % zones.length] as string)
    if (i % zones.length === zones.length - 1) day += 86_400_000
  }
})

await measure('usage meter buffer', 10_000, 'key-hours', () => {
  const meter = new UsageMeter({ add: async () => {}, hourly: async () => [] }, systemClock, silent as never)
  for (let i = 0; i < 10_000; i++) meter.count(1, hex(8), 200)
  return meter
})

await measure('slow-read marks (SQLite)', 10_000, 'companies × 3 shapes', () => {
  const router = new SlowReadRouter()
  const shapes = [{}, {}, {}]
  for (let company = 1; company <= 10_000; company++) for (const shape of shapes) router.observeInProcess(company, shape, shape, 50)
  return router
})

// @fastify/rate-limit's local store: an LRU of 5,000 counters per limit (toad-cache), five limits.
await measure('rate-limit local store (one limit)', 5_000, 'counters', () => {
  const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
  ) => { incr(id: string, cb: () => void, timeWindow: number, max: number): void }
  const store = new LocalStore(false, false)
  for (let i = 0; i < 5_000; i++) store.incr(`key:${hex(8)}`, () => {}, 60_000, 600)
  return store
})

await measure('rate-limit vouch renewals', KEY_CACHE_MAX, 'key ids', () => {
  const renewed = new LRUCache<string, true>({ max: KEY_CACHE_MAX, ttl: 5 * 60_000 })
  for (let i = 0; i < KEY_CACHE_MAX; i++) renewed.set(hex(8), true)
  return renewed
})

console.log(`Node ${process.version}\n\n${rows.join('\n')}`)

/** A seekable reader over a list of 10,000,000 rows with ids 1, 2, …, whose version never moves. */
function fakeReader(): SeekableReader<{ id: number }, object> {
  const version: ListVersion = { appends: 1, updates: 0, removals: 0 }
  return {
    version: async () => version,
    count: async () => ({ total: 10_000_000, version }),
    page: async (_company: number, _filter: object, window: SeekWindow) => {
      const first = window.fromEnd === true ? 10_000_000 - window.skip - window.limit + 1 : window.after + window.skip + 1
      if (first > 10_000_000) return { rows: [], version: null }
      return { rows: Array.from({ length: window.limit }, (_, i) => ({ id: first + i })), version }
    },
  }
}
