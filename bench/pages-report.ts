import { STAGE_NAMES } from './pages-stages.js'

/** The issue's goals: serve ≥ 1.0 × the hand-written route; the 304 path ≥ 3 × the 200 path. */
export const SERVE_GOAL = 1
export const NOT_MODIFIED_GOAL = 3

export type Backend = 'sqlite' | 'postgres'

/** One route of one company, as each server spells it. */
export interface Route {
  company: number
  /** `users`, `users/:id`, `company`. */
  label: string
  servePath: string
  baselinePath: string
  /** The key of `company`. */
  headers: Record<string, string>
  /** The ETag of serve's 200, when it sends one. */
  etag: string | undefined
  /** Why there is no 304 row: "no ETag", or what serve answered instead of 304. */
  no304?: string
  /** Rows in the route's answer (`pagination.total`, or 1). */
  total: number
}

export type Path = 'serve' | 'baseline' | 'serve-304'

export interface Measurement {
  backend: Backend
  company: number
  route: string
  path: Path
  round: number
  requestsPerSecond: number
  p50: number
  p99: number
  requests: number
  /** The server process's CPU (all threads) per response, µs. */
  cpuMicros: number
  /** Its main thread's. */
  mainMicros: number
  /** The database's backends' CPU per response (Postgres only), µs. */
  pgMicros: number | undefined
  loadAverage: number
}

export interface StageRow {
  backend: Backend
  company: number
  route: string
  path: Path
  requestsPerSecond: number
  /** µs per request, by stage of the main thread, then off the main thread and in Postgres. */
  stages: Record<string, number>
  /** The main thread's CPU per request in the unprofiled rounds, which the stages add up to. */
  mainMicros: number
  /** The same while profiled. */
  profiledMainMicros: number
  offMainMicros: number
  pgMicros: number | undefined
  topSources: Array<[string, number]>
}

export function ratioTable(backend: Backend, routes: Route[], measurements: Measurement[]): string {
  const rows = routes.map((route) => {
    const of = (path: Path) => measurements.filter((m) => m.backend === backend && m.company === route.company && m.route === route.label && m.path === path)
    const serve = of('serve')
    const baseline = of('baseline')
    const notModified = of('serve-304')
    const ratio = pooled(serve) / pooled(baseline)
    const pairs = serve.map((m, i) => m.requestsPerSecond / (baseline[i] as Measurement).requestsPerSecond)
    // Server (and Postgres) CPU per response, pooled over the rounds: steadier than req/s on a busy machine.
    const cpu = (ms: Measurement[]) => ms.reduce((n, m) => n + (m.cpuMicros + (m.pgMicros ?? 0)) * m.requests, 0) / ms.reduce((n, m) => n + m.requests, 0)
    const ratio304 = notModified.length === 0 ? undefined : pooled(notModified) / pooled(serve)
    return [
      String(route.company),
      route.label,
      String(route.total),
      pooled(serve).toFixed(0),
      pooled(baseline).toFixed(0),
      `${ratio.toFixed(2)} × ${ratio >= SERVE_GOAL ? 'ok' : 'BELOW'}`,
      pairs.map((p) => p.toFixed(2)).join(' '),
      `${cpu(serve).toFixed(0)} / ${cpu(baseline).toFixed(0)}`,
      `${(cpu(baseline) / cpu(serve)).toFixed(2)} ×`,
      ratio304 === undefined ? (route.no304 ?? 'no ETag') : pooled(notModified).toFixed(0),
      ratio304 === undefined ? '' : `${ratio304.toFixed(2)} × ${ratio304 >= NOT_MODIFIED_GOAL ? 'ok' : 'BELOW'}`,
    ]
  })
  const loads = measurements.filter((m) => m.backend === backend).map((m) => m.loadAverage)
  return [
    `${backend}: serve (default options) against the hand-written route; goals: serve/baseline ≥ ${SERVE_GOAL} ×, 304/200 ≥ ${NOT_MODIFIED_GOAL} ×` +
      ` (load average ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)} during rounds)`,
    table(
      ['company', 'route', 'rows', 'serve req/s', 'baseline req/s', 'serve/baseline', 'pairs', `CPU µs/req serve / baseline${backend === 'postgres' ? ' (+ Postgres)' : ''}`, 'by CPU', '304 req/s', '304/200'],
      rows,
    ),
  ].join('\n')
}

function pathSuffix(path: Path): string {
  return path === 'serve-304' ? ' 304' : path === 'baseline' ? ' baseline' : ''
}

export function stageTable(rows: StageRow[]): string {
  const header = ['stage (µs per request)', ...rows.map((r) => `${r.backend} c${r.company} ${r.route}${pathSuffix(r.path)}`)]
  const us = (value: number | undefined) => (value === undefined ? '' : value.toFixed(1))
  const lines = [
    ...STAGE_NAMES.map((name) => [name, ...rows.map((r) => us(r.stages[name]))]),
    ['main thread, all (from /proc, unprofiled rounds)', ...rows.map((r) => us(r.mainMicros))],
    ['main thread while profiled', ...rows.map((r) => us(r.profiledMainMicros))],
    ['off the main thread (read workers, GC helpers, libuv)', ...rows.map((r) => us(r.offMainMicros))],
    ['Postgres backends', ...rows.map((r) => us(r.pgMicros))],
    ['req/s while profiled', ...rows.map((r) => r.requestsPerSecond.toFixed(0))],
  ]
  const sources = rows.map(
    (r) => `${r.backend} c${r.company} ${r.route}${pathSuffix(r.path)}: ${r.topSources.map(([s, m]) => `${s} ${m.toFixed(1)}`).join(', ')}`,
  )
  return [
    'serve and the baseline: CPU per request by corridor stage (each stage\'s share of the main thread\'s samples in a V8 profile × the main thread\'s /proc CPU per request in the unprofiled rounds)',
    table(header, lines),
    'largest sources (self µs/req):',
    ...sources,
  ].join('\n')
}

function pooled(ms: Measurement[]): number {
  return ms.reduce((n, m) => n + m.requests, 0) / ms.reduce((n, m) => n + m.requests / m.requestsPerSecond, 0)
}


function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) => cells.map((cell, i) => (i <= 1 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

