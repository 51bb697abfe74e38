import { systemClock } from '../ports/clock.js'
import type { DeliveryPage, WebhookDeliveryWithAttempts } from '../ports/webhook-store.js'
import { ALL_EVENTS } from '../webhooks/event-types.js'
import { SecretBox } from '../webhooks/secret-box.js'
import { ROTATION_OVERLAP_MS, WebhookAdminError, WebhookManager, type WebhookEndpoint } from '../webhooks/webhook-manager.js'
import { DB_FLAG, JSON_FLAG, noteTo, withAdapter, type CliOutput } from './commands.js'
import { parseFlags, positiveInteger, required } from './flags.js'
import { CliError, describeDb, type CliAdapter } from './open-adapter.js'
import { requireWebhookKey } from './webhook-key.js'

export const WEBHOOKS_USAGE =
  'workforce-api webhooks create --db X --company ID --url U --events a,b|all [--description S] [--allow-private] [--json]\n' +
  '       workforce-api webhooks list --db X --company ID [--json]\n' +
  '       workforce-api webhooks enable|disable|delete|rotate --db X --id ID [--json]\n' +
  '       workforce-api webhooks deliveries --db X --id ID [--limit N] [--before ID] [--json]'

/** `--events all` subscribes to every event type, present and future. */
const ALL_EVENTS_WORD = 'all'

/**
 * `workforce-api webhooks …`: a company's webhook endpoints, through the plugin's
 * `WebhookManager` (the same validation as `app.workforceApi.webhooks`).
 *
 * With `--json` stdout is one JSON object and nothing else. Without it, `create` and `rotate`
 * still end with the JSON line `{"id","secret"}`, so a script can read the secret either way.
 */
export async function webhooks(args: string[], out: CliOutput): Promise<void> {
  const [action, ...rest] = args
  const usage = WEBHOOKS_USAGE
  const flags = parseFlags(
    rest,
    {
      ...DB_FLAG,
      ...JSON_FLAG,
      company: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      'allow-private': { type: 'boolean' },
      id: { type: 'string' },
      limit: { type: 'string' },
      before: { type: 'string' },
    },
    usage,
  )
  if (!['create', 'list', 'enable', 'disable', 'delete', 'rotate', 'deliveries'].includes(action ?? '')) {
    throw new CliError(`unknown webhooks action "${action ?? ''}"\nusage: ${usage}`, 2)
  }
  const db = required(flags.db, 'db', usage)
  // Flags first, so a usage error never touches the database or the key file.
  const byCompany = action === 'create' || action === 'list'
  const companyId = byCompany ? positiveInteger(required(flags.company, 'company', usage), 'company') : undefined
  const id = byCompany ? undefined : required(flags.id, 'id', usage)
  const events = action === 'create' ? eventList(required(flags.events, 'events', usage)) : undefined
  const url = action === 'create' ? required(flags.url, 'url', usage) : undefined
  const page = action === 'deliveries' ? deliveryPage(flags.limit, flags.before) : undefined
  const resolved = requireWebhookKey(db)
  if (resolved.note !== undefined) noteTo(out, resolved.note)
  const json = flags.json === true

  await withAdapter(db, async (adapter) => {
    const manager = webhookManager(adapter, db, resolved.key, flags['allow-private'] === true)
    try {
      switch (action) {
        case 'create': {
          await requireCompany(adapter, companyId as number)
          const { endpoint, secret } = await manager.create({
            companyId: companyId as number,
            url: url as string,
            events: events as string[],
            description: flags.description ?? null,
          })
          if (!json) {
            out.line(describeEndpoint(endpoint))
            out.line('Store its signing secret (the "secret" below) now: it is shown only once.')
          }
          out.json({ id: endpoint.id, secret })
          return
        }
        case 'list': {
          await requireCompany(adapter, companyId as number)
          const endpoints = await manager.list(companyId as number)
          if (json) out.json({ endpoints })
          else for (const line of endpointTable(endpoints, companyId as number)) out.line(line)
          return
        }
        case 'enable':
        case 'disable': {
          const endpoint = await manager[action](id as string)
          if (json) out.json({ endpoint })
          else out.line(describeEndpoint(endpoint))
          return
        }
        case 'delete': {
          await manager.delete(id as string)
          if (json) out.json({ id, deleted: true })
          else out.line(`webhook endpoint ${id} deleted, with its delivery history`)
          return
        }
        case 'rotate': {
          const { endpoint, secret } = await manager.rotateSecret(id as string)
          if (!json) {
            const until = new Date(endpoint.updated_at.getTime() + ROTATION_OVERLAP_MS).toISOString()
            out.line(`new signing secret for ${endpoint.id}; the previous one keeps signing beside it until ${until} (24 hours)`)
            out.line('Store the new secret (the "secret" below) now: it is shown only once.')
          }
          out.json({ id: endpoint.id, secret })
          return
        }
        case 'deliveries': {
          const found = await manager.deliveries(id as string, page)
          if (json) out.json(found)
          else for (const line of deliveryLines(found)) out.line(line)
          return
        }
      }
    } catch (error) {
      if (error instanceof WebhookAdminError) throw new CliError(error.message, error.reason === 'invalid_input' ? 2 : 1)
      throw error
    }
  })
}

/**
 * The plugin's manager over the adapter's webhook store, built as `keys` builds its
 * `KeyManager`. This process runs no dispatcher: `serve` finds what becomes due by polling.
 */
function webhookManager(adapter: CliAdapter, db: string, key: string, allowPrivate: boolean): WebhookManager {
  if (adapter.webhooks === undefined) throw new CliError(`${describeDb(db)}: this adapter has no webhook store`)
  return new WebhookManager({ store: adapter.webhooks, box: new SecretBox(key), clock: systemClock, policy: { allowPrivate }, wake: () => {} })
}

async function requireCompany(adapter: CliAdapter, companyId: number): Promise<void> {
  if ((await adapter.storage.company(companyId)) === null) throw new CliError(`no company with id ${companyId}`)
}

/** `a,b` → `['a', 'b']`; `all` → `['*']`. The manager refuses unknown types, naming them. */
function eventList(text: string): string[] {
  return text
    .split(',')
    .map((event) => event.trim())
    .filter((event) => event !== '')
    .map((event) => (event === ALL_EVENTS_WORD ? ALL_EVENTS : event))
}

function deliveryPage(limit: string | undefined, before: string | undefined): { limit?: number; before?: number } {
  return {
    ...(limit === undefined ? {} : { limit: positiveInteger(limit, 'limit') }),
    ...(before === undefined ? {} : { before: positiveInteger(before, 'before') }),
  }
}

function describeEndpoint(endpoint: WebhookEndpoint): string {
  const status = endpoint.status === 'disabled' ? `disabled (${endpoint.disabled_reason ?? 'manual'})` : 'enabled'
  return `webhook endpoint ${endpoint.id} for company ${endpoint.company_id}: ${endpoint.url}  ${status}  events ${endpoint.events.join(',')}`
}

function endpointTable(endpoints: readonly WebhookEndpoint[], companyId: number): string[] {
  if (endpoints.length === 0) return [`no webhook endpoints for company ${companyId}`]
  const rows = [
    ['ID', 'STATUS', 'EVENTS', 'URL', 'CREATED', 'DESCRIPTION'],
    ...endpoints.map((endpoint) => [
      endpoint.id,
      endpoint.status === 'disabled' ? `disabled:${endpoint.disabled_reason ?? 'manual'}` : endpoint.failing_since === null ? 'enabled' : 'enabled:failing',
      endpoint.events.join(','),
      endpoint.url,
      endpoint.created_at.toISOString(),
      endpoint.description ?? '',
    ]),
  ]
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd())
}

function deliveryLines(page: DeliveryPage): string[] {
  if (page.deliveries.length === 0) return ['no deliveries']
  const lines = page.deliveries.flatMap((delivery) => [describeDelivery(delivery), ...delivery.attempts_made.map((attempt) => {
    const outcome = attempt.status_code === null ? (attempt.error ?? 'no response') : `HTTP ${attempt.status_code}`
    return `    attempt ${attempt.number}  ${attempt.attempted_at.toISOString()}  ${outcome}  ${attempt.duration_ms} ms`
  })])
  const last = page.deliveries[page.deliveries.length - 1]!
  if (page.has_more) lines.push(`older deliveries follow: --before ${last.id}`)
  return lines
}

function describeDelivery(delivery: WebhookDeliveryWithAttempts): string {
  const next = delivery.next_attempt_at === null ? '' : `  next attempt ${delivery.next_attempt_at.toISOString()}`
  return `${delivery.id}  ${delivery.event_id}  ${delivery.event_type}  ${delivery.status}  ${delivery.attempts} attempt(s)  created ${delivery.created_at.toISOString()}${next}`
}
