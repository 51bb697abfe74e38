import { KeyManagementError, KeyManager, MAX_KEY_EXPIRY, normaliseScopes, type ApiKeyInfo } from '../keys/key-manager.js'
import { systemClock } from '../ports/clock.js'
import { PLATFORM_MODULES, type PlatformModule } from '../ports/module-registry.js'
import { ALL_SCOPES } from '../scopes.js'
import { parseInstant } from '../time/calendar.js'
import { actionError, booleanFlag, DB_FLAG, JSON_FLAG, parseFlags, positiveInteger, required } from './flags.js'
import { DB_EXISTING_FLAG, jsonOnlyFlag, listLines, NOT_MIGRATED_NOTE, usageText, type HelpTopic } from './help-format.js'
import { CliError, withAdapter } from './open-adapter.js'
import { jsonOnly, type CliOutput } from './output.js'

const KEY_STATE_HELP: HelpTopic = {
  usage: ['workforce-api keys disable|enable|revoke --db <file|postgres-url> --key-id <id> [--json]'],
  summary: 'Disables a key (refused until enabled again), enables it, or revokes it for good. Running servers see the change within seconds.',
  flags: [DB_EXISTING_FLAG, ['--key-id <id>', 'the key id (16 hex digits: owk_<key-id>_…), as keys list shows it'], jsonOnlyFlag('{"key":{…}}')],
  examples: ['workforce-api keys disable --db demo.db --key-id 3f2a9c0d1e4b5a6f'],
}

export const KEYS_HELP: Readonly<Record<string, HelpTopic>> = {
  keys: {
    usage: [
      'workforce-api keys create --db <file|postgres-url> --company <id> --scopes <a,b|all> [flags]',
      'workforce-api keys list --db <file|postgres-url> [--company <id>] [--json]',
      'workforce-api keys disable|enable|revoke --db <file|postgres-url> --key-id <id> [--json]',
    ],
    summary: `Manages API keys. A key is shown once, when it is created; keys list never shows it. ${NOT_MIGRATED_NOTE}`,
    sections: [{ heading: 'more', lines: ['workforce-api keys create --help, keys list --help, keys revoke --help'] }],
  },
  'keys create': {
    usage: ['workforce-api keys create --db <file|postgres-url> --company <id> --scopes <a,b|all> [--expires-at <iso>] [--name <text>] [--rate-limit N] [--json]'],
    summary: 'Creates an API key for a company and prints it once: store it then.',
    flags: [
      DB_EXISTING_FLAG,
      ['--company <id>', 'the company the key reads and writes for'],
      ['--scopes <a,b|all>', 'comma-separated scopes (below), or all'],
      ['--expires-at <iso>', 'when the key stops working, in the future and at the latest 9999-12-31T23:59:59.999Z: ISO 8601 with Z or an offset (default never)'],
      ['--name <text>', 'a label for people (keys list shows it)'],
      ['--rate-limit <n>', "this key's requests per window, instead of the server's"],
      jsonOnlyFlag('{"key","key_id"}'),
    ],
    sections: [{ heading: 'scopes', lines: listLines(ALL_SCOPES) }],
    examples: [
      'workforce-api keys create --db demo.db --company 1 --scopes users:read,shifts:read --name reporting',
      'workforce-api keys create --db demo.db --company 2 --scopes all --expires-at 2030-01-01T00:00:00Z --json',
    ],
  },
  'keys list': {
    usage: ['workforce-api keys list --db <file|postgres-url> [--company <id>] [--json]'],
    summary: 'Lists keys, never their secrets: id, company, state, expiry, name and scopes.',
    flags: [DB_EXISTING_FLAG, ['--company <id>', "only this company's keys"], jsonOnlyFlag('{"keys":[…]}')],
  },
  'keys disable': KEY_STATE_HELP,
  'keys enable': KEY_STATE_HELP,
  'keys revoke': KEY_STATE_HELP,
}

const MODULES_SET_HELP: HelpTopic = {
  usage: ['workforce-api modules set --db <file|postgres-url> --company <id> --module <module> --active true|false [--json]'],
  summary: "Switches a company's platform module on or off; routes of an inactive module answer 403. Running servers see the change within seconds.",
  flags: [
    DB_EXISTING_FLAG,
    ['--company <id>', 'the company'],
    ['--module <module>', `one of ${PLATFORM_MODULES.join(', ')}`],
    ['--active true|false', 'on or off'],
    jsonOnlyFlag('{"company_id","module","active"}'),
  ],
  examples: ['workforce-api modules set --db demo.db --company 1 --module todo --active false'],
}

export const MODULES_HELP: Readonly<Record<string, HelpTopic>> = {
  modules: { ...MODULES_SET_HELP, summary: `${MODULES_SET_HELP.summary} ${NOT_MIGRATED_NOTE}` },
  'modules set': MODULES_SET_HELP,
}

/** `workforce-api keys create|list|disable|enable|revoke`, through the plugin's `KeyManager`. */
export async function keys(args: string[], output: CliOutput): Promise<void> {
  const [action, ...rest] = args
  const topic = action !== undefined && KEYS_HELP[`keys ${action}`] !== undefined ? `keys ${action}` : 'keys'
  const usage = usageText(topic, KEYS_HELP[topic] as HelpTopic)
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
  if (topic === 'keys') throw actionError('keys', action, KEYS_HELP, usage)
  const out = jsonOnly(output, flags.json)
  const db = required(flags.db, 'db', usage)
  // Flags first, so a usage error never touches the database.
  const create = action === 'create' ? createInput(flags, usage) : undefined
  await withAdapter(db, async (adapter) => {
    const manager = new KeyManager(adapter.keyStore, systemClock)
    try {
      switch (action) {
        case 'create': {
          const input = create as NonNullable<typeof create>
          if ((await adapter.storage.company(input.companyId)) === null) throw new CliError(`no company with id ${input.companyId}`)
          const { key, info } = await manager.create(input)
          out.line(`key ${info.key_id} for company ${input.companyId} (${info.scopes.join(', ')})`)
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
        default: {
          const state = action as 'disable' | 'enable' | 'revoke'
          const info = await manager[state](required(flags['key-id'], 'key-id', usage))
          out.line(describeKey(info))
          if (flags.json) out.json({ key: info })
          return
        }
      }
    } catch (error) {
      if (error instanceof KeyManagementError) throw new CliError(error.message, error.reason === 'invalid_input' ? 2 : 1)
      throw error
    }
  })
}

/** `keys create`'s flags, checked; an expiry in the past is refused (the key could never authenticate). */
function createInput(
  flags: { company?: string; scopes?: string; 'expires-at'?: string; name?: string; 'rate-limit'?: string },
  usage: string,
) {
  const companyId = positiveInteger(required(flags.company, 'company', usage), 'company')
  let scopes: ReturnType<typeof normaliseScopes>
  try {
    scopes = normaliseScopes(required(flags.scopes, 'scopes', usage).split(','))
  } catch (error) {
    if (error instanceof KeyManagementError) throw new CliError(error.message, 2)
    throw error
  }
  let expiresAt: Date | null = null
  if (flags['expires-at'] !== undefined) {
    expiresAt = parseInstant(flags['expires-at'])
    if (expiresAt === null) {
      throw new CliError(
        `--expires-at must be an ISO 8601 timestamp with Z or an offset, at the latest ${MAX_KEY_EXPIRY.toISOString()} once in UTC, such as 2030-01-01T00:00:00Z`,
        2,
      )
    }
    if (expiresAt.getTime() <= systemClock.now()) {
      throw new CliError(`--expires-at ${flags['expires-at']} is in the past: the key would never work; give a future instant, or none for a key that does not expire`, 2)
    }
  }
  return {
    companyId,
    scopes,
    expiresAt,
    name: flags.name ?? null,
    rateLimit: flags['rate-limit'] === undefined ? null : positiveInteger(flags['rate-limit'], 'rate-limit'),
  }
}

function describeKey(info: ApiKeyInfo): string {
  const expiry = info.expires_at === null ? 'never expires' : `expires ${info.expires_at}`
  return `${info.key_id}  company ${info.company_id}  ${info.state}  ${expiry}  ${info.name ?? ''}  [${info.scopes.join(',')}]`.trimEnd()
}

/** `workforce-api modules set`. */
export async function modules(args: string[], output: CliOutput): Promise<void> {
  const [action, ...rest] = args
  const usage = usageText('modules set', MODULES_SET_HELP)
  if (action !== 'set') throw actionError('modules', action, MODULES_HELP, usage)
  const flags = parseFlags(rest, { ...DB_FLAG, ...JSON_FLAG, company: { type: 'string' }, module: { type: 'string' }, active: { type: 'string' } }, usage)
  const out = jsonOnly(output, flags.json)
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
