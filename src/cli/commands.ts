import Fastify from 'fastify'
import { KeyManagementError, KeyManager, type ApiKeyInfo } from '../keys/key-manager.js'
import { handleError, handleNotFound } from '../corridor/render.js'
import { LOG_REDACT_PATHS } from '../logging.js'
import { workforceApi } from '../plugin.js'
import { systemClock } from '../ports/clock.js'
import { portsOf } from '../ports/index.js'
import { PLATFORM_MODULES, type PlatformModule } from '../ports/module-registry.js'
import { WorkforceOptionError } from '../errors.js'
import type { WebhookOptions } from '../options.js'
import { generateDataset, SEED_COMPANIES } from '../seed/generate.js'
import { parseInstant } from '../time/calendar.js'
import { registerHealthRoutes, workforceReadiness } from '../server/health.js'
import { hardenWorkforceServer, workforceServerOptions, type ServerLimits } from '../server/server-limits.js'
import { parseRetrySchedule } from '../webhooks/retry.js'
import { booleanFlag, durationFlag, parseFlags, positiveInteger, required } from './flags.js'
import { CliError, describeDb, openAdapter, type CliAdapter } from './open-adapter.js'
import { resolveWebhookKey, WEBHOOK_KEY_HOW_TO_SET } from './webhook-key.js'

/** Where a command writes: human lines, then (with --json) one JSON object as the last line. */
export interface CliOutput {
  line(text: string): void
  json(value: unknown): void
  /** A notice for the operator, kept off stdout so scripts that read stdout never see it. Default: stderr. */
  note?(text: string): void
}

export const DB_FLAG = { db: { type: 'string' } } as const
export const JSON_FLAG = { json: { type: 'boolean' } } as const

/** Writes `text` through `out.note`, or to stderr. */
export function noteTo(out: CliOutput, text: string): void {
  if (out.note === undefined) process.stderr.write(`workforce-api: ${text}\n`)
  else out.note(text)
}

export async function withAdapter<T>(db: string, run: (adapter: CliAdapter) => Promise<T>): Promise<T> {
  const adapter = await openAdapter(db)
  try {
    return await run(adapter)
  } finally {
    await adapter.close()
  }
}

export async function seed(args: string[], out: CliOutput): Promise<void> {
  const usage = 'workforce-api seed --db <file|postgres-url> [--scale N] [--json]'
  const flags = parseFlags(args, { ...DB_FLAG, ...JSON_FLAG, scale: { type: 'string' } }, usage)
  const db = required(flags.db, 'db', usage)
  const scale = flags.scale === undefined ? undefined : positiveInteger(flags.scale, 'scale')
  if (scale !== undefined && scale < 40) throw new CliError('--scale must be at least 40', 2)
  await withAdapter(db, async (adapter) => {
    if ((await adapter.storage.company(SEED_COMPANIES[0]!.id)) !== null) {
      throw new CliError(`${describeDb(db)} already holds seed data; seed an empty database`)
    }
    const dataset = generateDataset({ scale })
    await adapter.loadDataset(dataset)
    const companies = dataset.companies.map(({ id, name, timezone }) => ({ id, name, timezone }))
    for (const company of companies) out.line(`company ${company.id}: ${company.name} (${company.timezone})`)
    if (flags.json) out.json({ companies })
  })
}

export async function keys(args: string[], out: CliOutput): Promise<void> {
  const [action, ...rest] = args
  const usage =
    'workforce-api keys create --db X --company ID --scopes a,b|all [--expires-at ISO] [--name S] [--rate-limit N] [--json]\n' +
    '       workforce-api keys list --db X [--company ID] [--json]\n' +
    '       workforce-api keys disable|enable|revoke --db X --key-id ID [--json]'
  const flags = parseFlags(
    rest,
    {
      ...DB_FLAG,
      ...JSON_FLAG,
      company: { type: 'string' },
      scopes: { type: 'string' },
      'expires-at': { type: 'string' },
      name: { type: 'string' },
      'rate-limit': { type: 'string' },
      'key-id': { type: 'string' },
    },
    usage,
  )
  const db = required(flags.db, 'db', usage)
  await withAdapter(db, async (adapter) => {
    const manager = new KeyManager(adapter.keyStore, systemClock)
    try {
      switch (action) {
        case 'create': {
          const expiresAt = flags['expires-at'] === undefined ? null : parseInstant(flags['expires-at'])
          if (expiresAt === null && flags['expires-at'] !== undefined) {
            throw new CliError('--expires-at must be an ISO 8601 timestamp with Z or an offset', 2)
          }
          const companyId = positiveInteger(required(flags.company, 'company', usage), 'company')
          if ((await adapter.storage.company(companyId)) === null) throw new CliError(`no company with id ${companyId}`)
          const { key, info } = await manager.create({
            companyId,
            scopes: required(flags.scopes, 'scopes', usage).split(','),
            expiresAt,
            name: flags.name ?? null,
            rateLimit: flags['rate-limit'] === undefined ? null : positiveInteger(flags['rate-limit'], 'rate-limit'),
          })
          out.line(`key ${info.key_id} for company ${companyId} (${info.scopes.join(', ')})`)
          out.line(`${key}`)
          out.line('Store this key now: it is shown only once.')
          if (flags.json) out.json({ key, key_id: info.key_id })
          return
        }
        case 'list': {
          const companyId = flags.company === undefined ? undefined : positiveInteger(flags.company, 'company')
          const list = await manager.list({ companyId })
          for (const info of list) out.line(describeKey(info))
          if (flags.json) out.json({ keys: list })
          return
        }
        case 'disable':
        case 'enable':
        case 'revoke': {
          const info = await manager[action](required(flags['key-id'], 'key-id', usage))
          out.line(describeKey(info))
          if (flags.json) out.json({ key: info })
          return
        }
        default:
          throw new CliError(`unknown keys action "${action ?? ''}"\nusage: ${usage}`, 2)
      }
    } catch (error) {
      if (error instanceof KeyManagementError) throw new CliError(error.message, error.reason === 'invalid_input' ? 2 : 1)
      throw error
    }
  })
}

function describeKey(info: ApiKeyInfo): string {
  const expiry = info.expires_at === null ? 'never expires' : `expires ${info.expires_at}`
  return `${info.key_id}  company ${info.company_id}  ${info.state}  ${expiry}  ${info.name ?? ''}  [${info.scopes.join(',')}]`.trimEnd()
}

export async function modules(args: string[], out: CliOutput): Promise<void> {
  const [action, ...rest] = args
  const usage = 'workforce-api modules set --db X --company ID --module core|projects|todo --active true|false [--json]'
  if (action !== 'set') throw new CliError(`unknown modules action "${action ?? ''}"\nusage: ${usage}`, 2)
  const flags = parseFlags(rest, { ...DB_FLAG, ...JSON_FLAG, company: { type: 'string' }, module: { type: 'string' }, active: { type: 'string' } }, usage)
  const db = required(flags.db, 'db', usage)
  const companyId = positiveInteger(required(flags.company, 'company', usage), 'company')
  const module = required(flags.module, 'module', usage)
  if (!(PLATFORM_MODULES as readonly string[]).includes(module)) {
    throw new CliError(`--module must be one of ${PLATFORM_MODULES.join(', ')}, got "${module}"`, 2)
  }
  const active = booleanFlag(required(flags.active, 'active', usage), 'active')
  await withAdapter(db, async (adapter) => {
    if ((await adapter.storage.company(companyId)) === null) throw new CliError(`no company with id ${companyId}`)
    await adapter.modules.setActive(companyId, module as PlatformModule, active)
    out.line(`module ${module} is now ${active ? 'active' : 'inactive'} for company ${companyId}`)
    if (flags.json) out.json({ company_id: companyId, module, active })
  })
}

export const DEFAULT_PORT = 3000
export const DEFAULT_HOST = '127.0.0.1'
/** How long `serve` lets in-flight requests finish after SIGTERM or SIGINT. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000

/** Starts a server; resolves with a `close()` once it listens (the CLI keeps it open until a signal). */
export async function serve(args: string[], out: CliOutput): Promise<{ url: string; close(): Promise<void> }> {
  const usage =
    'workforce-api serve --db <file|postgres-url> [--port N] [--host H] [--redis URL] [--rate-limit 600] [--rate-limit-window 60s] ' +
    '[--request-timeout 30s] [--headers-timeout 10s] [--keep-alive-timeout 5s] [--socket-timeout 60s] [--max-connections 1000] ' +
    '[--shutdown-timeout 10s] [--allow-private-webhooks] [--webhook-retry-schedule 5s,5m,30m,2h,5h,10h,10h] [--no-dispatcher]'
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
  const shutdownMs = flags['shutdown-timeout'] === undefined ? DEFAULT_SHUTDOWN_TIMEOUT_MS : durationFlag(flags['shutdown-timeout'], 'shutdown-timeout')
  const webhookOptions = serveWebhookOptions(db, flags, out)
  const adapter = await openAdapter(db)
  const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info', redact: LOG_REDACT_PATHS }, ...workforceServerOptions(limits) })
  try {
    // This process owns the whole URL space: answer outside the prefix in the envelope too.
    hardenWorkforceServer(app, limits)
    app.setNotFoundHandler(handleNotFound)
    app.setErrorHandler(handleError)
    registerHealthRoutes(app, () => workforceReadiness(adapter))
    await app.register(workforceApi, {
      prefix: '/api/public',
      ...portsOf(adapter),
      rateLimit,
      webhookOptions,
    })
    await app.listen({ port, host: flags.host ?? DEFAULT_HOST })
  } catch (error) {
    await app.close()
    await adapter.close()
    // An option the plugin refuses (a retry schedule too long, say) is the operator's to fix.
    if (error instanceof WorkforceOptionError) throw new CliError(error.message, 2)
    throw error
  }
  const address = app.server.address()
  const actualPort = typeof address === 'object' && address !== null ? address.port : port
  const host = flags.host ?? DEFAULT_HOST
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`
  out.line(`workforce-api listening on ${url} (API at ${url}/api/public/v1)`)
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

/**
 * `serve`'s webhook settings. The secret key is resolved as `webhooks` commands resolve it, so
 * this instance opens the secrets they sealed. A Postgres database without
 * `WORKFORCE_WEBHOOK_KEY` still serves the API (events are recorded, not delivered): webhooks
 * are optional, and `serve` on Postgres ran without a key before they existed.
 */
function serveWebhookOptions(
  db: string,
  flags: { 'allow-private-webhooks'?: boolean; 'webhook-retry-schedule'?: string; 'no-dispatcher'?: boolean },
  out: CliOutput,
): WebhookOptions & { dispatcher: boolean } {
  let retrySchedule: number[] | undefined
  if (flags['webhook-retry-schedule'] !== undefined) {
    try {
      retrySchedule = parseRetrySchedule(flags['webhook-retry-schedule'])
    } catch (error) {
      throw new CliError(`--webhook-retry-schedule: ${(error as Error).message}, got "${flags['webhook-retry-schedule']}"`, 2)
    }
  }
  const resolved = resolveWebhookKey(db)
  if (resolved === null) noteTo(out, `webhook delivery is off: ${WEBHOOK_KEY_HOW_TO_SET}`)
  else if (resolved.note !== undefined) noteTo(out, resolved.note)
  return {
    ...(resolved === null ? {} : { secretKey: resolved.key }),
    allowPrivateDestinations: flags['allow-private-webhooks'] === true,
    ...(retrySchedule === undefined ? {} : { retrySchedule }),
    dispatcher: flags['no-dispatcher'] !== true,
  }
}
