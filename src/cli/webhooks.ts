import { systemClock } from '../ports/clock.js'
import type { DeliveryPage, WebhookDeliveryWithAttempts } from '../ports/webhook-store.js'
import { ALL_EVENTS } from '../events/event-types.js'
import { EVENT_TYPES } from '../api/index.js'
import { checkDestination, WebhookDestinationError } from '../webhooks/destination.js'
import type { SecretBox } from '../webhooks/secret-box.js'
import { MAX_REPLAY_BATCH, ROTATION_OVERLAP_MS, WebhookAdminError, WebhookManager, type WebhookEndpoint } from '../webhooks/webhook-manager.js'
import { actionError, DB_FLAG, JSON_FLAG, parseFlags, positiveInteger, required } from './flags.js'
import { DB_EXISTING_FLAG, listLines, NOT_MIGRATED_NOTE, usageText, type HelpTopic } from './help-format.js'
import { CliError, describeDb, withAdapter, type CliAdapter } from './open-adapter.js'
import { noteTo, type CliOutput } from './output.js'
import { requireWebhookKey, SecretBoxOnFirstUse, usesKeyFile, WEBHOOK_KEY_ENV, WEBHOOK_KEY_FILE_SUFFIX } from './webhook-key.js'

const WEBHOOK_STATE_HELP: HelpTopic = {
  usage: ['workforce-api webhooks enable|disable|delete|rotate --db <file|postgres-url> --id <id> [--json]'],
  summary:
    'Enables or disables an endpoint, deletes it with its delivery history, or rotates its signing secret: the new ' +
    'secret is printed once, as the last line {"id","secret"}, and the previous one keeps signing beside it for 24 hours.',
  flags: [DB_EXISTING_FLAG, ['--id <id>', 'the endpoint id, as webhooks list shows it'], ['--json', 'print one JSON object and nothing else']],
}

export const WEBHOOKS_HELP: Readonly<Record<string, HelpTopic>> = {
  webhooks: {
    usage: [
      'workforce-api webhooks create --db <file|postgres-url> --company <id> --url <url> --events <a,b|all> [--description <text>] [--allow-private] [--json]',
      'workforce-api webhooks list --db <file|postgres-url> --company <id> [--json]',
      'workforce-api webhooks enable|disable|delete|rotate --db <file|postgres-url> --id <id> [--json]',
      'workforce-api webhooks deliveries --db <file|postgres-url> --id <id> [--limit N] [--before <id>] [--json]',
      'workforce-api webhooks replay --db <file|postgres-url> --id <id> --since <time> [--until <time>] [--json]',
    ],
    summary: `Manages webhook endpoints. create and rotate print the signing secret once, as the last line {"id","secret"}. ${NOT_MIGRATED_NOTE}`,
    sections: [
      {
        heading: 'signing secrets at rest',
        lines: [
          `Sealed with ${WEBHOOK_KEY_ENV} (base64 of 32 bytes: openssl rand -base64 32). If it is unset, a SQLite`,
          `database uses the key file <db>${WEBHOOK_KEY_FILE_SUFFIX}, created on first use; a Postgres database needs the variable,`,
          'the same for every command and serve instance.',
        ],
      },
      { heading: 'more', lines: ['workforce-api webhooks create --help, webhooks list --help, webhooks rotate --help, webhooks deliveries --help, webhooks replay --help'] },
    ],
  },
  'webhooks create': {
    usage: [
      'workforce-api webhooks create --db <file|postgres-url> --company <id> --url <url> --events <a,b|all> [--description <text>] [--allow-private] [--json]',
    ],
    summary: 'Creates an endpoint and prints its signing secret once, as the last line {"id","secret"}.',
    flags: [
      DB_EXISTING_FLAG,
      ['--company <id>', 'the company whose events it receives'],
      ['--url <url>', 'where deliveries are POSTed: https:// on a public address'],
      ['--events <a,b|all>', 'comma-separated event types (below), or all: every type, present and future'],
      ['--description <text>', 'a label for people'],
      ['--allow-private', 'accept http:// and private addresses (development only)'],
      ['--json', 'print one JSON object and nothing else'],
    ],
    sections: [{ heading: 'event types', lines: listLines(EVENT_TYPES) }],
    examples: ['workforce-api webhooks create --db demo.db --company 1 --url https://hooks.example.com/wf --events todos.created,todos.updated'],
  },
  'webhooks list': {
    usage: ['workforce-api webhooks list --db <file|postgres-url> --company <id> [--json]'],
    summary: "Lists a company's endpoints: id, status, events, URL, created, description.",
    flags: [DB_EXISTING_FLAG, ['--company <id>', 'the company'], ['--json', 'print one JSON object and nothing else']],
  },
  'webhooks enable': WEBHOOK_STATE_HELP,
  'webhooks disable': WEBHOOK_STATE_HELP,
  'webhooks delete': WEBHOOK_STATE_HELP,
  'webhooks rotate': WEBHOOK_STATE_HELP,
  'webhooks deliveries': {
    usage: ['workforce-api webhooks deliveries --db <file|postgres-url> --id <id> [--limit N] [--before <id>] [--json]'],
    summary: "An endpoint's deliveries, newest first, each with its attempts.",
    flags: [
      DB_EXISTING_FLAG,
      ['--id <id>', 'the endpoint id'],
      ['--limit <n>', 'deliveries per page'],
      ['--before <id>', 'the page after this delivery (the last line of a page names it)'],
      ['--json', 'print one JSON object and nothing else'],
    ],
  },
  'webhooks replay': {
    usage: ['workforce-api webhooks replay --db <file|postgres-url> --id <id> --since <time> [--until <time>] [--json]'],
    summary:
      'Sends an endpoint the retained events of a period it missed (it was disabled, or added later): every event of its types ' +
      'it never got or got only as a failed delivery. Delivered and pending ones are not sent twice. The events are queued in ' +
      `batches of ${MAX_REPLAY_BATCH}; a running serve sends them at its next poll, and a disabled endpoint once it is enabled.`,
    flags: [
      DB_EXISTING_FLAG,
      ['--id <id>', 'the endpoint id'],
      ['--since <time>', 'the start of the period, inclusive: ISO 8601 (2026-11-20T08:00:00Z)'],
      ['--until <time>', 'the end of the period, exclusive (default: now)'],
      ['--json', 'print one JSON object and nothing else'],
    ],
    examples: ['workforce-api webhooks replay --db demo.db --id we_… --since 2026-11-20T08:00:00Z --until 2026-11-21T08:00:00Z'],
  },
}

/** The flag that lifts the destination policy for development (`policy.allowPrivate`). */
const ALLOW_PRIVATE_FLAG = '--allow-private'

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
  const topic = action !== undefined && WEBHOOKS_HELP[`webhooks ${action}`] !== undefined ? `webhooks ${action}` : 'webhooks'
  const usage = usageText(topic, WEBHOOKS_HELP[topic] as HelpTopic)
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
      since: { type: 'string' },
      until: { type: 'string' },
    },
    usage,
  )
  if (topic === 'webhooks') throw actionError('webhooks', action, WEBHOOKS_HELP, usage)
  const db = required(flags.db, 'db', usage)
  // Flags first, so a usage error never touches the database or the key file.
  const byCompany = action === 'create' || action === 'list'
  const companyId = byCompany ? positiveInteger(required(flags.company, 'company', usage), 'company') : undefined
  const id = byCompany ? undefined : required(flags.id, 'id', usage)
  const events = action === 'create' ? eventList(required(flags.events, 'events', usage)) : undefined
  const url = action === 'create' ? required(flags.url, 'url', usage) : undefined
  if (url !== undefined) await checkUrlFlag(url, flags['allow-private'] === true)
  const page = action === 'deliveries' ? deliveryPage(flags.limit, flags.before) : undefined
  const since = action === 'replay' ? instant(required(flags.since, 'since', usage), 'since') : undefined
  const until = action === 'replay' && flags.until !== undefined ? instant(flags.until, 'until') : undefined
  // A bad WORKFORCE_WEBHOOK_KEY, or a Postgres database without one, is refused before anything is opened.
  const early = usesKeyFile(db) ? undefined : requireWebhookKey(db)
  const json = flags.json === true

  await withAdapter(db, async (adapter) => {
    // The key (and a new key file) only once a secret is sealed or opened: a command refused
    // for its input, or one that needs no secret (list), creates no key file.
    const box = new SecretBoxOnFirstUse(() => {
      const resolved = early ?? requireWebhookKey(db)
      if (resolved.note !== undefined) noteTo(out, resolved.note)
      return resolved.key
    })
    const manager = webhookManager(adapter, db, box, flags['allow-private'] === true)
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
        case 'replay': {
          const period = { since: since as Date, until: until ?? new Date(systemClock.now()) }
          // One short transaction per batch; each continues where the last stopped.
          let count = 0
          for (let more = true; more; ) {
            const batch = await manager.replay(id as string, period)
            count += batch.count
            more = batch.more
          }
          const endpoint = await manager.get(id as string)
          if (json) {
            out.json({ id, count, since: period.since.toISOString(), until: period.until.toISOString() })
            return
          }
          out.line(`${count} event(s) from ${period.since.toISOString()} until ${period.until.toISOString()} queued for ${id}`)
          if (count > 0) out.line(endpoint.status === 'enabled' ? 'A running serve sends them at its next poll.' : 'The endpoint is disabled: they are sent once it is enabled.')
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
function webhookManager(adapter: CliAdapter, db: string, box: SecretBox, allowPrivate: boolean): WebhookManager {
  if (adapter.webhooks === undefined) throw new CliError(`${describeDb(db)}: this adapter has no webhook store`)
  return new WebhookManager({ store: adapter.webhooks, box, clock: systemClock, policy: { allowPrivate }, wake: () => {} })
}

/**
 * `--url`, checked as the manager checks it (`checkDestination`) before anything is opened, so
 * that an http:// or private destination is refused with the flag that allows it.
 */
async function checkUrlFlag(url: string, allowPrivate: boolean): Promise<void> {
  try {
    await checkDestination(url, { allowPrivate })
  } catch (error) {
    if (!(error instanceof WebhookDestinationError)) throw error
    const hint = error.reason === 'not_https' || error.reason === 'private_address' ? `; for a receiver on this machine or a private network (development only), add ${ALLOW_PRIVATE_FLAG}` : ''
    throw new CliError(`--url ${error.message}, got "${url}"${hint}`, 2)
  }
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

/** An ISO 8601 time with a date, e.g. `2026-11-20T08:00:00Z`; anything else is a usage error. */
function instant(value: string, flag: string): Date {
  const at = new Date(value)
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(at.getTime())) throw new CliError(`--${flag} must be an ISO 8601 time (2026-11-20T08:00:00Z), got "${value}"`, 2)
  return at
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
