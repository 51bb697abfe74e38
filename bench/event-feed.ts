/**
 * The events feed (`GET /v1/events`) at scale, on SQLite and Postgres (issue 24):
 * 1. a page read at the head of a history of `--events` events (default 1,000,000) costs what
 *    it costs at its start: per page, interleaved rounds of both, the ratio head / start;
 * 2. a client catching up on `--catch-up` events (default 100,000) that committed since its
 *    cursor and have no position yet (the feed gives positions as it reads), against reading the
 *    same number of events that already have theirs.
 * Through the plugin (`app.inject`: authentication, rate limit, the route, the store), one
 * company's feed with another company's events interleaved. Figures are reported, never asserted.
 *
 *   npx tsx bench/event-feed.ts [--backends sqlite,postgres] [--events 1000000] [--catch-up 100000]
 *     [--rounds 5] [--reads 200] [--limit 100] [--pg postgres://postgres@127.0.0.1:5432/postgres]
 *
 * Recorded figures and the machine they came from: docs/benchmarks.md, "The events feed".
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import { openPostgresAdapter } from '../adapters/postgres/index.js'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { portsOf, workforceApi } from '../src/index.js'
import type { ReferenceAdapterPorts } from '../src/ports/index.js'
import { scratchPostgresDatabase } from './scratch-postgres.js'

const { values } = parseArgs({
  options: {
    backends: { type: 'string', default: 'sqlite,postgres' },
    events: { type: 'string', default: '1000000' },
    'catch-up': { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '5' },
    reads: { type: 'string', default: '200' },
    limit: { type: 'string', default: '100' },
    pg: { type: 'string', default: process.env.WORKFORCE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
})
const EVENTS = Number(values.events)
const CATCH_UP = Number(values['catch-up'])
const ROUNDS = Number(values.rounds)
const READS = Number(values.reads)
const LIMIT = Number(values.limit)
/** Every tenth event is company 2's: company 1's feed skips over them, as a busy shared database does. */
const OTHER_EVERY = 10

interface Backend {
  name: string
  open(): Promise<{ ports: ReferenceAdapterPorts & { db: Kysely<any> }; dialect: 'sqlite' | 'postgres'; close(): Promise<void> }>
}

const BACKENDS: Record<string, Backend> = {
  sqlite: {
    name: 'SQLite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'wfa-bench-feed-'))
      const adapter = await openSqliteAdapter({ filename: join(dir, 'feed.db') })
      return { ports: adapter, dialect: 'sqlite', close: async () => (await adapter.close(), rmSync(dir, { recursive: true, force: true })) }
    },
  },
  postgres: {
    name: 'Postgres',
    async open() {
      const scratch = await scratchPostgresDatabase(values.pg as string, 'wfa_bench_event_feed', () => {})
      const adapter = await openPostgresAdapter({ connectionString: scratch.db })
      return { ports: adapter, dialect: 'postgres', close: async () => (await adapter.close(), await scratch.drop()) }
    },
  },
}

/**
 * Inserts `count` committed events after id `from` straight into the outbox, in one statement
 * per 100,000 (10,000 on Postgres): with their positions (`positioned`, a history read before) or without (committed
 * since the last read). A body of about 300 bytes, like a to-do's event.
 */
async function insertEvents(db: Kysely<any>, dialect: 'sqlite' | 'postgres', from: number, count: number, positioned: boolean): Promise<void> {
  // Postgres stops any statement past the adapter's statement timeout (750 ms by default): smaller statements there.
  const CHUNK = dialect === 'postgres' ? 10_000 : 100_000
  for (let start = from + 1; start <= from + count; start += CHUNK) {
    const end = Math.min(start + CHUNK - 1, from + count)
    const company = sql`case when i % ${sql.lit(OTHER_EVERY)} = 0 then 2 else 1 end`
    // Company 1's position of event i: the events of company 1 up to i.
    const position = positioned ? sql`case when i % ${sql.lit(OTHER_EVERY)} = 0 then null else i - i / ${sql.lit(OTHER_EVERY)} end` : sql`null`
    const body = sql`'{"id":"evt_bench' || i || '","type":"todos.updated","created_at":"2026-11-27T06:00:00.000Z","company_id":' || (${company}) || ',"data":{"id":' || i || ',"title":"Check the ladder on site ' || i || '","status":"open","priority":"normal","important":false,"assigned_to":1,"list_id":1,"due_day":null,"notes":"","created_at":"2026-11-27T06:00:00.000Z","updated_at":"2026-11-27T06:00:00.000Z"}}'`
    const occurred = dialect === 'sqlite' ? sql`${sql.lit(Date.UTC(2026, 10, 27, 6))}` : sql`now()`
    const series =
      dialect === 'sqlite'
        ? sql`with recursive n(i) as (select ${sql.lit(start)} union all select i + 1 from n where i < ${sql.lit(end)}) select i from n`
        : sql`select generate_series(${sql.lit(start)}::bigint, ${sql.lit(end)}::bigint) as i`
    await sql`insert into wfa_change_events (company_id, type, resource_id, occurred_at, event_id, payload, position)
      select ${company}, 'todos.updated', i, ${occurred}, 'evt_bench' || i, ${body}, ${position} from (${series}) as s`.execute(db)
    // Committed since the last read: queued for their positions, as the outbox queues them.
    if (!positioned) {
      await sql`insert into wfa_event_queue (event_id, company_id) select id, company_id from wfa_change_events where id between ${sql.lit(start)} and ${sql.lit(end)}`.execute(db)
    }
  }
}

async function plugin(ports: ReferenceAdapterPorts): Promise<{ app: FastifyInstance; key: string }> {
  // The bench's events are to-dos': the company's to-do module must be on for its key to read them.
  await (ports.modules as unknown as { setActive(company: number, module: string, active: boolean): Promise<void> }).setActive(1, 'todo', true)
  const app = Fastify()
  await app.register(workforceApi, { prefix: '/api/public', ...portsOf(ports), rateLimit: false, webhookOptions: { dispatcher: false } })
  await app.ready()
  const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })
  return { app, key }
}

interface FeedAnswer {
  data: unknown[]
  next_cursor: string
  has_more: boolean
}

async function get(app: FastifyInstance, key: string, query: string): Promise<FeedAnswer> {
  const response = await app.inject({ method: 'GET', url: `/api/public/v1/events${query}`, headers: { 'x-api-key': key } })
  if (response.statusCode !== 200) throw new Error(`GET /v1/events${query}: ${response.statusCode} ${response.body}`)
  return response.json() as FeedAnswer
}

/** `READS` reads of one page from `cursor` (the same page every time), in µs per read. */
async function timeReads(app: FastifyInstance, key: string, cursor: string | undefined): Promise<number> {
  const query = `?limit=${LIMIT}${cursor === undefined ? '' : `&after=${cursor}`}`
  const first = await get(app, key, query)
  if (first.data.length !== LIMIT) throw new Error(`expected a full page of ${LIMIT} at ${query}, got ${first.data.length}`)
  const started = process.hrtime.bigint()
  for (let read = 0; read < READS; read += 1) await get(app, key, query)
  return Number(process.hrtime.bigint() - started) / 1_000 / READS
}

/** Reads company 1's feed from `cursor` to its end; events and seconds. */
async function drain(app: FastifyInstance, key: string, cursor: string): Promise<{ events: number; seconds: number; next: string }> {
  let events = 0
  let next = cursor
  const started = process.hrtime.bigint()
  for (;;) {
    const page = await get(app, key, `?limit=1000&after=${next}`)
    events += page.data.length
    next = page.next_cursor
    if (!page.has_more) break
  }
  return { events, seconds: Number(process.hrtime.bigint() - started) / 1e9, next }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

async function run(backend: Backend): Promise<void> {
  const opened = await backend.open()
  const log = (line: string) => console.error(`[${backend.name}] ${line}`)
  try {
    const { db } = opened.ports
    let started = Date.now()
    await insertEvents(db, opened.dialect, 0, EVENTS, true)
    const companyEvents = EVENTS - Math.floor(EVENTS / OTHER_EVERY)
    await db.insertInto('wfa_event_feeds').values({ company_id: 1, head: companyEvents, purged_through: 0 }).execute()
    await sql`insert into wfa_event_feeds (company_id, head, purged_through) values (2, 0, 0)`.execute(db)
    log(`history of ${EVENTS.toLocaleString('en')} events (${companyEvents.toLocaleString('en')} of company 1) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    if (opened.dialect === 'postgres') await sql`analyze wfa_change_events`.execute(db)
    const { app, key } = await plugin(opened.ports)
    try {
      const headCursor = (await app.inject({ method: 'GET', url: '/api/public/v1/events/cursor', headers: { 'x-api-key': key } })).json().data.cursor as string
      // The page just before the head: `after` = head − LIMIT, as a client one page behind reads it.
      const nearHead = cursorAt(headCursor, -LIMIT)
      const start: number[] = []
      const head: number[] = []
      for (let round = 0; round < ROUNDS; round += 1) {
        start.push(await timeReads(app, key, undefined))
        head.push(await timeReads(app, key, nearHead))
      }
      const s = median(start)
      const h = median(head)
      log(`page of ${LIMIT} at the start: median ${s.toFixed(0)} µs (${(s / LIMIT).toFixed(1)} µs per event); at the head: ${h.toFixed(0)} µs (${(h / LIMIT).toFixed(1)} µs per event); head / start ${(h / s).toFixed(2)} (rounds: start ${start.map((v) => v.toFixed(0)).join(', ')}; head ${head.map((v) => v.toFixed(0)).join(', ')})`)

      // Catch-up: CATCH_UP events committed since the cursor, no positions yet.
      started = Date.now()
      await insertEvents(db, opened.dialect, EVENTS, CATCH_UP, false)
      if (opened.dialect === 'postgres') await sql`analyze wfa_change_events`.execute(db)
      log(`${CATCH_UP.toLocaleString('en')} new events (no positions yet) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
      const caught = await drain(app, key, headCursor)
      const again = await drain(app, key, headCursor)
      log(
        `catch-up of ${caught.events.toLocaleString('en')} events (positions given while reading): ${caught.seconds.toFixed(2)} s, ${(caught.events / caught.seconds).toFixed(0)} events/s; ` +
          `the same events read again (positioned): ${again.seconds.toFixed(2)} s, ${(again.events / again.seconds).toFixed(0)} events/s; ratio ${(caught.seconds / again.seconds).toFixed(2)}`,
      )
      if (caught.events !== again.events || caught.events !== CATCH_UP - Math.floor((EVENTS + CATCH_UP) / OTHER_EVERY) + Math.floor(EVENTS / OTHER_EVERY)) {
        throw new Error(`catch-up read ${caught.events} events, the second read ${again.events}`)
      }
    } finally {
      await app.close()
    }
  } finally {
    await opened.close()
  }
}

/** The cursor `delta` positions from `cursor` (the bench knows the encoding; clients never do). */
function cursorAt(cursor: string, delta: number): string {
  const [company, position] = Buffer.from(cursor.slice(4), 'base64url').toString('latin1').split('.')
  return `ec1_${Buffer.from(`${company}.${Number(position) + delta}`).toString('base64url')}`
}

for (const name of (values.backends as string).split(',')) {
  const backend = BACKENDS[name]
  if (backend === undefined) throw new Error(`unknown backend ${name}: sqlite or postgres`)
  await run(backend)
}
