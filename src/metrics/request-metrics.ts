import type { FastifyInstance } from 'fastify'
import { StatementTimeout, StorageUnavailable } from '../ports/errors.js'
import { UNMATCHED_ROUTE, WorkforceMetrics, type MetricsOptions } from './workforce-metrics.js'

/** The `metrics` option: `true` for our own registry with the defaults, or its object form. */
export type MetricsOption = boolean | MetricsOptions

/** The metrics the option asks for, or undefined when it is off (absent or `false`). */
export function resolveMetrics(option: MetricsOption | undefined): WorkforceMetrics | undefined {
  if (option === undefined || option === false) return undefined
  return new WorkforceMetrics(option === true ? {} : option)
}

/**
 * Counts and times every answer of the API's context, by route template: one `onResponse`
 * hook, so refusals of the corridor's early hooks (401, 403, 429) are counted under the route
 * they were refused on, like the route's own answers. `reply.elapsedTime` is Fastify's own
 * clock of the request; the hooks are callback-style, so the hot path allocates nothing but the
 * labels prom-client hashes. Storage failures are counted in `onError`, which only failures reach.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: WorkforceMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  app.addHook('onError', (request, _reply, error, done) => {
    const kind = error instanceof StatementTimeout ? 'statement_timeout' : error instanceof StorageUnavailable ? 'unavailable' : undefined
    if (kind !== undefined) metrics.storageErrors.inc({ route: request.routeOptions.url ?? UNMATCHED_ROUTE, kind })
    done()
  })
}
