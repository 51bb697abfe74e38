import { deepStrictEqual } from 'node:assert/strict'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { runLoad, type LoadResult } from './load-round.js'
import type { TargetKind } from './server-protocol.js'
import { startTarget, type TargetProcess } from './target-process.js'

export interface HttpBenchOptions {
  filename: string
  companyId: number
  perPage: number
  connections: number
  /** Seconds of load per measured round and target. */
  durationS: number
  /** Seconds of unmeasured load before each measured round. */
  warmupS: number
  rounds: number
  /**
   * When set, both servers are CPU-profiled during every measured round and the profiles
   * written here. Sampling costs each server some throughput: read ratios from unprofiled runs.
   */
  profileDir?: string
  log: (line: string) => void
}

export interface RoundMeasurement extends LoadResult {
  target: TargetKind
  round: number
  /** Server CPU time per response, microseconds: less sensitive to a busy machine than req/s. */
  serverCpuMicrosPerRequest: number
  /** Server CPU time over wall time, 1 = one core busy all round. */
  serverCpuShare: number
  /** The same for this process, where autocannon runs: near 1 means the client, not the server, set the pace. */
  clientCpuShare: number
  /** 1-minute load average when the round started. */
  loadAverage: number
  /** The server's `.cpuprofile` of this round, when profiling. */
  profilePath?: string
}

export interface HttpBenchResult {
  companyId: number
  /** `pagination.total` of the compared responses: rows the COUNT visits on every request. */
  total: number
  measurements: RoundMeasurement[]
}

/** Plugin first in every pair: A, B, A, B. */
const ORDER: readonly TargetKind[] = ['plugin', 'bare']

/**
 * `GET /api/public/v1/users` through the plugin versus the bare route over the same file,
 * each server in its own process, loaded in turn (A, B, A, B) by autocannon in this process.
 */
export async function runHttpUsersBench(options: HttpBenchOptions): Promise<HttpBenchResult> {
  const targets: TargetProcess[] = []
  try {
    for (const kind of ORDER) {
      targets.push(await startTarget(kind, { filename: options.filename, companyId: options.companyId, perPage: options.perPage }))
    }
    const [plugin, bare] = targets as [TargetProcess, TargetProcess]
    const total = await checkSameBody(plugin, bare, options.perPage)
    options.log(`http: company ${options.companyId}, ${total} users; plugin pid ${plugin.pid}, bare pid ${bare.pid}; same body checked`)

    const measurements: RoundMeasurement[] = []
    for (let round = 1; round <= options.rounds; round++) {
      for (const target of targets) {
        const load = { url: target.url, headers: target.headers, connections: options.connections }
        if (options.warmupS > 0) await checkedLoad(target, { ...load, durationS: options.warmupS })
        const loadAverage = loadavg()[0] as number
        const profilePath =
          options.profileDir === undefined ? undefined : join(options.profileDir, `${target.kind}-company-${options.companyId}-round-${round}.cpuprofile`)
        if (profilePath !== undefined) await target.startProfile()
        const cpuBefore = await target.cpuMicros()
        const clientBefore = process.cpuUsage()
        const result = await checkedLoad(target, { ...load, durationS: options.durationS })
        const client = process.cpuUsage(clientBefore)
        const cpu = (await target.cpuMicros()) - cpuBefore
        if (profilePath !== undefined) await target.stopProfile(profilePath)
        const measurement: RoundMeasurement = {
          ...result,
          target: target.kind,
          round,
          serverCpuMicrosPerRequest: cpu / result.requests,
          serverCpuShare: cpu / (result.durationS * 1e6),
          clientCpuShare: (client.user + client.system) / (result.durationS * 1e6),
          loadAverage,
          ...(profilePath === undefined ? {} : { profilePath }),
        }
        measurements.push(measurement)
        options.log(
          `http: round ${round} ${target.kind.padEnd(6)} ${result.requestsPerSecond.toFixed(0)} req/s, ` +
            `p50 ${result.latency.p50.toFixed(2)} ms, p99 ${result.latency.p99.toFixed(2)} ms, load ${loadAverage.toFixed(2)}`,
        )
      }
    }
    return { companyId: options.companyId, total, measurements }
  } finally {
    await Promise.all(targets.map((target) => target.close()))
  }
}

async function checkedLoad(target: TargetProcess, load: Parameters<typeof runLoad>[0]): Promise<LoadResult> {
  const result = await runLoad(load)
  if (result.failures > 0 || result.requests === 0) {
    throw new Error(`${target.kind}: ${result.failures} failed requests (errors, timeouts or non-2xx) out of ${result.requests + result.failures}`)
  }
  return result
}

/** Both targets must answer the same bytes' worth of JSON, or the comparison is meaningless. */
async function checkSameBody(plugin: TargetProcess, bare: TargetProcess, perPage: number): Promise<number> {
  const [pluginBody, bareBody] = await Promise.all([plugin, bare].map((target) => fetchJson(target)))
  deepStrictEqual(bareBody, pluginBody, 'the bare route and the plugin answer different JSON')
  const body = pluginBody as { data: unknown[]; pagination: { total: number } }
  if (body.data.length !== Math.min(perPage, body.pagination.total)) {
    throw new Error(`expected a full page of ${perPage} users, got ${body.data.length}`)
  }
  return body.pagination.total
}

async function fetchJson(target: TargetProcess): Promise<unknown> {
  const response = await fetch(target.url, { headers: target.headers })
  if (response.status !== 200) throw new Error(`${target.kind}: GET ${target.url} answered ${response.status}: ${await response.text()}`)
  return response.json()
}
