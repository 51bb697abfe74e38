import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import type { MetricsOptions, PoolCounts, ReadPoolCounts } from './workforce-metrics.js'

/** Where `serve --metrics` answers scrapes: outside the API's prefix, beside /health/*. */
export const METRICS_PATH = '/metrics'

/**
 * `serve --metrics`'s `metrics` option for the adapter it opened: Node's process metrics, and
 * the adapter's connections — a Postgres adapter's `pool`, a SQLite adapter's `readPool`.
 */
export function serveMetricsOptions(adapter: object): MetricsOptions {
  const { pool, readPool } = adapter as { pool?: PoolCounts; readPool?: ReadPoolCounts }
  return {
    processMetrics: true,
    ...(pool === undefined ? {} : { pool }),
    ...(readPool === undefined ? {} : { readPool }),
  }
}

/** `GET /metrics` on `app` (the whole server, not the API's context): `registry` in the text exposition format. */
export function registerMetricsRoute(app: FastifyInstance, registry: Registry): void {
  app.get(METRICS_PATH, async (_request, reply) => {
    const text = await registry.metrics()
    return reply.type(registry.contentType).header('cache-control', 'no-store').send(text)
  })
}
