import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { DeliveryBacklog, WebhookStore } from '../ports/webhook-store.js'
import type { Clock } from '../ports/clock.js'

/** Every metric of ours starts with this; Node's process metrics too, when we collect them. */
export const METRIC_PREFIX = 'workforce_'

/**
 * Request-duration buckets, in seconds: from a cached answer (~1 ms) to the request timeout's
 * neighbourhood. A list read is usually 2–50 ms, a write 5–100 ms.
 */
export const HTTP_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * Commit-to-delivery buckets, in seconds: from a delivery on the commit's wake-up (tens of ms)
 * through the first retries (5 s, 5 min) to the retry schedule's hours.
 */
export const DELIVERY_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000]

/** The route label of a request no route matched (a 404 of ours): never the raw path, which may carry ids. */
export const UNMATCHED_ROUTE = '<unmatched>'

/** What a delivery attempt came to, once recorded: the `outcome` label. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed'

/** The storage errors counted by kind: a statement the database stopped (504), or a database that could not answer (503). */
export type StorageErrorKind = 'statement_timeout' | 'unavailable'

/** The counts a pg `Pool` keeps (`pool.totalCount` …), read on each scrape. */
export interface PoolCounts {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
}

/** What the SQLite adapter's read workers tell (`adapter.readPool`), read on each scrape. */
export interface ReadPoolCounts {
  /** Reads waiting for a worker. */
  readonly queued: number
  /** Reads running in a worker. */
  readonly running: number
  /** Live worker threads. */
  readonly threads: number
}

/**
 * The `metrics` option's object form (`metrics: true` is `{}`).
 *
 * @example
 * import { Registry } from 'prom-client'
 * const registry = new Registry()
 * const adapter = await openPostgresAdapter({ connectionString })
 * await app.register(workforceApi, { ...ports, metrics: { registry, pool: adapter.pool } })
 * app.get('/metrics', async (_, reply) => reply.type(registry.contentType).send(await registry.metrics()))
 */
export interface MetricsOptions {
  /**
   * The prom-client registry our metrics are registered on. Default: a registry of our own,
   * `app.workforceApi.metricsRegistry`, which a host merges with its own (`Registry.merge`).
   * Never prom-client's global default registry, unless the host passes it here.
   */
  registry?: Registry
  /** Node's process metrics (`collectDefaultMetrics`) on our registry, named `workforce_process_…`, `workforce_nodejs_…`. Default false. */
  processMetrics?: boolean
  /** A pg pool (the Postgres adapter's `pool`): its connections, idle ones and checkouts waiting, read on each scrape. */
  pool?: PoolCounts
  /** The SQLite adapter's read workers (`readPool`; undefined without workers): their queue, read on each scrape. */
  readPool?: ReadPoolCounts
}

/**
 * The plugin's Prometheus metrics on one registry. Labels are route templates, methods,
 * statuses and outcomes only: never a key, a company or an id, so their number stays bounded
 * whatever the traffic.
 */
export class WorkforceMetrics {
  readonly registry: Registry
  readonly httpRequests: Counter<'route' | 'method' | 'status'>
  readonly httpDuration: Histogram<'route' | 'method' | 'status'>
  readonly rateLimitStoreErrors: Counter
  readonly storageErrors: Counter<'route' | 'kind'>
  readonly deliveries: Counter<'outcome'>
  readonly commitToDelivery: Histogram
  /** The names the host's registry held before ours were added (undefined: the registry is ours). */
  readonly #hostNames: ReadonlySet<string> | undefined

  constructor(options: MetricsOptions) {
    const registry = options.registry ?? new Registry()
    this.registry = registry
    this.#hostNames = options.registry === undefined ? undefined : new Set(registry.getMetricsAsArray().map((metric) => metric.name))
    const registers = [registry]
    this.httpRequests = new Counter({
      name: `${METRIC_PREFIX}http_requests_total`,
      help: 'Requests answered by the API, by route template, method and status.',
      labelNames: ['route', 'method', 'status'],
      registers,
    })
    this.httpDuration = new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'Time from receiving a request to its answer, by route template, method and status.',
      labelNames: ['route', 'method', 'status'],
      buckets: HTTP_DURATION_BUCKETS,
      registers,
    })
    this.rateLimitStoreErrors = new Counter({
      name: `${METRIC_PREFIX}rate_limit_store_errors_total`,
      help: 'Rate-limit counter operations the store (Redis) could not answer; the request was let through uncounted.',
      registers,
    })
    this.storageErrors = new Counter({
      name: `${METRIC_PREFIX}storage_errors_total`,
      help: 'Requests failed by the database: statement_timeout (a statement it stopped, 504) or unavailable (no answer or no connection in time, 503).',
      labelNames: ['route', 'kind'],
      registers,
    })
    this.deliveries = new Counter({
      name: `${METRIC_PREFIX}webhook_deliveries_total`,
      help: 'Webhook attempts recorded by this instance, by outcome: delivered, retry (failed, another attempt scheduled) or failed (no attempt left).',
      labelNames: ['outcome'],
      registers,
    })
    this.commitToDelivery = new Histogram({
      name: `${METRIC_PREFIX}webhook_commit_to_delivery_seconds`,
      help: "Time from an event's created_at to its successful delivery, retries included.",
      buckets: DELIVERY_LATENCY_BUCKETS,
      registers,
    })
    // Start every outcome at 0, so a ratio over them has a value before the first failure.
    for (const outcome of ['delivered', 'retry', 'failed'] satisfies DeliveryOutcome[]) this.deliveries.inc({ outcome }, 0)
    this.rateLimitStoreErrors.inc(0)
    if (options.pool !== undefined) poolGauges(options.pool, registers)
    if (options.readPool !== undefined) readPoolGauges(options.readPool, registers)
    if (options.processMetrics === true) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX })
  }

  /**
   * Takes our metrics off the host's registry (the app is closing), so the registry can take
   * the metrics of an app registered after this one. A registry of our own is left to the GC.
   */
  unregister(): void {
    const before = this.#hostNames
    if (before === undefined) return
    for (const { name } of this.registry.getMetricsAsArray()) {
      if (name.startsWith(METRIC_PREFIX) && !before.has(name)) this.registry.removeSingleMetric(name)
    }
  }

  /** One answered request: `seconds` from its arrival. `route` is the route template, `UNMATCHED_ROUTE` when none matched. */
  observeRequest(route: string, method: string, status: number, seconds: number): void {
    const labels = { route, method, status: String(status) }
    this.httpRequests.inc(labels)
    this.httpDuration.observe(labels, seconds)
  }

  /** One recorded webhook attempt; `payload` is the delivered body, whose `created_at` dates the event. */
  observeDelivery(outcome: DeliveryOutcome, payload: string, deliveredAt: number): void {
    this.deliveries.inc({ outcome })
    if (outcome !== 'delivered') return
    const created = eventCreatedAt(payload)
    if (created !== undefined) this.commitToDelivery.observe(Math.max(0, (deliveredAt - created) / 1000))
  }

  /**
   * The webhook backlog, read from the store on each scrape (a store without `deliveryBacklog`
   * has no such gauges). Deliveries are shared by every instance: each reports the same figure.
   */
  watchBacklog(store: WebhookStore, clock: Clock): void {
    const read = store.deliveryBacklog?.bind(store)
    if (read === undefined) return
    // One read per scrape, shared by the three gauges. A store that cannot answer leaves them
    // as they were rather than failing the whole scrape.
    let pending: Promise<DeliveryBacklog | undefined> | undefined
    const backlog = () =>
      (pending ??= read(new Date(clock.now()))
        .catch(() => undefined)
        .finally(() => queueMicrotask(() => (pending = undefined))))
    scrapedGauges(
      [this.registry],
      [
        [
          'webhook_backlog_deliveries',
          'Pending webhook deliveries (due now, waiting for a retry or in flight), across every instance sharing the store.',
          async () => (await backlog())?.pending,
        ],
        [
          'webhook_due_deliveries',
          'Pending webhook deliveries whose attempt is due now and not yet claimed, across every instance sharing the store.',
          async () => (await backlog())?.due,
        ],
        [
          'webhook_oldest_due_age_seconds',
          'How long the longest-waiting due delivery has been due; 0 when none is.',
          async () => {
            const found = await backlog()
            if (found === undefined) return undefined
            return found.oldestDueAt === null ? 0 : Math.max(0, (clock.now() - found.oldestDueAt.getTime()) / 1000)
          },
        ],
      ],
    )
  }
}

/** The `created_at` of a delivery body (`{"id","type","created_at",…}`), in ms; undefined if it has none. */
function eventCreatedAt(payload: string): number | undefined {
  // The body is ours (rendered at commit); its created_at comes third, near the start.
  const match = /"created_at":"([^"]{1,40})"/.exec(payload.slice(0, 256))
  const at = match === null ? Number.NaN : Date.parse(match[1] as string)
  return Number.isNaN(at) ? undefined : at
}

/**
 * A gauge per `[name, help, read]`, named `workforce_<name>`, set from `read()` on each scrape;
 * a read that answers `undefined` leaves the gauge as it was.
 */
function scrapedGauges(registers: Registry[], gauges: readonly (readonly [name: string, help: string, read: () => number | undefined | Promise<number | undefined>])[]): void {
  for (const [name, help, read] of gauges) {
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      registers,
      async collect() {
        const value = await read()
        if (value !== undefined) this.set(value)
      },
    })
  }
}

function poolGauges(pool: PoolCounts, registers: Registry[]): void {
  scrapedGauges(registers, [
    ['db_pool_connections', 'Connections the Postgres pool holds, idle or checked out.', () => pool.totalCount],
    ['db_pool_idle_connections', 'Connections of the Postgres pool that are idle.', () => pool.idleCount],
    ['db_pool_waiting_requests', 'Checkouts waiting for a connection of the Postgres pool (a full pool).', () => pool.waitingCount],
  ])
}

function readPoolGauges(pool: ReadPoolCounts, registers: Registry[]): void {
  scrapedGauges(registers, [
    ['sqlite_read_queue_depth', 'Reads waiting for a SQLite read worker.', () => pool.queued],
    ['sqlite_read_running', 'Reads running in a SQLite read worker.', () => pool.running],
    ['sqlite_read_workers', 'Live SQLite read worker threads.', () => pool.threads],
  ])
}
