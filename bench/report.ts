import type { SelfTimes } from './cpu-profile.js'
import type { HttpBenchResult, RoundMeasurement } from './http-users.js'
import type { KeyBenchRow } from './key-verification.js'
import type { TargetKind } from './server-protocol.js'

/** The target: the plugin keeps at least this share of the bare route's throughput. */
export const THROUGHPUT_TARGET = 0.85

export interface TargetSummary {
  requestsPerSecond: number
  /** Means of the rounds' percentiles (each round's are exact). */
  p50: number
  p99: number
  serverCpuMicrosPerRequest: number
}

export interface Comparison {
  companyId: number
  total: number
  plugin: TargetSummary
  bare: TargetSummary
  /** Plugin req/s over bare req/s, all rounds pooled. */
  ratio: number
  /** The same ratio within each A/B pair, in round order. */
  pairRatios: number[]
  /** Bare CPU per request over plugin CPU per request: the same question, asked of CPU time. */
  cpuRatio: number
  loadAverages: number[]
}

export function compare(result: HttpBenchResult): Comparison {
  const of = (target: TargetKind) => result.measurements.filter((m) => m.target === target)
  const plugin = summarise(of('plugin'))
  const bare = summarise(of('bare'))
  const rounds = [...new Set(result.measurements.map((m) => m.round))]
  const pairRatios = rounds.map((round) => {
    const pair = (target: TargetKind) => result.measurements.find((m) => m.round === round && m.target === target) as RoundMeasurement
    return pair('plugin').requestsPerSecond / pair('bare').requestsPerSecond
  })
  return {
    companyId: result.companyId,
    total: result.total,
    plugin,
    bare,
    ratio: plugin.requestsPerSecond / bare.requestsPerSecond,
    pairRatios,
    cpuRatio: bare.serverCpuMicrosPerRequest / plugin.serverCpuMicrosPerRequest,
    loadAverages: result.measurements.map((m) => m.loadAverage),
  }
}

function summarise(rounds: RoundMeasurement[]): TargetSummary {
  const requests = sum(rounds.map((m) => m.requests))
  return {
    requestsPerSecond: requests / sum(rounds.map((m) => m.durationS)),
    p50: mean(rounds.map((m) => m.latency.p50)),
    p99: mean(rounds.map((m) => m.latency.p99)),
    serverCpuMicrosPerRequest: sum(rounds.map((m) => m.serverCpuMicrosPerRequest * m.requests)) / requests,
  }
}

export function httpTable(result: HttpBenchResult, comparison: Comparison): string {
  const rows = result.measurements.map((m) => [
    `${m.target} #${m.round}`,
    m.requestsPerSecond.toFixed(0),
    m.latency.p50.toFixed(2),
    m.latency.p99.toFixed(2),
    m.serverCpuMicrosPerRequest.toFixed(0),
    `${(m.serverCpuShare * 100).toFixed(0)} %`,
    `${(m.clientCpuShare * 100).toFixed(0)} %`,
    m.loadAverage.toFixed(2),
  ])
  for (const target of ['plugin', 'bare'] as const) {
    const s = comparison[target]
    rows.push([`${target} (all)`, s.requestsPerSecond.toFixed(0), s.p50.toFixed(2), s.p99.toFixed(2), s.serverCpuMicrosPerRequest.toFixed(0), '', '', ''])
  }
  const verdict = comparison.ratio >= THROUGHPUT_TARGET ? 'meets' : 'BELOW'
  return [
    `GET users, company ${comparison.companyId} (${comparison.total} users, per_page page 1)`,
    table(['target', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'server CPU', 'client CPU', 'load 1m'], rows),
    `ratio plugin/bare: ${percent(comparison.ratio)} of throughput (pairs: ${comparison.pairRatios.map(percent).join(', ')}) — ` +
      `${verdict} the ${percent(THROUGHPUT_TARGET)} target; by server CPU per request: ${percent(comparison.cpuRatio)}`,
  ].join('\n')
}

export function keyTable(rows: KeyBenchRow[]): string {
  return [
    'KeyVerifier.verify (SQLite key store)',
    table(
      ['case', 'ops/s', 'mean µs', 'p99 µs', '± %', 'samples'],
      rows.map((r) => [r.name, r.opsPerSecond.toFixed(0), r.meanMicros.toFixed(2), r.p99Micros.toFixed(2), r.rme.toFixed(2), String(r.samples)]),
    ),
  ].join('\n')
}

export interface ProfiledTarget {
  times: SelfTimes
  /** Server CPU time per request measured over the profiled rounds (process.cpuUsage), µs. */
  cpuMicrosPerRequest: number
}

/**
 * Where the CPU time per request goes, plugin next to bare: both servers sampled over the
 * same measured rounds, so the difference column is the plugin's own cost by place.
 *
 * The profiler's samples are spaced in wall time, so on a busy machine a descheduled server
 * still "spends" time in whatever it was running. Each place's share of the samples is
 * therefore scaled to the CPU time per request the process actually used.
 */
export function profileTable(companyId: number, plugin: ProfiledTarget, bare: ProfiledTarget, top = 15): string {
  const perRequest = (target: ProfiledTarget, map: Map<string, number>, key: string) =>
    ((map.get(key) ?? 0) / target.times.busyMicros) * target.cpuMicrosPerRequest
  const us = (value: number) => value.toFixed(1)

  const places = [...new Set([...plugin.times.places.keys(), ...bare.times.places.keys()])]
    .map((place) => {
      const a = perRequest(plugin, plugin.times.places, place)
      const b = perRequest(bare, bare.times.places, place)
      return { place, a, b, diff: a - b }
    })
    .sort((x, y) => Math.abs(y.diff) - Math.abs(x.diff))
    .slice(0, top)
  const busy = [plugin.cpuMicrosPerRequest, bare.cpuMicrosPerRequest] as const

  const functions = [...plugin.times.functions]
    .sort((x, y) => y[1] - x[1])
    .slice(0, top)
    .map(([name]) => [name, us(perRequest(plugin, plugin.times.functions, name)), us(perRequest(bare, bare.times.functions, name))])

  const own = [...plugin.times.ownFilesInclusive]
    .sort((x, y) => y[1] - x[1])
    .slice(0, top)
    .map(([file]) => [file, us(perRequest(plugin, plugin.times.ownFilesInclusive, file))])

  return [
    `CPU profile, company ${companyId}: server CPU per request by place, µs (measured rounds only; profiling slows both servers)`,
    table(
      ['place (self time)', 'plugin', 'bare', 'plugin − bare'],
      [
        ['all (process.cpuUsage)', us(busy[0]), us(busy[1]), `+${us(busy[0] - busy[1])}`],
        ...places.map((p) => [p.place, us(p.a), us(p.b), `${p.diff >= 0 ? '+' : ''}${us(p.diff)}`]),
      ],
    ),
    table(['plugin function (self time)', 'plugin', 'bare'], functions),
    table(['plugin: own file on the stack (inclusive)', 'µs/req'], own),
  ].join('\n\n')
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)} %`
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0)
}

function mean(values: number[]): number {
  return sum(values) / values.length
}
