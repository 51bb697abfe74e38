/**
 * The slice of autocannon 8's programmatic API the benchmark uses. The package ships no
 * types and `@types/autocannon` is not a dependency, so this names only what we call.
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  interface Options {
    url: string
    connections?: number
    /** Seconds. */
    duration?: number
    pipelining?: number
    /** Seconds before a request counts as a timeout. */
    timeout?: number
    headers?: Record<string, string>
  }

  interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    p50: number
    p99: number
  }

  interface Result {
    /** Seconds actually run. */
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    resets: number
    mismatches: number
    '2xx': number
    /** Milliseconds, recorded by autocannon in whole milliseconds (its histogram's resolution). */
    latency: Histogram
    /** Completed requests per one-second sample; `total` is the number completed. */
    requests: Histogram & { sent: number }
    /** Bytes per one-second sample. */
    throughput: Histogram
  }

  interface Instance extends EventEmitter {
    /** `responseTime` is in milliseconds, with sub-millisecond precision (process.hrtime). */
    on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void): this
    on(event: string, listener: (...args: any[]) => void): this
    stop(): void
  }

  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance

  export default autocannon
  export type { Instance, Options, Result }
}
