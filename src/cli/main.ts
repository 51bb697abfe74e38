#!/usr/bin/env node
import { closestName } from '../closest-name.js'
import { CliError } from './cli-error.js'
import { describeFailure, describeStack, exitCodeOf } from './failure.js'
import { helpFor, isCommand, overview } from './help.js'
import type { CliOutput } from './output.js'
import { packageVersion } from './version.js'

const HELP_FLAGS = ['-h', '--help']
const VERSION_FLAGS = ['-v', '--version']
const VERBOSE_FLAG = '--verbose'

const out: CliOutput = {
  line: (text) => process.stdout.write(`${text}\n`),
  json: (value) => process.stdout.write(`${JSON.stringify(value)}\n`),
  note: (text) => process.stderr.write(`workforce-api: ${text}\n`),
  interactive: process.stdout.isTTY === true && process.stderr.isTTY === true,
}

type Command = (args: string[], out: CliOutput) => Promise<void>

/**
 * Each command's module is loaded when that command runs: `keys` never loads Fastify, and
 * `--help`, `--version` or a typo load none of them (about 0.1 s of CPU instead of 0.5).
 */
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  seed: async () => (await import('./seed.js')).seed,
  migrate: async () => (await import('./seed.js')).migrate,
  keys: async () => (await import('./keys.js')).keys,
  modules: async () => (await import('./keys.js')).modules,
  webhooks: async () => (await import('./webhooks.js')).webhooks,
  serve: async () => serveUntilSignalled,
}

async function main(args: string[]): Promise<void> {
  const [command, ...rest] = args
  if (command === undefined) {
    out.line(overview())
    process.exitCode = 2
    return
  }
  if (VERSION_FLAGS.includes(command)) return out.line(packageVersion())
  if (HELP_FLAGS.includes(command) || command === 'help') return out.line(await helpFor(rest[0], rest[1]))
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined
  if (load === undefined || !isCommand(command)) {
    const closest = closestName(command, Object.keys(COMMANDS))
    throw new CliError(`unknown command "${command}"${closest === undefined ? '' : ` (did you mean "${closest}"?)`}; run 'workforce-api --help' for the commands`, 2)
  }
  // Help wins over everything else on the line, as in git and npm: `keys create --db x --help` helps.
  if (rest.some((arg) => HELP_FLAGS.includes(arg))) {
    const action = rest[0] !== undefined && !rest[0].startsWith('-') ? rest[0] : undefined
    return out.line(await helpFor(command, action))
  }
  const run = await load()
  await run(rest, out)
}

/** `serve`, kept running until SIGINT or SIGTERM, then shut down gracefully. */
async function serveUntilSignalled(args: string[], output: CliOutput): Promise<void> {
  const { serve } = await import('./serve.js')
  const server = await serve(args, output)
  const stop = (signal: NodeJS.Signals) => {
    process.stderr.write(`workforce-api: ${signal}: finishing in-flight requests, then exiting\n`)
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`workforce-api: shutdown failed: ${describeFailure(error, undefined)}\n`)
        process.exit(1)
      },
    )
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

/** The `--db` value on the command line, for failure messages. */
function dbOf(args: readonly string[]): string | undefined {
  for (const [index, arg] of args.entries()) {
    if (arg === '--db') return args[index + 1]
    if (arg.startsWith('--db=')) return arg.slice('--db='.length)
  }
  return undefined
}

const argv = process.argv.slice(2)
const verbose = argv.includes(VERBOSE_FLAG)
const args = argv.filter((arg) => arg !== VERBOSE_FLAG)
main(args).catch((error: unknown) => {
  // One line (a usage error adds its usage); the stack only when asked for.
  process.stderr.write(`workforce-api: ${describeFailure(error, dbOf(args))}\n`)
  if (verbose && !(error instanceof CliError)) process.stderr.write(`${describeStack(error)}\n`)
  process.exitCode = exitCodeOf(error)
})
