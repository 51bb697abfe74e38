import autocannon, { type Result } from 'autocannon'

export interface LoadOptions {
  url: string
  headers: Record<string, string>
  connections: number
  /** Seconds. */
  durationS: number
}

export interface LoadResult {
  /** Completed 2xx responses. */
  requests: number
  durationS: number
  requestsPerSecond: number
  /** Milliseconds, exact percentiles of every response's time. */
  latency: { p50: number; p99: number; mean: number }
  /** Everything that is not a 2xx answer: connection errors, timeouts, other statuses. */
  failures: number
}

/**
 * Loads one URL with autocannon on loopback, one request in flight per connection.
 *
 * autocannon's own latency histogram keeps whole milliseconds, too coarse for responses of
 * a few milliseconds, so every response's time (sub-millisecond, from `process.hrtime`) is
 * also collected here and the percentiles are computed from the full sample.
 */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const times: number[] = []
    const instance = autocannon(
      {
        url: options.url,
        headers: options.headers,
        connections: options.connections,
        duration: options.durationS,
        pipelining: 1,
      },
      (error: Error | null, result: Result) => {
        if (error !== null) return reject(error)
        resolve(summarise(result, times))
      },
    )
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) times.push(responseTime)
    })
  })
}

function summarise(result: Result, times: number[]): LoadResult {
  const sorted = Float64Array.from(times).sort()
  let sum = 0
  for (const time of sorted) sum += time
  return {
    requests: result['2xx'],
    durationS: result.duration,
    requestsPerSecond: result['2xx'] / result.duration,
    latency: {
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    },
    failures: result.errors + result.timeouts + result.non2xx,
  }
}

/** Nearest-rank percentile of an ascending sample. */
function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))
  return sorted[rank] as number
}
