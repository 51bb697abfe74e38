import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

export const USAGE = `Usage: npm run bench -- [options]

  --scale <n>          users (and rows of every resource) in company 1        [100000]
  --companies <ids>    companies whose user list is compared, comma-separated  [1,2]
                       (the seed gives company 2 exactly 45 users)
  --duration <s>       seconds of measured load per round and target           [10]
  --warmup <s>         seconds of unmeasured load before each measured round   [2]
  --rounds <n>         A/B rounds (plugin, bare, plugin, bare, ...)            [2]
  --connections <n>    concurrent autocannon connections                      [20]
  --per-page <n>       per_page of the listed page                             [25]
  --key-time <ms>      measured time per key-verification case                 [1000]
  --only <part>        run one part only: http, keys, contention, lists, pages, soak, deliveries or cold-start
                       (contention: one tenant loops an expensive to-do query while
                       another's cheap reads are timed, reads in process vs off-loop;
                       it measures --duration seconds per mode;
                       lists: bench/scale.ts, issue 13's goals at 1,000,000 rows
                       on SQLite and Postgres, run as its own process;
                       pages: bench/pages.ts, issue 25: every list and by-id route
                       through the built CLI's serve against hand-written routes,
                       and the 304 path, at scale 20,000 (about 20 min for both
                       backends; a plain run measures users and company only,
                       about 4 min); its own options: --help there;
                       soak: bench/soak.ts, issue 21's memory soak, only with --only,
                       --minutes per backend on SQLite and Postgres, the built CLI's serve;
                       deliveries: bench/webhook-fairness.ts, issue 21's delivery fairness
                       with hanging and failing endpoints, only with --only, 3 min per mode,
                       5 modes on SQLite and Postgres; its own options: --help there;
                       cold-start: bench/cold-start.ts, issue 21's writes to a fresh instance
                       on Postgres, serve vs an unwarmed pool, only with --only; --help there)
  --backends <list>    pages: sqlite, postgres or both, comma-separated  [sqlite,postgres]
  --minutes <n>        soak: minutes of load per backend (more: npx tsx bench/soak.ts --help) [10]
  --profile            also write a CPU profile of the plugin server and summarise it
                       (pages: serve's CPU per request by corridor stage)
  --cache-dir <dir>    where seeded SQLite files are cached  [$TMPDIR/fastify-workforce-api-bench]
  --rebuild            reseed the cached file for this scale
  --json <file>        also write every figure as JSON
  --help`

export interface BenchOptions {
  scale: number
  companies: number[]
  durationS: number
  warmupS: number
  rounds: number
  connections: number
  perPage: number
  keyTimeMs: number
  http: boolean
  keys: boolean
  contention: boolean
  /** bench/scale.ts: lists at 1,000,000 rows (its own options: npx tsx bench/scale.ts --help). */
  lists: boolean
  /** bench/pages.ts: serve against hand-written routes, and the 304 path (issue 25). */
  pages: boolean
  /** Only `users` and `company` (a plain run); `--only pages` measures every route. */
  pagesQuick: boolean
  /** pages: the backends, comma-separated as given. */
  backends: string
  /** bench/soak.ts: `serve`'s RSS under a mixed load; only when asked for (`--only soak`), it takes 20 minutes. */
  soak: boolean
  /** bench/webhook-fairness.ts: hanging and failing endpoints against healthy ones; only when asked for (`--only deliveries`), it takes about 40 minutes. */
  deliveries: boolean
  /** bench/cold-start.ts: writes the moment a fresh `serve` listens on Postgres, against an unwarmed pool; only when asked for (`--only cold-start`). */
  coldStart: boolean
  soakMinutes: number
  profile: boolean
  cacheDir: string
  rebuild: boolean
  json: string | undefined
  help: boolean
}

const PARTS = ['http', 'keys', 'contention', 'lists', 'pages', 'soak', 'deliveries', 'cold-start']

/** Parses `process.argv`; throws a `TypeError` naming the option on a bad value. */
export function parseBenchOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      scale: { type: 'string', default: '100000' },
      companies: { type: 'string', default: '1,2' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '2' },
      connections: { type: 'string', default: '20' },
      'per-page': { type: 'string', default: '25' },
      'key-time': { type: 'string', default: '1000' },
      only: { type: 'string' },
      minutes: { type: 'string', default: '10' },
      backends: { type: 'string', default: 'sqlite,postgres' },
      profile: { type: 'boolean', default: false },
      'cache-dir': { type: 'string', default: join(tmpdir(), 'fastify-workforce-api-bench') },
      rebuild: { type: 'boolean', default: false },
      json: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.only !== undefined && !PARTS.includes(values.only)) {
    throw new TypeError('--only must be "http", "keys", "contention", "lists", "pages", "soak", "deliveries" or "cold-start"')
  }
  return {
    scale: integer('--scale', values.scale, 40),
    companies: values.companies.split(',').map((id) => integer('--companies', id.trim(), 1)),
    durationS: integer('--duration', values.duration, 1),
    warmupS: integer('--warmup', values.warmup, 0),
    rounds: integer('--rounds', values.rounds, 1),
    connections: integer('--connections', values.connections, 1),
    perPage: integer('--per-page', values['per-page'], 1, 100),
    keyTimeMs: integer('--key-time', values['key-time'], 10),
    http: values.only === undefined || values.only === 'http',
    keys: values.only === undefined || values.only === 'keys',
    contention: values.only === undefined || values.only === 'contention',
    lists: values.only === undefined || values.only === 'lists',
    pages: values.only === undefined || values.only === 'pages',
    pagesQuick: values.only === undefined,
    backends: values.backends,
    soak: values.only === 'soak',
    deliveries: values.only === 'deliveries',
    coldStart: values.only === 'cold-start',
    soakMinutes: integer('--minutes', values.minutes, 1, 120),
    profile: values.profile,
    cacheDir: values['cache-dir'],
    rebuild: values.rebuild,
    json: values.json,
    help: values.help,
  }
}

/** An integer option's value, or a TypeError naming the option: the benches share it. */
export function integer(name: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new TypeError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`)
  }
  return value
}
