import Fastify from 'fastify'
import { CONTRACT_RESOURCES } from '../api/index.js'
import { DEFAULT_RATE_LIMIT_MAX, DEFAULT_RATE_LIMIT_WINDOW_MS } from '../corridor/rate-limit.js'
import { handleError, handleNotFound } from '../corridor/render.js'
import { WorkforceOptionError } from '../errors.js'
import { LOG_REDACT_PATHS } from '../logging.js'
import type { WebhookOptions } from '../options.js'
import { workforceApi } from '../plugin.js'
import { portsOf } from '../ports/index.js'
import type { ResourceReader, SeekableReader, Storage } from '../ports/storage.js'
import { registerHealthRoutes, workforceReadiness } from '../server/health.js'
import { OneLineRequestLog } from '../server/request-log.js'
import { DEFAULT_SERVER_LIMITS, hardenWorkforceServer, workforceServerOptions, type ServerLimits } from '../server/server-limits.js'
import { DEFAULT_RETRY_SCHEDULE_MS, parseRetrySchedule } from '../webhooks/retry.js'
import { DB_FLAG, durationFlag, parseFlags, positiveInteger, required } from './flags.js'
import { DB_EXISTING_FLAG, formatDuration, NOT_MIGRATED_NOTE, usageText, type HelpTopic } from './help-format.js'
import { CliError, openAdapter } from './open-adapter.js'
import { noteTo, type CliOutput } from './output.js'
import { METRICS_PATH, registerMetricsRoute, serveMetricsOptions } from '../metrics/metrics-route.js'
import { checkListenAddress, hostPort, listenRefusal } from './listen-address.js'
import { hasReferencePageRenderer, REFERENCE_PAGE_OFF, registerReferencePageHint, SERVE_PREFIX } from './reference-page.js'
import { resolveWebhookKeyLater, usesKeyFile, WEBHOOK_KEY_HOW_TO_SET, type PendingWebhookKey } from './webhook-key.js'

export const DEFAULT_PORT = 3000
export const DEFAULT_HOST = '127.0.0.1'
/** How long `serve` lets in-flight requests finish after SIGTERM or SIGINT. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000

export const SERVE_HELP: HelpTopic = {
  usage: ['workforce-api serve --db <file|postgres-url> [--port N] [--host H] [flags]'],
  summary:
    'Serves the API at /api/public/v1 (and /health/live, /health/ready, and the reference page at /api/public/docs when the ' +
    `optional @fastify/swagger-ui is installed) until SIGINT or SIGTERM. ${NOT_MIGRATED_NOTE}`,
  flags: [
    DB_EXISTING_FLAG,
    ['--port <n>', `port to listen on; 0 picks a free one (default ${DEFAULT_PORT})`],
    ['--host <host>', `address to listen on (default ${DEFAULT_HOST})`],
    ['--redis <url>', 'share rate-limit counters between instances through Redis (redis:// or rediss://)'],
    ['--rate-limit <n>', `requests per key per window, for keys without their own (default ${DEFAULT_RATE_LIMIT_MAX})`],
    ['--rate-limit-window <d>', `the rate-limit window (default ${formatDuration(DEFAULT_RATE_LIMIT_WINDOW_MS)})`],
    ['--request-timeout <d>', `longest a request may take (default ${formatDuration(DEFAULT_SERVER_LIMITS.requestTimeoutMs)})`],
    ['--headers-timeout <d>', `longest to receive a request's headers (default ${formatDuration(DEFAULT_SERVER_LIMITS.headersTimeoutMs)})`],
    ['--keep-alive-timeout <d>', `an idle keep-alive connection closes after (default ${formatDuration(DEFAULT_SERVER_LIMITS.keepAliveTimeoutMs)})`],
    ['--socket-timeout <d>', `an inactive socket closes after (default ${formatDuration(DEFAULT_SERVER_LIMITS.socketTimeoutMs)})`],
    ['--max-connections <n>', `open connections at most (default ${DEFAULT_SERVER_LIMITS.maxConnections})`],
    ['--shutdown-timeout <d>', `after SIGTERM or SIGINT, how long in-flight requests may finish (default ${formatDuration(DEFAULT_SHUTDOWN_TIMEOUT_MS)})`],
    ['--allow-private-webhooks', 'deliver to http:// and private addresses (development only)'],
    ['--webhook-retry-schedule <list>', `delays between delivery attempts (default ${DEFAULT_RETRY_SCHEDULE_MS.map(formatDuration).join(',')})`],
    ['--no-dispatcher', 'serve the API only; other instances deliver webhooks'],
    ['--answer-cache <bytes>', 'bytes of unchanged list and by-id answers kept in memory; 0 keeps none (default 33554432, 32 MiB)'],
    ['--metrics', `Prometheus metrics at GET ${METRICS_PATH} on the same port, outside the API's prefix (docs/deployment.md, "Metrics")`],
  ],
  sections: [
    { heading: 'durations', lines: ['<d> is a whole number with a unit: 500ms, 10s, 5m, 2h.'] },
    {
      heading: 'environment',
      lines: ['LOG_LEVEL      pino log level (default info)', 'WORKFORCE_WEBHOOK_KEY  seals webhook signing secrets (see workforce-api webhooks --help)'],
    },
  ],
  examples: [
    'workforce-api serve --db demo.db --port 8080',
    'workforce-api serve --db postgres://app@db.internal/workforce --host 0.0.0.0 --redis redis://cache:6379',
  ],
}

/** Starts a server; resolves with a `close()` once it listens (the CLI keeps it open until a signal). */
export async function serve(args: string[], out: CliOutput): Promise<{ url: string; close(): Promise<void> }> {
  const usage = usageText('serve', SERVE_HELP)
  const flags = parseFlags(
    args,
    {
      ...DB_FLAG,
      port: { type: 'string' },
      host: { type: 'string' },
      'request-timeout': { type: 'string' },
      'headers-timeout': { type: 'string' },
      'keep-alive-timeout': { type: 'string' },
      'socket-timeout': { type: 'string' },
      'max-connections': { type: 'string' },
      redis: { type: 'string' },
      'rate-limit': { type: 'string' },
      'rate-limit-window': { type: 'string' },
      'shutdown-timeout': { type: 'string' },
      'allow-private-webhooks': { type: 'boolean' },
      'webhook-retry-schedule': { type: 'string' },
      'no-dispatcher': { type: 'boolean' },
      'answer-cache': { type: 'string' },
      metrics: { type: 'boolean' },
    },
    usage,
  )
  const db = required(flags.db, 'db', usage)
  const port = flags.port === undefined ? DEFAULT_PORT : Number(flags.port)
  if (flags.port !== undefined && (!/^\d+$/.test(flags.port) || port > 65_535)) {
    throw new CliError(`--port must be an integer from 0 to 65535, got "${flags.port}"`, 2)
  }
  const limits: Partial<ServerLimits> = {}
  if (flags['request-timeout'] !== undefined) limits.requestTimeoutMs = durationFlag(flags['request-timeout'], 'request-timeout')
  if (flags['headers-timeout'] !== undefined) limits.headersTimeoutMs = durationFlag(flags['headers-timeout'], 'headers-timeout')
  if (flags['keep-alive-timeout'] !== undefined) limits.keepAliveTimeoutMs = durationFlag(flags['keep-alive-timeout'], 'keep-alive-timeout')
  if (flags['socket-timeout'] !== undefined) limits.socketTimeoutMs = durationFlag(flags['socket-timeout'], 'socket-timeout')
  if (flags['max-connections'] !== undefined) limits.maxConnections = positiveInteger(flags['max-connections'], 'max-connections')
  if (flags.redis !== undefined && !/^rediss?:\/\//.test(flags.redis)) throw new CliError(`--redis must be a redis:// URL, got "${flags.redis}"`, 2)
  const rateLimit = {
    ...(flags['rate-limit'] === undefined ? {} : { max: positiveInteger(flags['rate-limit'], 'rate-limit') }),
    ...(flags['rate-limit-window'] === undefined ? {} : { timeWindow: durationFlag(flags['rate-limit-window'], 'rate-limit-window') }),
    ...(flags.redis === undefined ? {} : { redis: flags.redis }),
  }
  const answerCache = flags['answer-cache']
  if (answerCache !== undefined && !/^\d{1,15}$/.test(answerCache)) throw new CliError(`--answer-cache must be a whole number of bytes, got "${answerCache}"`, 2)
  const shutdownMs = flags['shutdown-timeout'] === undefined ? DEFAULT_SHUTDOWN_TIMEOUT_MS : durationFlag(flags['shutdown-timeout'], 'shutdown-timeout')
  const retrySchedule = retryScheduleFlag(flags['webhook-retry-schedule'])
  const host = flags.host ?? DEFAULT_HOST
  // A port in use or a --host that is not this machine's is refused before anything is opened.
  await checkListenAddress(host, port)
  // A bad WORKFORCE_WEBHOOK_KEY is refused before anything is opened; the key file beside a
  // SQLite database is read only once the database is known to be ours, and a new one is
  // written only once the server listens, so a serve that fails leaves none behind.
  const early = usesKeyFile(db) ? undefined : resolveWebhookKeyLater(db)
  const referencePage = await hasReferencePageRenderer()
  const adapter = await openAdapter(db, { readWorkers: true })
  const app = Fastify({
    logger: { level: process.env.LOG_LEVEL ?? 'info', redact: LOG_REDACT_PATHS },
    logController: new OneLineRequestLog(),
    ...workforceServerOptions(limits),
  })
  let webhookOptions: ReturnType<typeof serveWebhookOptions>
  try {
    const resolved = early !== undefined ? early : resolveWebhookKeyLater(db)
    webhookOptions = serveWebhookOptions(resolved, retrySchedule, flags, out)
    // This process owns the whole URL space: answer outside the prefix in the envelope too.
    hardenWorkforceServer(app, limits)
    app.setNotFoundHandler(handleNotFound)
    app.setErrorHandler(handleError)
    registerHealthRoutes(app, () => workforceReadiness(adapter))
    await app.register(workforceApi, {
      prefix: SERVE_PREFIX,
      ...portsOf(adapter),
      rateLimit,
      webhookOptions,
      openapi: { referencePage },
      ...(answerCache === undefined ? {} : { answerCacheBytes: Number(answerCache) }),
      ...(flags.metrics === true ? { metrics: serveMetricsOptions(adapter) } : {}),
    })
    const registry = app.workforceApi.metricsRegistry
    if (registry !== null) registerMetricsRoute(app, registry)
    if (!referencePage) registerReferencePageHint(app)
    await app.ready()
    // Connections first, traffic second: until `listen`, /health/ready cannot answer at all,
    // and the first burst of requests finds the pool's connections open instead of queueing
    // behind their handshakes (and 503ing past the acquire timeout).
    await warmUp(adapter, out)
    await warmLists(adapter.storage)
    await app.listen({ port, host }).catch((error: unknown) => {
      throw listenRefusal(error, host, port) ?? error
    })
    if (resolved?.save !== undefined) {
      const saved = resolved.save()
      if (saved.note !== undefined) noteTo(out, saved.note)
    }
  } catch (error) {
    await app.close()
    await adapter.close()
    // An option the plugin refuses (a retry schedule too long, say) is the operator's to fix.
    if (error instanceof WorkforceOptionError) throw new CliError(error.message, 2)
    throw error
  }
  const address = app.server.address()
  const actualPort = typeof address === 'object' && address !== null ? address.port : port
  const url = `http://${hostPort(host, actualPort)}`
  out.line(`workforce-api listening on ${url} (API at ${url}${SERVE_PREFIX}/v1)`)
  if (referencePage) out.line(`API reference: ${url}${SERVE_PREFIX}/docs (OpenAPI document: ${url}${SERVE_PREFIX}/openapi.json)`)
  else noteTo(out, REFERENCE_PAGE_OFF)
  if (flags.metrics === true) out.line(`metrics: ${url}${METRICS_PATH}`)
  if (webhookOptions.secretKey !== undefined && adapter.webhooks !== undefined) {
    out.line(webhookOptions.dispatcher ? 'webhooks: this instance delivers events' : 'webhooks: not delivered by this instance (--no-dispatcher)')
  }
  return {
    url,
    // Graceful: stop accepting, let in-flight requests finish (closing idle connections at
    // once), and past the bound cut what is left; then Redis (onClose) and the database.
    async close() {
      const force = setTimeout(() => app.server.closeAllConnections(), shutdownMs)
      force.unref()
      try {
        await app.close()
      } finally {
        clearTimeout(force)
        await adapter.close()
      }
    },
  }
}

/** Opens a pooled adapter's connections (Postgres' `warmUp()`); an adapter without a pool has nothing to open. */
async function warmUp(adapter: object, out: CliOutput): Promise<void> {
  const { warmUp: open, pool } = adapter as { warmUp?: () => Promise<number>; pool?: { options?: { min?: number } } }
  if (typeof open !== 'function') return
  const opened = await open.call(adapter)
  const wanted = pool?.options?.min ?? opened
  if (opened < wanted) noteTo(out, `opened ${opened} of ${wanted} database connections before listening; the rest open on demand`)
}

/** No company has this id: reads for it find nothing, at the cost of compiling and planning their statements. */
const NO_COMPANY = 0

/**
 * Runs each list's unfiltered count and first page once for a company that does not exist, so
 * the first real request of each list does not pay for building its statements and, on a pooled
 * database, for the server parsing them (issue 22: the cold first page). Failures are ignored:
 * the requests themselves will report a database that cannot answer.
 */
async function warmLists(storage: Storage): Promise<void> {
  // The readers the API's resources declare (`CONTRACT_RESOURCES`), not a list of our own.
  const readers = CONTRACT_RESOURCES.flatMap((resource): ResourceReader<unknown, object>[] => (resource.list === undefined ? [] : [resource.list.reader(storage) as ResourceReader<unknown, object>]))
  await Promise.all(
    readers.map(async (reader) => {
      const seek = reader.seek as SeekableReader<unknown, object> | undefined
      if (seek === undefined) return
      await seek.count(NO_COMPANY, {}).catch(() => undefined)
      await seek.page(NO_COMPANY, {}, { after: 0, skip: 0, limit: 1 }).catch(() => undefined)
    }),
  )
}

/**
 * `serve`'s webhook settings. The secret key is resolved as `webhooks` commands resolve it, so
 * this instance opens the secrets they sealed. A Postgres database without
 * `WORKFORCE_WEBHOOK_KEY` still serves the API (events are recorded, not delivered): webhooks
 * are optional, and `serve` on Postgres ran without a key before they existed.
 */
function serveWebhookOptions(
  resolved: PendingWebhookKey | null,
  retrySchedule: number[] | undefined,
  flags: { 'allow-private-webhooks'?: boolean; 'no-dispatcher'?: boolean },
  out: CliOutput,
): WebhookOptions & { dispatcher: boolean } {
  if (resolved === null) noteTo(out, `webhook delivery is off: ${WEBHOOK_KEY_HOW_TO_SET}`)
  // A key file still to be written is told about once it is (after listen).
  else if (resolved.note !== undefined && resolved.save === undefined) noteTo(out, resolved.note)
  return {
    ...(resolved === null ? {} : { secretKey: resolved.key }),
    allowPrivateDestinations: flags['allow-private-webhooks'] === true,
    ...(retrySchedule === undefined ? {} : { retrySchedule }),
    dispatcher: flags['no-dispatcher'] !== true,
  }
}

function retryScheduleFlag(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined
  try {
    return parseRetrySchedule(value)
  } catch (error) {
    throw new CliError(`--webhook-retry-schedule: ${(error as Error).message}, got "${value}"`, 2)
  }
}
