import { renderHelp, type HelpTopic } from './help-format.js'
import { KEYS_HELP, MODULES_HELP } from './keys.js'
import { MIGRATE_HELP, SEED_HELP } from './seed.js'
import { SERVE_HELP } from './serve.js'
import { WEBHOOKS_HELP } from './webhooks.js'

/** Commands in the order the overview lists them, each with its purpose in a line. */
const COMMANDS: readonly (readonly [name: string, purpose: string])[] = [
  ['seed', 'create a database and load the demo data set'],
  ['migrate', 'create the schema, or bring it to the latest version; no data'],
  ['serve', 'serve the API over a migrated database'],
  ['keys', 'create, list, disable, enable and revoke API keys'],
  ['modules', "switch a company's platform modules on or off"],
  ['webhooks', 'manage webhook endpoints and read their deliveries'],
]

/** Every help topic: a command, or a command and its action (`keys create`). */
const HELP_TOPICS: Readonly<Record<string, HelpTopic>> = {
  seed: SEED_HELP,
  migrate: MIGRATE_HELP,
  serve: SERVE_HELP,
  ...KEYS_HELP,
  ...MODULES_HELP,
  ...WEBHOOKS_HELP,
}

/** Whether `name` is a command. */
export function isCommand(name: string): boolean {
  return COMMANDS.some(([command]) => command === name)
}

/**
 * The help for `command [action]`: the action's own if it has one, else the command's, else
 * the overview.
 */
export function helpFor(command: string | undefined, action: string | undefined): string {
  const topic = (action === undefined ? undefined : HELP_TOPICS[`${command} ${action}`]) ?? (command === undefined ? undefined : HELP_TOPICS[command])
  return topic === undefined ? overview() : renderHelp(topic)
}

/** The text of `workforce-api --help`. */
export function overview(): string {
  const width = Math.max(...COMMANDS.map(([name]) => name.length))
  return [
    'usage: workforce-api <command> [flags]',
    '',
    'commands:',
    ...COMMANDS.map(([name, purpose]) => `  ${name.padEnd(width)}  ${purpose}`),
    '',
    'flags:',
    "  -h, --help     this help; after a command, the command's (workforce-api keys create --help)",
    '  -v, --version  the version',
    '  --verbose      on failure, print the stack trace too',
    '',
    '--db is a SQLite file path or a postgres:// URL. seed and migrate create what is missing;',
    'the other commands need a database that exists and is migrated.',
    '',
    'getting started:',
    '  workforce-api seed --db demo.db',
    '  workforce-api keys create --db demo.db --company 1 --scopes all',
    '  workforce-api serve --db demo.db',
  ].join('\n')
}
