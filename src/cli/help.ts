import { renderHelp, type HelpTopic } from './help-format.js'

/** Commands in the order the overview lists them, each with its purpose in a line. */
const COMMANDS: readonly (readonly [name: string, purpose: string])[] = [
  ['seed', 'create a database and load the demo data set'],
  ['migrate', 'create the schema, or bring it to the latest version; no data'],
  ['serve', 'serve the API over a migrated database'],
  ['keys', 'create, list, disable, enable and revoke API keys'],
  ['modules', "switch a company's platform modules on or off"],
  ['webhooks', 'manage webhook endpoints and read their deliveries'],
]

/**
 * The help topics of a command: its own, and one per action (`keys create`). Each is loaded
 * from the command's module only when asked for, as the command itself is (main.ts): help and
 * a mistyped command answer without loading Fastify, Kysely or a driver.
 */
const TOPICS_OF: Readonly<Record<string, () => Promise<Readonly<Record<string, HelpTopic>>>>> = {
  seed: async () => ({ seed: (await import('./seed.js')).SEED_HELP }),
  migrate: async () => ({ migrate: (await import('./seed.js')).MIGRATE_HELP }),
  serve: async () => ({ serve: (await import('./serve.js')).SERVE_HELP }),
  keys: async () => (await import('./keys.js')).KEYS_HELP,
  modules: async () => (await import('./keys.js')).MODULES_HELP,
  webhooks: async () => (await import('./webhooks.js')).WEBHOOKS_HELP,
}

/** Whether `name` is a command. */
export function isCommand(name: string): boolean {
  return COMMANDS.some(([command]) => command === name)
}

/**
 * The help for `command [action]`: the action's own if it has one, else the command's, else
 * the overview.
 */
export async function helpFor(command: string | undefined, action: string | undefined): Promise<string> {
  const load = command === undefined || !Object.hasOwn(TOPICS_OF, command) ? undefined : TOPICS_OF[command]
  const topics = load === undefined ? {} : await load()
  const topic = (action === undefined ? undefined : topics[`${command} ${action}`]) ?? (command === undefined ? undefined : topics[command])
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
