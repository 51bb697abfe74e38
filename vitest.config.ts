import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * Three projects (docs/decisions.md, "How the suite is run (issue 26)"):
 *
 * - `quick`: in-process tests that need no server, no browser, no packed tarball and no built
 *   CLI. `npm run test:quick` runs only these, for the edit-test loop.
 * - `integration`: the rest that can share the machine: Postgres and Redis suites (each file has
 *   a database of its own), Chromium, the packed package, the built CLI and child servers.
 *   Most of their time is spent waiting on another process, so more files run at once than
 *   there are cores.
 * - `timing`: files that assert how soon something happens (a frozen Postgres answered within a
 *   second, a statement stopped at its timeout, a delivery's deadline). They run after the
 *   others, one file at a time, on a machine nothing else in the suite is loading.
 */
export const TIMING = [
  'test/faults/**/*.test.ts',
  'test/adapters/postgres-guard.postgres.test.ts',
  'test/adapters/postgres-statement-timeout.postgres.test.ts',
  'test/reads/statement-timeout.postgres.test.ts',
  'test/rate-limit/redis-outage.redis.test.ts',
  'test/cli/serve-hardening.test.ts',
  'test/errors/hardening.test.ts',
  'test/webhooks/gc-deadline.test.ts',
  'test/adapters/sqlite-slow-reads.test.ts',
  // Which statements go to a read worker depends on how long they took here.
  'test/adapters/sqlite-read-pool.test.ts',
  // Compares the time of two kinds of request (Mann-Whitney U): other files' load would be noise.
  'test/writes/email-existence.test.ts',
  // Cold random pages at 200,000 rows, each within the statement timeout.
  'test/reads/deep-pages.postgres.test.ts',
  // Every answer within 2 s and none a 5xx: beside three other files on two cores, a statement
  // past the Postgres guard's answer bound starts an outage, and the next requests get 503s.
  'test/attack/fuzz.postgres.test.ts',
]

/**
 * What needs more than this process (a server, a browser, the packed package, the built CLI),
 * and the few in-process files that take minutes.
 */
export const INTEGRATION = [
  '**/*.postgres.test.ts',
  '**/*.redis.test.ts',
  '**/*.browser.test.ts',
  'test/package/**/*.test.ts',
  'test/readme/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/sync-client/cli.test.ts',
  'test/metrics/prometheus.test.ts',
  'test/attack/**/*.test.ts',
  'examples/**/*.test.ts',
  // Serves the built portal (dist/portal).
  'test/admin/portal-headers.test.ts',
  // In-process, but long: whole conformance runs, the admin API suite four times over, and long
  // generated histories.
  'test/conformance/reference.*.test.ts',
  'test/admin/admin-api.test.ts',
  'test/conformance/broken-adapters.test.ts',
  'test/sync-client/divergence.test.ts',
]

const ALL = ['test/**/*.test.ts', 'examples/**/*.test.ts']

/**
 * On another Node line (`scripts/node-line.sh`, as `npm run test:node24` runs the suite), the
 * packed package's test of every line is left out: the run on the Node the project was installed
 * with already installs and serves it on each line.
 */
const ON_ANOTHER_LINE_LEFT_OUT = process.env.WFA_NODE_LINE === undefined ? [] : ['test/package/node-lines.test.ts']

/**
 * CI's run on Node 24 (`npm run test:node24:check`, which sets `WORKFORCE_TEST_LINE_CHECK=1`):
 * what can differ between Node lines, not the whole suite again (docs/decisions.md, "CI's
 * second line: what differs, not everything twice"). The `quick` project whole (the SQLite
 * adapter on the line's better-sqlite3, its worker threads, Intl, crypto, undici, real HTTP),
 * and of the rest only these: the SQLite adapter's whole contract on that native module, the
 * built CLI and the examples started as processes of the line, the README's Quick start as
 * a newcomer on the line runs it, the Postgres driver and a server's signals on the line, and
 * the timing comparison that guards an email's existence (V8's speed decides it). Left out: the
 * Postgres server's own behaviour (plans, timeouts, outages), the browser, the packed package's
 * checks, and files that run the same JavaScript as one of these of the same kind (the admin
 * API suite, the other CLI files, the attack runs). `npm run test:node24` still runs every
 * file there.
 */
const LINE_CHECK = process.env.WORKFORCE_TEST_LINE_CHECK === '1'
export const LINE_CHECK_INTEGRATION = [
  'test/conformance/reference.sqlite.test.ts',
  'test/cli/cli.test.ts',
  'examples/**/*.test.ts',
  'test/readme/quick-start.test.ts',
  'test/writes/writes.postgres.test.ts',
  'test/cli/serve-shutdown.postgres.test.ts',
]
export const LINE_CHECK_TIMING = ['test/writes/email-existence.test.ts']

/**
 * Each file's duration in a full run here (seconds), written by `npm run test:durations`
 * (test/helpers/durations-reporter.ts). Files start longest first in their group, so that none
 * of the long ones starts late and runs on alone after the rest: ordered by size, the Postgres
 * conformance run started last. Vitest keeps past durations of its own, but in `node_modules`,
 * which a fresh clone (CI) does not have: the committed table orders every checkout alike.
 */
const DURATIONS: Record<string, number> = JSON.parse(readFileSync(new URL('./test/durations.json', import.meta.url), 'utf8'))

/** The repository, which `DURATIONS`' paths are relative to. */
const ROOT = fileURLToPath(new URL('./', import.meta.url))

/** What a file missing from `DURATIONS` (a new one) counts as: ahead of every known one. */
const UNKNOWN = 1e9

/** By group, then longest first by `DURATIONS`; files missing from it ahead of the rest, in vitest's own order. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (file: TestSpecification) => DURATIONS[relative(ROOT, file.moduleId)] ?? UNKNOWN
    const group = (file: TestSpecification) => file.project.config.sequence.groupOrder
    return (await super.sort(files)).sort((a, b) => group(a) - group(b) || seconds(b) - seconds(a))
  }
}

/** Files at once in the first group: above the 2 cores of the machines we run on, since most wait. */
const PARALLEL_FILES = Number(process.env.WORKFORCE_TEST_WORKERS ?? 4)

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Fails a test that received an API response the OpenAPI document does not describe.
    setupFiles: ['test/helpers/openapi-setup.ts'],
    // Suites that need Postgres print why they were skipped, or fail under CI=true.
    reporters: ['default'],
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: 'quick', include: ALL, exclude: [...INTEGRATION, ...TIMING], maxWorkers: PARALLEL_FILES, isolate: false } },
      { extends: true, test: { name: 'integration', include: LINE_CHECK ? LINE_CHECK_INTEGRATION : INTEGRATION, exclude: [...TIMING, ...ON_ANOTHER_LINE_LEFT_OUT], maxWorkers: PARALLEL_FILES, isolate: false } },
      { extends: true, test: { name: 'timing', include: LINE_CHECK ? LINE_CHECK_TIMING : TIMING, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
})
