import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killed, spawnUntil } from '../helpers/child-process.js'
import { checkedFetch } from '../helpers/checked-fetch.js'
import { eventually } from '../helpers/eventually.js'
import { CLI, lastJson } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'

/**
 * A real Prometheus (Debian's `prometheus` package) scraping two `workforce-api serve --metrics`
 * instances over one SQLite file, as an operator would run them: the figures it answers must
 * be the traffic sent to each. Without the binary the suite is skipped with a notice; under
 * CI=true it fails instead.
 */
const PROMETHEUS = process.env.WORKFORCE_TEST_PROMETHEUS ?? '/usr/bin/prometheus'
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false' && process.env.CI !== '0'
const HOW_TO_ENABLE = `install Debian's prometheus package (or set WORKFORCE_TEST_PROMETHEUS to its binary) to run it`
const available = existsSync(PROMETHEUS)
const run = promisify(execFile)
/** How long Prometheus gets to scrape what was sent (1 s scrapes; a loaded machine is slower). */
const SCRAPED_WITHIN_MS = 30_000
/** Prometheus and its readiness are asked every this many ms while a test waits for a scrape. */
const POLL_MS = 200

if (!available) {
  if (inCi) {
    describe('metrics scraped by a real Prometheus', () => {
      it('needs the prometheus binary under CI', () => {
        throw new Error(`${PROMETHEUS} is missing and CI=true: ${HOW_TO_ENABLE}`)
      })
    })
  } else {
    console.warn(`[prometheus] skipping "metrics scraped by a real Prometheus": ${PROMETHEUS} is missing; ${HOW_TO_ENABLE}`)
  }
}

describe.skipIf(!available)('metrics scraped by a real Prometheus', () => {
  let dir: string
  let key: string
  const servers: { child: ChildProcess; url: string; target: string }[] = []
  let prometheus: ChildProcess | undefined
  let prometheusUrl: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wfa-prometheus-'))
    const db = join(dir, 'workforce.db')
    await run(process.execPath, [CLI, 'seed', '--db', db])
    key = lastJson((await run(process.execPath, [CLI, 'keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--json'])).stdout).key
    // Two instances over the same database, as behind a load balancer.
    for (let i = 0; i < 2; i += 1) {
      const env = { ...process.env, LOG_LEVEL: 'error' }
      const { child, match } = await spawnUntil('serve', process.execPath, [CLI, 'serve', '--db', db, '--port', '0', '--metrics', '--no-dispatcher'], {
        env,
        until: /listening on (http:\/\/(\S+))/,
      })
      servers.push({ child, url: match[1] as string, target: match[2] as string })
    }
    const port = await freePort()
    prometheusUrl = `http://127.0.0.1:${port}`
    const config = join(dir, 'prometheus.yml')
    await writeFile(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        '  scrape_timeout: 1s',
        'scrape_configs:',
        '  - job_name: workforce',
        '    metrics_path: /metrics',
        '    static_configs:',
        `      - targets: [${servers.map(({ target }) => `'${target}'`).join(', ')}]`,
        '',
      ].join('\n'),
    )
    prometheus = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let output = ''
    prometheus.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    await eventually(async () => {
      if (prometheus?.exitCode !== null) throw new Error(`prometheus exited with ${prometheus?.exitCode}: ${output}`)
      const ready = await fetch(`${prometheusUrl}/-/ready`).catch(() => undefined)
      return ready?.status === 200
    }, 20_000, POLL_MS)
  })

  afterAll(async () => {
    // Ours only, by PID: Prometheus first (it would scrape the servers going away), then the servers.
    const running = prometheus
    if (running?.pid !== undefined && running.exitCode === null && running.signalCode === null) {
      const exited = new Promise((resolve) => running.once('exit', resolve))
      process.kill(running.pid, 'SIGTERM')
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))])
      if (running.exitCode === null && running.signalCode === null) await killed(running)
    }
    for (const { child } of servers.splice(0)) await killed(child)
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  /** The one value of an instant PromQL query, or undefined while it has none. */
  async function query(promql: string): Promise<number | undefined> {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`)
    const body = (await response.json()) as { status: string; data: { result: { value: [number, string] }[] } }
    expect(body.status, promql).toBe('success')
    const [first] = body.data.result
    return first === undefined ? undefined : Number(first.value[1])
  }

  /** Polls `promql` until it answers `expected` (bounded), and says what it answered last if it never does. */
  async function expectQuery(promql: string, expected: number): Promise<void> {
    let last: number | undefined
    await eventually(async () => (last = await query(promql)) === expected, SCRAPED_WITHIN_MS, POLL_MS).catch(() => {
      throw new Error(`${promql} answered ${last}, expected ${expected}`)
    })
  }

  it('answers PromQL with the traffic each instance served, by route template and status', async () => {
    const [a, b] = servers as [(typeof servers)[number], (typeof servers)[number]]
    const get = async (url: string, path: string, auth: string) => (await checkedFetch(`${url}/api/public/v1${path}`, { headers: { 'x-api-key': auth } })).status
    const badKey = 'owk_' + 'a'.repeat(12) + '_' + 'b'.repeat(32)
    // Instance a: 5 reads, 3 refused keys; instance b: 2 reads, 4 refused keys.
    const sent = [
      { server: a, ok: 5, refused: 3 },
      { server: b, ok: 2, refused: 4 },
    ]
    // One of each first, scraped before the rest: a series Prometheus first sees after all the
    // traffic has no increase in it, and the documented rate() queries need one.
    for (const { server } of sent) {
      expect(await get(server.url, '/users', key)).toBe(200)
      expect(await get(server.url, '/users', badKey)).toBe(401)
    }
    await expectQuery('sum(workforce_http_requests_total{route="/api/public/v1/users"})', 4)
    for (const { server, ok, refused } of sent) {
      for (let i = 1; i < ok; i += 1) expect(await get(server.url, '/users', key)).toBe(200)
      for (let i = 1; i < refused; i += 1) expect(await get(server.url, '/users', badKey)).toBe(401)
    }

    await expectQuery('count(up{job="workforce"} == 1)', 2)
    await expectQuery('sum(workforce_http_requests_total{status="200"})', 7)
    await expectQuery('sum(workforce_http_requests_total{route="/api/public/v1/users",status="401"})', 7)
    await expectQuery(`sum(workforce_http_requests_total{instance="${a.target}",status="401"})`, 3)
    await expectQuery(`sum(workforce_http_requests_total{instance="${b.target}",status="401"})`, 4)
    await expectQuery('sum(workforce_http_request_duration_seconds_count{route="/api/public/v1/users"})', 14)
    // The documented p99 query answers a latency (seconds) once two scrapes saw the traffic.
    const p99 = await eventually(
      async () => finite(await query('histogram_quantile(0.99, sum by (le, route) (rate(workforce_http_request_duration_seconds_bucket{route="/api/public/v1/users"}[1m])))')),
      SCRAPED_WITHIN_MS,
      POLL_MS,
    )
    expect(p99).toBeGreaterThan(0)
    expect(p99).toBeLessThan(10)
    // Node's process metrics come under our prefix, one series per instance.
    await expectQuery('count(workforce_process_resident_memory_bytes)', 2)
    // Label values are bounded: routes are templates, never a raw path.
    const labels = (await (await fetch(`${prometheusUrl}/api/v1/label/route/values`)).json()) as { data: string[] }
    for (const route of labels.data) expect(route).toMatch(/^(\/api\/public\/v1\/[a-z_/:-]+|<unmatched>)$/)
   }, 120_000)

  it('each instance answers GET /metrics itself, in the text exposition format', async () => {
    const response = await fetch(`${(servers[0] as { url: string }).url}/metrics`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await response.text()
    expect(text).toContain('# TYPE workforce_http_request_duration_seconds histogram')
    expect(text).toContain('# TYPE workforce_sqlite_read_queue_depth gauge')
    expect(text).toContain('# TYPE workforce_webhook_backlog_deliveries gauge')
  })
})

/** `value` unless it is NaN (a quantile of no increase). */
function finite(value: number | undefined): number | undefined {
  return value === undefined || Number.isNaN(value) ? undefined : value
}
