import autocannon, { type Result } from 'autocannon'

export interface StatusLoadOptions {
  url: string
  headers: Record<string, string>
  connections: number
  /** Seconds. */
  durationS: number
  /** The one status every response must have: 200, or 304 for the conditional path. */
  expectStatus: number
}

export interface StatusLoadResult {
  /** Responses with the expected status. */
  requests: number
  durationS: number
  requestsPerSecond: number
  /** Milliseconds, exact percentiles of every expected response's time. */
  latency: { p50: number; p99: number }
  /** Everything else: other statuses, connection errors, timeouts. */
  failures: number
  /** The first unexpected status seen, for the error message. */
  unexpectedStatus?: number
}

/**
 * Loads one URL with autocannon on loopback (one request in flight per connection) and counts
 * the responses of one status. bench/load-round.ts counts 2xx only, and a 304 is not one.
 */
export function runStatusLoad(options: StatusLoadOptions): Promise<StatusLoadResult> {
  return new Promise((resolve, reject) => {
    const times: number[] = []
    let unexpected = 0
    let unexpectedStatus: number | undefined
    const instance = autocannon(
      { url: options.url, headers: options.headers, connections: options.connections, duration: options.durationS, pipelining: 1 },
      (error: Error | null, result: Result) => {
        if (error !== null) return reject(error)
        const sorted = Float64Array.from(times).sort()
        resolve({
          requests: sorted.length,
          durationS: result.duration,
          requestsPerSecond: sorted.length / result.duration,
          latency: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) },
          failures: unexpected + result.errors + result.timeouts,
          ...(unexpectedStatus === undefined ? {} : { unexpectedStatus }),
        })
      },
    )
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode === options.expectStatus) times.push(responseTime)
      else {
        unexpected += 1
        unexpectedStatus ??= statusCode
      }
    })
  })
}

/** Nearest-rank percentile of an ascending sample. */
function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] as number
}
